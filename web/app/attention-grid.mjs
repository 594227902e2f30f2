// A grid of small attention maps, one per layer x head, of one forward pass (the Train panel's
// view of a model while it learns). Drawn with the main heatmap's colours (heatmap.mjs).
import { clear, el } from './dom.mjs';
import { drawImageScaled, matrixImage } from './heatmap.mjs';

const SIZE = 72; // CSS pixels of a map

// The forward pass' attention ((n_layer, n_head, T, T), row-major) as the sequence matrixImage reads.
const causalMatrix = (attention, heads, T) => ({
  length: T,
  bidirectional: false,
  hasRow: () => true,
  windowStart: () => 0,
  value: (l, h, q, k) => attention[((l * heads + h) * T + q) * T + k],
});

export class AttentionGrid {
  #root;
  #caption;
  #canvases = []; // [layer][head]
  #heads = 0;

  // root: the element that holds the grid; its heading and caption are made here.
  constructor(root, title) {
    this.#root = root;
    this.title = title;
  }

  // An empty grid of layers x heads maps.
  configure(layers, heads, title = this.title) {
    this.title = title;
    this.#heads = heads;
    clear(this.#root);
    const heading = el('h4', { className: 'grid-title' }, title);
    this.#caption = el('p', { className: 'muted small grid-caption' }, 'The maps come with the first sample.');
    const grid = el('div', {
      className: 'mini-thumbs',
      attrs: { role: 'group', 'aria-label': `Attention of ${title}` },
    });
    grid.style.setProperty('--heads', String(heads));
    grid.append(el('span', { className: 'thumb-corner', attrs: { 'aria-hidden': 'true' } }, 'L \\ H'));
    for (let h = 0; h < heads; ++h)
      grid.append(el('span', { className: 'thumb-axis', attrs: { 'aria-hidden': 'true' } }, String(h)));
    this.#canvases = [];
    for (let l = 0; l < layers; ++l) {
      grid.append(el('span', { className: 'thumb-axis', attrs: { 'aria-hidden': 'true' } }, String(l)));
      const row = [];
      for (let h = 0; h < heads; ++h) {
        const canvas = el('canvas', {
          width: SIZE,
          height: SIZE,
          attrs: { role: 'img', 'aria-label': `${title}: layer ${l} head ${h}, not drawn yet` },
        });
        row.push(canvas);
        grid.append(canvas);
      }
      this.#canvases.push(row);
    }
    this.#root.append(heading, grid, this.#caption);
  }

  // attention: Float32Array (n_layer, n_head, T, T) of the probe's T tokens; caption: what it shows.
  draw(attention, T, caption) {
    const seq = causalMatrix(attention, this.#heads, T);
    const scale = window.devicePixelRatio || 1,
      pixels = Math.round(SIZE * scale);
    for (const [l, row] of this.#canvases.entries()) {
      for (const [h, canvas] of row.entries()) {
        if (canvas.width !== pixels) canvas.width = canvas.height = pixels;
        drawImageScaled(canvas.getContext('2d'), matrixImage(seq, l, h, Math.min(T, pixels)), 0, 0, pixels, pixels);
        canvas.setAttribute('aria-label', `${this.title}: layer ${l} head ${h}, ${caption}`);
        canvas.dataset.drawn = caption;
      }
    }
    this.#caption.textContent = caption;
  }
}
