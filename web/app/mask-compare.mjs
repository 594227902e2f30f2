// The "Mask" switch of the attention view: for the current text, the attention the GPT computes
// (causal: a token sees only itself and the tokens before it) next to what the same weights
// compute when every token may see every other, later ones too (bidirectional, as an encoder
// such as BERT attends). Both come from forward passes over the same tokens (the JS API's
// forward(ids, { attention: true, mask })), so the two maps differ by the mask alone: the grey
// upper triangle on the left is what a decoder that predicts the next token must not look at.
// Each map has the tokens on its axes (label canvases beside it, as the large heatmap has). The
// passes use the page's head mask, as every other view does: a head switched off has its
// probabilities multiplied by 0, so its maps are empty, and they are shown dimmed and say so.
import { drawImageScaled, drawTokenLabels, fitLabel, matrixImage } from './heatmap.mjs';
import { spokenText, visibleText } from './token-text.mjs';

const SIZE = 256; // pixels of each map's image (longer texts are sampled)
const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const LABEL_MAX = 60; // CSS pixels for a label
const LABEL_GAP = 12; // CSS pixels a label needs: fewer labels when cells are smaller

// A forward pass's attention (n_layer, n_head, T, T) in the shape matrixImage reads.
class Matrix {
  constructor(data, layers, heads, T) {
    Object.assign(this, { data, layers, heads, length: T });
  }
  hasRow() {
    return true;
  }
  windowStart() {
    return 0;
  }
  value(layer, head, q, k) {
    return this.data[((layer * this.heads + head) * this.length + q) * this.length + k];
  }
}

export class MaskCompare {
  #switch;
  #panel;
  #canvases;
  #caption;
  #offNote;
  #textOf;
  #headMask;
  #maps = null; // { causal, bidirectional }: Matrix, for the text they were computed on
  #texts = []; // the tokens' texts
  #labels = []; // and their labels, for the axes
  #off = new Set(); // heads off ("layer:head") in the passes that made the maps
  #version = 0; // of the latest request: only its answer is drawn
  #layer = 0;
  #head = 0;

