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
// Only the rows of the prompt and of the last `keepRows` queries (one context's worth) are kept, so
// that a long generation holds at most two contexts of attention however many tokens it produces. Each query's
// window start is kept, though: the rows of an earlier window can be computed again, exactly, by
// one forward pass over that window's tokens (the engine slid to it and started again from
// position 0), and restoreWindow puts them back (until the next restore).
//
// A bidirectional model (a masked LM) never generates: its prompt's rows cover every key, later
// ones too (bidirectional true).
//
// The last generated token's own row would only arrive with the step after it; when generation
// ends that row stays empty (shown as "not computed") instead of running one more full forward
// pass over the whole sequence, which on a large model costs as much as the generation itself.
export class Sequence {
  ids = [];
  texts = [];
  rows = [];
  promptLength = 0;

  firstKept = 0; // rows of queries before this one were let go
  starts = []; // window start of each query's row, kept when the row is let go
  #restored = []; // queries whose rows restoreWindow put back

  constructor(layers, heads, keepRows = Infinity, { bidirectional = false } = {}) {
    this.layers = layers;
    this.heads = heads;
    this.keepRows = keepRows;
    this.bidirectional = bidirectional;
  }

  get length() {
    return this.ids.length;
  }

  setPrompt(ids, texts) {
    this.ids = ids.slice();
    this.texts = texts.slice();
    this.rows = [];
    this.starts = ids.map(() => 0); // a prompt fits the context: its rows start at 0
    this.#restored = [];
    this.firstKept = 0;
    this.promptLength = ids.length;
  }

  // attention: (n_layer, n_head, T, T) from forward(ids, {attention: true}), T = prompt length.
  setPromptAttention(attention) {
    const T = this.promptLength,
      LH = this.layers * this.heads;
    if (attention.length !== LH * T * T)
      throw new Error(`attention has ${attention.length} values, expected ${LH * T * T}`);
    for (let q = 0; q < T; ++q) {
      const keys = this.bidirectional ? T : q + 1,
        row = new Uint16Array(LH * keys);
      for (let lh = 0; lh < LH; ++lh) {
        const from = (lh * T + q) * T,
          to = lh * keys;
        for (let k = 0; k < keys; ++k) row[to + k] = fixed(attention[from + k]);
      }
      this.rows[q] = { start: 0, data: row };
    }
  }

  // attention: (n_layer, n_head, T, T) from forward(ids.slice(start, start + T)): the rows of
  // the queries of that window which were computed from `start` and were let go.
  restoreWindow(start, attention) {
    const LH = this.layers * this.heads,
      T = Math.round(Math.sqrt(attention.length / LH));
    if (attention.length !== LH * T * T || start + T > this.length)
      throw new Error(`attention of ${attention.length} values does not fit a window at ${start}`);
    for (let i = 0; i < T; ++i) {
      const q = start + i;
      if (this.rows[q] || this.starts[q] !== start) continue;
      const row = new Uint16Array(LH * (i + 1));
      for (let lh = 0; lh < LH; ++lh) {
        const from = (lh * T + i) * T,
          to = lh * (i + 1);
        for (let k = 0; k <= i; ++k) row[to + k] = fixed(attention[from + k]);
      }
      this.rows[q] = { start, data: row };
      this.#restored.push(q);
    }
  }

