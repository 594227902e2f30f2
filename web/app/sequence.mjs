// The sequence the page shows: prompt + generated token ids, their texts, and their attention.
//
// Attention is kept as one row per query position q: rows[q] is (n_layer, n_head, q+1) over keys
// 0..q, which is exactly the shape of a generation step's `attention` (that step's position is
// q+1). A prompt's forward pass (n_layer, n_head, T, T) is cut into such rows. They are stored as
// 16-bit fixed point (p * 65535, within 7.7e-6 of the probability: finer than the 4 decimals the
// page shows): the rows of GPT-2 small at 1,024 tokens take 151 MB instead of 302 MB as floats.
//
// The last generated token's own row would only arrive with the step after it; when generation
// ends that row stays empty (shown as "not computed") instead of running one more full forward
// pass over the whole sequence, which on a large model costs as much as the generation itself.
export class Sequence {
  ids = [];
  texts = [];
  rows = [];
  promptLength = 0;

  constructor(layers, heads) {
    this.layers = layers;
    this.heads = heads;
  }

  get length() {
    return this.ids.length;
  }

  setPrompt(ids, texts) {
    this.ids = ids.slice();
    this.texts = texts.slice();
    this.rows = [];
    this.promptLength = ids.length;
  }

  // attention: (n_layer, n_head, T, T) from forward(ids, {attention: true}), T = prompt length.
  setPromptAttention(attention) {
    const T = this.promptLength, LH = this.layers * this.heads;
    if (attention.length !== LH * T * T) throw new Error(`attention has ${attention.length} values, expected ${LH * T * T}`);
    for (let q = 0; q < T; ++q) {
      const row = new Uint16Array(LH * (q + 1));
      for (let lh = 0; lh < LH; ++lh) {
        const from = (lh * T + q) * T, to = lh * (q + 1);
        for (let k = 0; k <= q; ++k) row[to + k] = fixed(attention[from + k]);
      }
      this.rows[q] = row;
    }
  }

  // Back to the prompt alone (before a new generation).
  truncateToPrompt() {
    this.ids.length = this.promptLength;
    this.texts.length = this.promptLength;
    this.rows.length = Math.min(this.rows.length, this.promptLength);
  }

  // A generated token at `position`, with the attention row of the query that produced it (q = position - 1).
  addStep(id, text, position, attention) {
    if (position !== this.ids.length) throw new Error(`step at position ${position}, but the sequence has ${this.ids.length} tokens`);
    this.ids.push(id);
    this.texts.push(text);
    if (attention && attention.length === this.layers * this.heads * position) this.rows[position - 1] = Uint16Array.from(attention, fixed);
  }

  hasRow(q) {
    return this.rows[q] !== undefined;
  }

  // Attention of query q over keys 0..q for one layer and head (Float32Array), or null if not computed.
  row(layer, head, q) {
    const r = this.rows[q];
    if (!r) return null;
    const start = (layer * this.heads + head) * (q + 1);
    return Float32Array.from(r.subarray(start, start + q + 1), (v) => v / 65535);
  }

  // The value of one cell, or NaN above the diagonal / for a row not computed.
  value(layer, head, q, k) {
    if (k > q) return NaN;
    const r = this.rows[q];
    return r ? r[(layer * this.heads + head) * (q + 1) + k] / 65535 : NaN;
  }

  isGenerated(i) {
    return i >= this.promptLength;
  }
}

const fixed = (p) => Math.round(Math.min(1, Math.max(0, p)) * 65535);
