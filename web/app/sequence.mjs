// The sequence the page shows: prompt + generated token ids, their texts, and their attention.
//
// Attention is kept as one row per query position q: rows[q] is {start, data}, data (n_layer,
// n_head, q+1-start) over keys start..q, which is exactly the shape of a generation step's
// `attention` (that step's position is q+1, its windowStart is start). A prompt's forward pass
// (n_layer, n_head, T, T) is cut into such rows (start 0). Keys before `start` are tokens the
// model no longer saw: the context was full and slid (GenerateOptions.contextFull 'slide'). Rows
// are stored as 16-bit fixed point (p * 65535, within 7.7e-6 of the probability: finer than the 4
// decimals the page shows): the rows of GPT-2 small at 1,024 tokens take 151 MB, not 302 as floats.
//
// Only the rows of the last `keepRows` queries (one context's worth) are kept, so that a long
// generation holds at most one context of attention however many tokens it produces.
//
// The last generated token's own row would only arrive with the step after it; when generation
// ends that row stays empty (shown as "not computed") instead of running one more full forward
// pass over the whole sequence, which on a large model costs as much as the generation itself.
export class Sequence {
  ids = [];
  texts = [];
  rows = [];
  promptLength = 0;

  firstKept = 0;   // rows of queries before this one were let go

  constructor(layers, heads, keepRows = Infinity) {
    this.layers = layers;
    this.heads = heads;
    this.keepRows = keepRows;
  }

  get length() {
    return this.ids.length;
  }

  setPrompt(ids, texts) {
    this.ids = ids.slice();
    this.texts = texts.slice();
    this.rows = [];
    this.firstKept = 0;
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
      this.rows[q] = { start: 0, data: row };
    }
  }

  // Back to the prompt alone (before a new generation).
  truncateToPrompt() {
    this.ids.length = this.promptLength;
    this.texts.length = this.promptLength;
    this.rows.length = Math.min(this.rows.length, this.promptLength);
  }

  // A generated token at `position`, with the attention row of the query that produced it
  // (q = position - 1) over keys windowStart..q.
  addStep(id, text, position, attention, windowStart = 0) {
    if (position !== this.ids.length) throw new Error(`step at position ${position}, but the sequence has ${this.ids.length} tokens`);
    this.ids.push(id);
    this.texts.push(text);
    if (attention && attention.length === this.layers * this.heads * (position - windowStart))
      this.rows[position - 1] = { start: windowStart, data: toFixed(attention) };
    for (; this.firstKept < position - this.keepRows; ++this.firstKept) delete this.rows[this.firstKept];
  }

  hasRow(q) {
    return this.rows[q] !== undefined;
  }

  // True when query q's row was let go (keepRows), as opposed to not computed yet.
  wasDropped(q) {
    return q < this.firstKept;
  }

  // The first key query q's row covers (keys before it were outside the model's window).
  windowStart(q) {
    return this.rows[q]?.start ?? 0;
  }

  // Attention of query q over keys 0..q for one layer and head (Float32Array; 0 for keys outside
  // the window, which the model did not see), or null if not computed or not kept.
  row(layer, head, q) {
    const r = this.rows[q];
    if (!r) return null;
    const n = q + 1 - r.start, from = (layer * this.heads + head) * n;
    const out = new Float32Array(q + 1);
    for (let k = 0; k < n; ++k) out[r.start + k] = r.data[from + k] / 65535;
    return out;
  }

  // The value of one cell, or NaN above the diagonal, outside the window, or for a row not there.
  value(layer, head, q, k) {
    const r = this.rows[q];
    if (k > q || !r || k < r.start) return NaN;
    return r.data[(layer * this.heads + head) * (q + 1 - r.start) + k - r.start] / 65535;
  }

  isGenerated(i) {
    return i >= this.promptLength;
  }
}

// The most recent `count` tokens of a sequence, indexed from 0, with the reading methods of a
// Sequence: what the heatmap and the thumbnails draw, so that drawing costs one context's worth
// of tokens at most however long a generation runs. `offset` is the sequence index of token 0.
export class RecentView {
  constructor(seq, count) {
    this.seq = seq;
    this.offset = Math.max(0, seq.length - count);
    this.length = seq.length - this.offset;
    this.texts = seq.texts.slice(this.offset);
    this.keepRows = seq.keepRows;
  }

  isGenerated(i) { return this.seq.isGenerated(this.offset + i); }
  hasRow(q) { return this.seq.hasRow(this.offset + q); }
  wasDropped(q) { return this.seq.wasDropped(this.offset + q); }
  windowStart(q) { return Math.max(0, this.seq.windowStart(this.offset + q) - this.offset); }
  value(layer, head, q, k) { return this.seq.value(layer, head, this.offset + q, this.offset + k); }
}

const fixed = (p) => Math.round(Math.min(1, Math.max(0, p)) * 65535);

// Uint16Array of fixed(p) for each p: a plain loop (a step's rows are L x H x S values, and
// Uint16Array.from with a mapping function was the page's largest cost per token).
function toFixed(probabilities) {
  const out = new Uint16Array(probabilities.length);
  for (let i = 0; i < probabilities.length; ++i) out[i] = fixed(probabilities[i]);
  return out;
}
