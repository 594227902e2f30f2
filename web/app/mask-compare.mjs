// The "Mask" switch of the attention view: for the current text, the attention the GPT computes
// (causal: a token sees only itself and the tokens before it) next to what the same weights
// compute when every token may see every other, later ones too (bidirectional, as an encoder
// such as BERT attends). Both come from forward passes over the same tokens (the JS API's
// forward(ids, { attention: true, mask })), so the two maps differ by the mask alone: the grey
// upper triangle on the left is what a decoder that predicts the next token must not look at.
import { drawImageScaled, matrixImage } from './heatmap.mjs';

const SIZE = 256; // pixels of each map's image (longer texts are sampled)

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
  #maps = null; // { causal, bidirectional }: Matrix, for the text they were computed on
  #version = 0; // of the latest request: only its answer is drawn
  #layer = 0;
  #head = 0;

  constructor({ switchButton, panel, causalCanvas, bidirectionalCanvas, caption, onToggle }) {
    this.#switch = switchButton;
    this.#panel = panel;
    this.#canvases = { causal: causalCanvas, bidirectional: bidirectionalCanvas };
    this.#caption = caption;
    switchButton.addEventListener('click', () => {
      switchButton.setAttribute('aria-checked', String(!this.on));
      panel.hidden = !this.on;
      onToggle(this.on);
    });
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
    for (const canvas of Object.values(this.#canvases))
      canvas.getContext('2d').clearRect(0, 0, canvas.width, canvas.height);
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
    const run = (mask) => model.forward(window, { attention: true, logits: false, mask });
    let causal, bidirectional;
    try {
      [causal, bidirectional] = [await run('causal'), await run('bidirectional')];
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
    if (!this.#maps || !this.on) return;
    for (const mask of ['causal', 'bidirectional']) {
      const canvas = this.#canvases[mask],
        ctx = canvas.getContext('2d');
      const image = matrixImage(this.#maps[mask], layer, head, Math.min(SIZE, this.#maps[mask].length * 8), {
        causal: mask === 'causal',
      });
      drawImageScaled(ctx, image, 0, 0, canvas.width, canvas.height);
      canvas.setAttribute(
        'aria-label',
        `${mask} attention of layer ${layer}, head ${head}, over ${this.#maps[mask].length} tokens`,
      );
    }
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