  // Lets go of the rows restoreWindow put back.
  dropRestored() {
    for (const q of this.#restored) if (q < this.firstKept) delete this.rows[q];
    this.#restored = [];
  }

  // The window starts of the queries in [from, to) whose rows were let go (each restorable by one
  // forward pass over n_positions tokens from it).
  droppedWindows(from, to) {
    const starts = new Set();
    for (let q = from; q < Math.min(to, this.firstKept); ++q)
      if (!this.rows[q] && this.starts[q] !== undefined) starts.add(this.starts[q]);
    return [...starts];
  }

  // Back to the prompt alone (before a new generation).
  truncateToPrompt() {
    this.ids.length = this.promptLength;
    this.texts.length = this.promptLength;
    this.rows.length = Math.min(this.rows.length, this.promptLength);
    this.starts.length = Math.min(this.starts.length, this.promptLength);
    this.firstKept = Math.min(this.firstKept, this.promptLength);
    this.#restored = [];
  }

  // A generated token at `position`, with the attention row of the query that produced it
  // (q = position - 1) over keys windowStart..q.
  addStep(id, text, position, attention, windowStart = 0) {
    if (position !== this.ids.length)
      throw new Error(`step at position ${position}, but the sequence has ${this.ids.length} tokens`);
    this.ids.push(id);
    this.texts.push(text);
    if (attention && attention.length === this.layers * this.heads * (position - windowStart))
      this.rows[position - 1] = { start: windowStart, data: toFixed(attention) };
    this.starts[position - 1] = windowStart;
    for (; this.firstKept < position - this.keepRows; ++this.firstKept)
      if (this.firstKept >= this.promptLength) delete this.rows[this.firstKept];
  }

  hasRow(q) {
    return this.rows[q] !== undefined;
  }

  // True when query q's row was let go (keepRows), as opposed to not computed yet.
  wasDropped(q) {
    return q < this.firstKept && !this.rows[q];
  }

  // The first key query q's row covers (keys before it were outside the model's window).
  windowStart(q) {
    return this.starts[q] ?? 0;
  }

  // Attention of query q over keys 0..q (bidirectional: every key) for one layer and head
  // (Float32Array; 0 for keys outside the window, which the model did not see), or null if not
  // computed or not kept.
  row(layer, head, q) {
    const r = this.rows[q];
    if (!r) return null;
    const n = r.data.length / (this.layers * this.heads),
      from = (layer * this.heads + head) * n;
    const out = new Float32Array(r.start + n);
    for (let k = 0; k < n; ++k) out[r.start + k] = r.data[from + k] / 65535;
    return out;
  }

  // The value of one cell, or NaN above the diagonal (unless bidirectional), outside the window,
  // or for a row not there.
  value(layer, head, q, k) {
    const r = this.rows[q];
    if ((k > q && !this.bidirectional) || !r || k < r.start) return NaN;
    const n = r.data.length / (this.layers * this.heads);
    return r.data[(layer * this.heads + head) * n + k - r.start] / 65535;
  }

  isGenerated(i) {
    return i >= this.promptLength;
  }
}

// `length` tokens of a sequence from `offset` on, indexed from 0, with the reading methods of a
// Sequence: what the heatmap and the thumbnails draw (the latest context's worth of tokens, or the
// window an earlier selected token was computed in), so that drawing costs one context at most
// however long a generation runs.
export class SequenceView {
  constructor(seq, offset, length) {
    this.seq = seq;
    this.offset = offset;
    this.length = length;
    this.texts = seq.texts.slice(offset, offset + length);
    this.keepRows = seq.keepRows;
    this.bidirectional = seq.bidirectional;
  }

  // The last `count` tokens.
  static recent(seq, count) {
    const offset = Math.max(0, seq.length - count);
    return new SequenceView(seq, offset, seq.length - offset);
  }

  isGenerated(i) {
    return this.seq.isGenerated(this.offset + i);
  }
  hasRow(q) {
    return this.seq.hasRow(this.offset + q);
  }
  wasDropped(q) {
    return this.seq.wasDropped(this.offset + q);
  }
  windowStart(q) {
    return Math.max(0, this.seq.windowStart(this.offset + q) - this.offset);
  }
  value(layer, head, q, k) {
    return this.seq.value(layer, head, this.offset + q, this.offset + k);
  }
}

// p in [0, 1] -> round(p * 65535) (NaN -> 0), without Math calls: it runs for every value of every row.
const fixed = (p) => (p > 0 ? (p < 1 ? (p * 65535 + 0.5) | 0 : 65535) : 0);

// Uint16Array of fixed(p) for each p: a plain loop (a step's rows are L x H x S values, and
// Uint16Array.from with a mapping function was the page's largest cost per token).
function toFixed(probabilities) {
  const out = new Uint16Array(probabilities.length);
  for (let i = 0; i < probabilities.length; ++i) out[i] = fixed(probabilities[i]);
  return out;
}