  // Each canvas sits in a .mask-map beside its .mask-rows and .mask-cols label canvases.
  // textOf(id) -> Promise<string>: a token's text; headMask() -> the page's [[layer, head], ...] or
  // undefined.
  constructor({ switchButton, panel, causalCanvas, bidirectionalCanvas, caption, onToggle, textOf, headMask }) {
    this.#switch = switchButton;
    this.#panel = panel;
    this.#canvases = { causal: causalCanvas, bidirectional: bidirectionalCanvas };
    this.#caption = caption;
    this.#textOf = textOf;
    this.#headMask = headMask;
    this.#offNote = document.createElement('p');
    this.#offNote.className = 'mask-off small';
    this.#offNote.hidden = true;
    caption.before(this.#offNote);
    switchButton.addEventListener('click', () => {
      switchButton.setAttribute('aria-checked', String(!this.on));
      panel.hidden = !this.on;
      onToggle(this.on);
    });
    // The labels are drawn for the maps' size on the page, which follows the panel's width.
    let width = 0;
    new ResizeObserver(([entry]) => {
      if (Math.abs(entry.contentRect.width - width) < 1) return;
      width = entry.contentRect.width;
      this.draw(this.#layer, this.#head);
    }).observe(panel);
  }

  get on() {
    return this.#switch.getAttribute('aria-checked') === 'true';
  }

  // Forgets the maps (a new model, or a text that cannot be read): a computation under way is
  // dropped when it returns.
  clear(message = '') {
    ++this.#version;
    this.#maps = null;
    this.#caption.textContent = message;
    this.#offNote.hidden = true;
    this.#panel.classList.remove('off-head');
    for (const [mask, canvas] of Object.entries(this.#canvases)) {
      canvas.setAttribute('aria-label', `${mask} attention: not computed yet`);
      canvas.getContext('2d').clearRect(0, 0, canvas.width, canvas.height);
      for (const strip of this.#strips(canvas)) strip.getContext('2d').clearRect(0, 0, strip.width, strip.height);
    }
  }

  // Computes both maps for `ids` (the last shape.positions of them: what the model sees at once;
  // shape: the model's, model.shape). Errors of a computation that was replaced meanwhile (a new
  // model, a new text) are dropped.
  async compute(model, shape, ids) {
    const version = ++this.#version;
    const window = ids.slice(-shape.positions);
    if (!this.on || !window.length) {
      this.#maps = null;
      this.#show(window.length ? '' : 'Type a prompt to compare the masks.');
      return;
    }
    this.#caption.textContent = `Computing both masks for ${window.length} token${window.length === 1 ? '' : 's'}…`;
    const headMask = this.#headMask();
    const run = (mask) => model.forward(window, { attention: true, logits: false, mask, headMask });
    let causal, bidirectional, texts;
    try {
      [causal, bidirectional] = [await run('causal'), await run('bidirectional')];
      texts = await Promise.all(window.map((id) => this.#textOf(id)));
    } catch (e) {
      if (version !== this.#version) return;
      this.clear();
      throw e;
    }
    if (version !== this.#version) return;
    const T = window.length,
      L = shape.layers,
      H = shape.heads;
    this.#maps = {
      causal: new Matrix(causal.attention, L, H, T),
      bidirectional: new Matrix(bidirectional.attention, L, H, T),
    };
    this.#texts = texts;
    this.#labels = texts.map((t) => fitLabel(visibleText(t), { font: FONT, maxWidth: LABEL_MAX }));
    this.#off = new Set((headMask ?? []).map(([l, h]) => `${l}:${h}`));
    this.#show('');
  }

  // While tokens stream in, the maps stay those of the text before (recomputed when it stops).
  setStale(stale) {
    if (this.#maps && stale)
      this.#caption.textContent = 'These maps are of the text before this generation; they update when it stops.';
  }

  draw(layer, head) {
    this.#layer = layer;
    this.#head = head;
    const off = Boolean(this.#maps) && this.#off.has(`${layer}:${head}`);
    this.#panel.classList.toggle('off-head', off);
    this.#offNote.hidden = !off;
    this.#offNote.textContent = off
      ? `Layer ${layer}, head ${head} is switched off: the model runs without it (its attention is multiplied by 0), ` +
        'so both maps are empty. Switch it back on under the thumbnails, or with Reset heads.'
      : '';
    if (!this.#maps || !this.on) return;
    for (const mask of ['causal', 'bidirectional']) {
      const canvas = this.#canvases[mask],
        ctx = canvas.getContext('2d'),
        T = this.#maps[mask].length;
      const image = matrixImage(this.#maps[mask], layer, head, Math.min(SIZE, T * 8), {
        causal: mask === 'causal',
      });
      drawImageScaled(ctx, image, 0, 0, canvas.width, canvas.height);
      this.#drawLabels(canvas, T);
      canvas.setAttribute(
        'aria-label',
        `${mask} attention of layer ${layer}, head ${head}${off ? ' (switched off: empty)' : ''}, over ${T} tokens, ` +
          `from ${this.#spoken(0)} to ${this.#spoken(T - 1)}`,
      );
    }
  }

  #spoken(i) {
    return spokenText(this.#texts[i]);
  }

  // The rows' and columns' label canvases of a map.
  #strips(canvas) {
    const box = canvas.closest('.mask-map');
    return box ? [box.querySelector('.mask-rows'), box.querySelector('.mask-cols')] : [];
  }

  // The token labels beside and above a map, for the size it has on the page: every token while
  // cells are LABEL_GAP pixels or more, else every few.
  #drawLabels(canvas, T) {
    const [rows, cols] = this.#strips(canvas);
    if (!rows) return;
    const measure = rows.getContext('2d');
    measure.font = FONT;
    const label = Math.ceil(Math.max(24, ...this.#labels.map((t) => measure.measureText(t).width))) + 10;
    const box = canvas.closest('.mask-map');
    box.style.setProperty('--label', `${label}px`); // before the map's size is read: it takes what is left
    const size = canvas.getBoundingClientRect().width;
    if (!size) return; // not laid out (the panel is hidden)
    const cell = size / T,
      dpr = Math.min(2, window.devicePixelRatio || 1);
    const set = (c, w, h) => {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${h}px`;
    };
    set(rows, label, size);
    set(cols, size, label);
    drawTokenLabels(rows.getContext('2d'), cols.getContext('2d'), {
      labels: this.#labels,
      T,
      cell,
      label,
      step: Math.max(1, Math.ceil(LABEL_GAP / cell)),
      size,
      dpr,
      font: FONT,
    });
  }

  #show(message) {
    const T = this.#maps?.causal.length ?? 0;
    this.#caption.textContent =
      message ||
      `The ${T} token${T === 1 ? '' : 's'} of the text, the layer and head chosen above, the same weights: only the mask ` +
        'differs. The GPT predicts each next token, so no token may look at a later one (grey); without the mask, ' +
        'weight spreads into that upper triangle, onto words a decoder has not seen yet.';
    this.draw(this.#layer, this.#head);
  }
}
