// The large attention heatmap of one layer and head: rows are queries (the token that looks),
// columns are keys (the tokens it looks at), with the token texts on both axes (in their own
// canvases, which stay in view while the map scrolls) and the value under the pointer or the
// keyboard cursor (arrow keys move it, Enter selects the row's token).
// The matrix is one pixel per cell, scaled up; an overlay element holds the cell separators and the
// pointer and selection marks, so moving the pointer never redraws the matrix. While tokens stream
// in, the canvases grow in steps of several tokens rather than being reallocated for every token.
import { spokenText, visibleText } from './token-text.mjs';

// ColorBrewer "Blues", white (0) to dark blue (1), on a square-root scale: attention is often
// spread thin over many tokens, and √ keeps 1–5% weights visible while 0 and 1 stay where they are.
const STOPS = [
  [247, 251, 255],
  [222, 235, 247],
  [198, 219, 239],
  [158, 202, 225],
  [107, 174, 214],
  [66, 146, 198],
  [33, 113, 181],
  [8, 81, 156],
  [8, 48, 107],
];
const MASKED = [244, 245, 247]; // above the diagonal: a token never sees later tokens
const NOT_COMPUTED = [214, 219, 226]; // the last generated token's row (see sequence.mjs)
const LUT = (() => {
  const lut = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; ++i) {
    const x = (i / 255) * (STOPS.length - 1),
      j = Math.min(STOPS.length - 2, Math.floor(x)),
      f = x - j;
    for (let c = 0; c < 3; ++c) lut[i * 3 + c] = Math.round(STOPS[j][c] + f * (STOPS[j + 1][c] - STOPS[j][c]));
  }
  return lut;
})();

// An ImageData of size×size pixels for one layer/head of the sequence (a Sequence or a
// SequenceView; nearest sample when the sequence is longer than size). Cells are read one by one
// (value), so the cost is size² whatever the length of the rows. causal false (the default for a
// bidirectional sequence): keys after the query are drawn too, not greyed out.
export function matrixImage(seq, layer, head, size, { causal = !seq.bidirectional } = {}) {
  const T = seq.length,
    image = new ImageData(size, size),
    px = image.data;
  let row = false,
    rowQ = -1,
    start = 0;
  for (let y = 0; y < size; ++y) {
    const q = Math.floor((y * T) / size);
    if (q !== rowQ) {
      // pixel rows of one query share its row
      row = seq.hasRow(q);
      start = seq.windowStart(q);
      rowQ = q;
    }
    for (let x = 0; x < size; ++x) {
      const k = Math.floor((x * T) / size),
        o = (y * size + x) * 4;
      px[o + 3] = 255;
      if ((k <= q || !causal) && k >= start && row) {
        const v = seq.value(layer, head, q, k);
        const i = Math.round(Math.sqrt(Math.max(0, Math.min(1, v))) * 255) * 3;
        px[o] = LUT[i];
        px[o + 1] = LUT[i + 1];
        px[o + 2] = LUT[i + 2];
      } else {
        const rgb = (causal && k > q) || (row && k < start) ? MASKED : NOT_COMPUTED;
        px[o] = rgb[0];
        px[o + 1] = rgb[1];
        px[o + 2] = rgb[2];
      }
    }
  }
  return image;
}

// Draws an ImageData scaled up without smoothing, through a reused scratch canvas.
const scratch = new OffscreenCanvas(1, 1);
export function drawImageScaled(ctx, image, x, y, w, h) {
  if (scratch.width < image.width || scratch.height < image.height) {
    scratch.width = Math.max(scratch.width, image.width);
    scratch.height = Math.max(scratch.height, image.height);
  }
  scratch.getContext('2d').putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, 0, 0, image.width, image.height, x, y, w, h);
}

const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const MIN_CELL = 14; // labels on every token down to this cell size
const MAX_CELL = 28;
const MAX_EXTENT = 2400; // CSS pixels of matrix before cells shrink (and labels thin out)
const LABEL_MAX = 96; // CSS pixels for a label

// A token's label cut to maxWidth CSS pixels (with …) in `font`.
const measure = new OffscreenCanvas(1, 1).getContext('2d');
export function fitLabel(s, { font = FONT, maxWidth = LABEL_MAX } = {}) {
  measure.font = font;
  if (measure.measureText(s).width <= maxWidth) return s;
  let cut = s;
  while (cut.length > 1 && measure.measureText(`${cut}…`).width > maxWidth) cut = cut.slice(0, -1);
  return `${cut}…`;
}

// The token labels of a map's two axes: rows (a canvas `label` wide and `size` high,
// right-aligned) and columns (`size` wide and `label` high, rotated), one every `step` tokens and
// the last; generated tokens in blue. Cells are `cell` CSS pixels; the canvases have dpr device
// pixels per CSS pixel.
export function drawTokenLabels(
  rows,
  cols,
  { labels, generated = () => false, T, cell, label, step, size, dpr, font = FONT },
) {
  for (const [c, w, h] of [
    [rows, label, size],
    [cols, size, label],
  ]) {
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.fillStyle = '#ffffff';
    c.fillRect(0, 0, w, h);
    c.font = font;
    c.textBaseline = 'middle';
  }
  rows.textAlign = 'right';
  for (let i = 0; i < T; ++i) {
    if (i % step !== 0 && i !== T - 1) continue;
    const color = generated(i) ? '#1d4ed8' : '#374151',
      mid = i * cell + cell / 2;
    rows.fillStyle = color;
    rows.fillText(labels[i], label - 6, mid);
    cols.save();
    cols.fillStyle = color;
    cols.translate(mid, label - 6);
    cols.rotate(-Math.PI / 2);
    cols.textAlign = 'left';
    cols.fillText(labels[i], 0, 0);
    cols.restore();
  }
}

const GROW = 16; // while streaming, canvases grow by this many tokens at a time

export class Heatmap {
  #canvas;
  #overlay;
  #cols;
  #rows;
  #corner;
  #scroller;
  #readout;
  #onSelect;
  #seq = null;
  #layer = 0;
  #head = 0;
  #selected = -1;
  #hover = null; // {q, k}
  #cursor = null; // keyboard cursor {q, k}
  #geo = null; // {T, capacity, cell, label, step, size, dpr}
  #overlayKey = ''; // what the overlay shows (see #drawOverlay)
  #marks; // the overlay's boxes: selected row, pointer and cursor (row, column, cell)
  #defaultReadout;
  #described = null; // the cell the readout describes {q, k}, or null
  #off = false; // the head shown is switched off
  #headName = 'head 0'; // how the head shown is named ("head 5", or "head 5 · KV head 2")
  #follow = true; // keep the latest token's row and column in view (until the person scrolls the map)
  #scrolledTo = null; // {left, top}: where the map last scrolled itself

  constructor({ canvas, overlay, cols, rows, corner, scroller, readout, onSelectQuery }) {
    this.#canvas = canvas;
    this.#overlay = overlay;
    this.#cols = cols;
    this.#rows = rows;
    this.#corner = corner;
    this.#scroller = scroller;
    this.#readout = readout;
    this.#onSelect = onSelectQuery;
    this.#defaultReadout = readout.textContent;
    const mark = (className) =>
      overlay.appendChild(Object.assign(document.createElement('div'), { className, hidden: true }));
    this.#marks = {
      selected: mark('hm-selected'),
      hover: { row: mark('hm-band'), col: mark('hm-band'), cell: mark('hm-cell hm-pointer') },
      cursor: { row: mark('hm-band'), col: mark('hm-band'), cell: mark('hm-cell hm-cursor') },
    };
    canvas.addEventListener('pointermove', (e) => this.#pointer(e));
    canvas.addEventListener('pointerleave', () => {
      this.#hover = null;
      this.#drawOverlay();
      this.#describe(this.#cursor);
    });
    canvas.addEventListener('click', (e) => {
      const cell = this.#cellAt(e);
      if (cell) {
        this.#cursor = cell;
        this.#onSelect(cell.q);
      }
    });
    canvas.addEventListener('keydown', (e) => this.#key(e));
    canvas.addEventListener('focus', () => {
      if (!this.#cursor && this.#seq?.length)
        this.#cursor = { q: this.#selected >= 0 ? this.#selected : this.#seq.length - 1, k: 0 };
      this.#drawOverlay();
      this.#describe(this.#cursor);
    });
    canvas.addEventListener('blur', () => this.#drawOverlay());
    // A scroll the map did not make itself is the person's (wheel, touch, scroll bars, the keyboard
    // cursor): from then on the map stays where they put it, unless that shows the latest token.
    scroller.addEventListener('scroll', () => this.#noticeScroll(), { passive: true });
  }

  // Whether the map is where it last scrolled itself; if not, the person moved it. Called on
  // scroll events and before each redraw too: a redraw may come before the event of a scroll.
  #noticeScroll() {
    const to = this.#scrolledTo,
      s = this.#scroller;
    if (to && Math.abs(s.scrollLeft - to.left) < 2 && Math.abs(s.scrollTop - to.top) < 2) return;
    this.#scrolledTo = null;
    this.#follow = this.#latestInView();
  }

  // Follows the latest token again (a generation starts), from where the map is now.
  follow() {
    this.#follow = true;
    this.#scrolledTo = { left: this.#scroller.scrollLeft, top: this.#scroller.scrollTop };
  }

  // Draws the matrix and the labels. live: tokens are streaming in (grow canvases in steps); off:
  // this head is switched off (its probabilities are multiplied by 0); headName: the head in words
  // (a query head names the key/value head it shares, see AttentionView).
  draw(seq, layer, head, selected, { live = false, off = false, headName = `head ${head}` } = {}) {
    const changed = layer !== this.#layer || head !== this.#head || off !== this.#off;
    this.#noticeScroll(); // (with the sizes of the map as the person saw it)
    this.#off = off;
    this.#headName = headName;
    this.#seq = seq;
    this.#layer = layer;
    this.#head = head;
    this.#selected = selected;
    const T = seq?.length ?? 0;
    if (this.#cursor && this.#cursor.q >= T) this.#cursor = null;
    this.#scroller.hidden = !T;
    if (!T) {
      this.#geo = null;
      this.#describe(null);
      return;
    }
    const g = this.#layout(seq, live);

    // The matrix: one backing pixel per cell, scaled up by CSS (image-rendering: pixelated). A
    // canvas of the map's full size in device pixels was megabytes to paint and hand to the
    // compositor on every redraw while tokens streamed in.
    const ctx = this.#canvas.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, g.capacity, g.capacity);
    ctx.putImageData(matrixImage(seq, layer, head, T), 0, 0);

    drawTokenLabels(this.#rows.getContext('2d'), this.#cols.getContext('2d'), {
      labels: seq.texts.map((t) => fitLabel(visibleText(t))),
      generated: (i) => seq.isGenerated(i),
      ...g,
    });
    this.#canvas.setAttribute(
      'aria-label',
      `Attention of layer ${layer}, ${headName}${off ? ' (switched off)' : ''} over ${T} tokens. ` +
        'Rows: the token that looks; columns: the tokens it looks at.',
    );
    this.#drawOverlay();
    if (this.#follow) this.#showLatest();
    // The readout describes the same cell under this layer, head and tokens (while tokens stream,
    // only when the layer or head changed: a live region read out ten times a second is noise).
    if (this.#hover) this.#describe(this.#hover);
    else if (!live || changed) this.#describe(this.#described);
  }

  // Sizes: cells fit the width when they can (14 to 28 px), else the map scrolls; past 2400 px
  // cells shrink and labels thin out. Canvases are reallocated only when a size changes.
  #layout(seq, live) {
    const T = seq.length,
      prev = this.#geo;
    const capacity = live ? Math.max(prev?.capacity ?? 0, Math.ceil(T / GROW) * GROW) : T;
    const ctx = this.#rows.getContext('2d');
    ctx.font = FONT;
    let label = Math.ceil(Math.max(54, ...seq.texts.map((t) => ctx.measureText(fitLabel(visibleText(t))).width))) + 10;
    if (live && prev) label = Math.max(label, prev.label);
    const avail = Math.max(120, this.#scroller.clientWidth - label - 4);
    let cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(avail / capacity)));
    if (capacity * cell > MAX_EXTENT) cell = Math.max(3, Math.floor(MAX_EXTENT / capacity));
    const size = capacity * cell;
    // Sharp on high-density screens, but never more than 4096 device pixels a side.
    const dpr = Math.max(1, Math.min(2, window.devicePixelRatio || 1, 4096 / (size + label)));
    const g = { T, capacity, cell, label, step: Math.max(1, Math.ceil(MIN_CELL / cell)), size, dpr };
    if (!prev || prev.size !== size || prev.label !== label || prev.dpr !== dpr || prev.capacity !== capacity) {
      const set = (c, w, h) => {
        c.width = Math.round(w * dpr);
        c.height = Math.round(h * dpr);
        c.style.width = `${w}px`;
        c.style.height = `${h}px`;
      };
      this.#canvas.width = this.#canvas.height = capacity;
      this.#canvas.style.width = this.#canvas.style.height = `${size}px`;
      set(this.#rows, label, size);
      set(this.#cols, size, label);
      this.#corner.style.width = `${label}px`;
      this.#corner.style.height = `${label}px`;
    }
    this.#geo = g;
    return g;
  }

  // Scrolls the map so that the latest token's row and column end at its bottom right corner
  // (the diagonal, where most attention is, runs into it), or to the origin when it all fits.
  #showLatest() {
    const g = this.#geo,
      s = this.#scroller,
      end = g.label + g.T * g.cell;
    const left = Math.max(0, end - s.clientWidth),
      top = Math.max(0, end - s.clientHeight);
    if (Math.abs(s.scrollLeft - left) >= 1 || Math.abs(s.scrollTop - top) >= 1) {
      s.scrollLeft = left;
      s.scrollTop = top;
    }
    this.#scrolledTo = { left: s.scrollLeft, top: s.scrollTop }; // as the browser rounded them
  }

  // Whether the latest token's row and column are in view (past the sticky label strips).
  #latestInView() {
    const g = this.#geo,
      s = this.#scroller;
    if (!g) return true;
    const start = g.label + (g.T - 1) * g.cell,
      end = start + g.cell;
    const fits = (scroll, client) => start >= scroll + g.label - 1 && end <= scroll + client + 1;
    return fits(s.scrollLeft, s.clientWidth) && fits(s.scrollTop, s.clientHeight);
  }

  // The marks over the matrix, in the overlay element: cell separators (a CSS background) and
  // the border, the selected row, the pointer's and the keyboard cursor's cell (positioned
  // boxes). Moving a mark changes a few styles; nothing is painted over the whole map (an overlay
  // canvas of the map's size was megabytes for the compositor on every change).
  #drawOverlay() {
    const g = this.#geo;
    if (!g) return;
    const focused = document.activeElement === this.#canvas;
    const key = JSON.stringify([g.T, g.cell, this.#selected, this.#hover, focused && this.#cursor]);
    if (key === this.#overlayKey) return;
    this.#overlayKey = key;
    const { cell, T } = g,
      o = this.#overlay,
      m = this.#marks;
    o.style.width = o.style.height = `${T * cell}px`;
    o.style.setProperty('--cell', `${cell}px`);
    o.classList.toggle('separated', cell >= 10); // thin separators help reading single cells
    const sel = this.#selected >= 0 && this.#selected < T ? this.#selected : -1;
    place(m.selected, sel >= 0 && [0, sel * cell, (sel + 1) * cell, cell]);
    for (const [c, marks] of [
      [this.#hover, m.hover],
      [focused && this.#cursor, m.cursor],
    ]) {
      place(marks.row, c && [0, c.q * cell, T * cell, cell]);
      place(marks.col, c && [c.k * cell, 0, cell, T * cell]);
      place(marks.cell, c && [c.k * cell, c.q * cell, cell, cell]);
    }
  }

  #cellAt(e) {
    const g = this.#geo;
    if (!g) return null;
    const r = this.#canvas.getBoundingClientRect();
    const x = e.clientX - r.left,
      y = e.clientY - r.top;
    if (x < 0 || y < 0) return null;
    const k = Math.floor(x / g.cell),
      q = Math.floor(y / g.cell);
    return q < g.T && k < g.T ? { q, k } : null;
  }

  #pointer(e) {
    const cell = this.#cellAt(e);
    if (cell?.q === this.#hover?.q && cell?.k === this.#hover?.k) return;
    this.#hover = cell;
    this.#drawOverlay();
    this.#describe(cell);
  }

  #key(e) {
    const g = this.#geo;
    if (!g) return;
    let { q, k } = this.#cursor ?? { q: g.T - 1, k: 0 };
    switch (e.key) {
      case 'ArrowUp':
        q = Math.max(0, q - 1);
        k = this.#seq.bidirectional ? k : Math.min(k, q);
        break;
      case 'ArrowDown':
        q = Math.min(g.T - 1, q + 1);
        break;
      case 'ArrowLeft':
        k = Math.max(0, k - 1);
        break;
      case 'ArrowRight':
        k = Math.min(this.#seq.bidirectional ? g.T - 1 : q, k + 1);
        break;
      case 'Home':
        k = 0;
        break;
      case 'End':
        k = this.#seq.bidirectional ? g.T - 1 : q;
        break;
      case 'Enter':
      case ' ':
        e.preventDefault();
        this.#onSelect(q);
        return;
      default:
        return;
    }
    e.preventDefault();
    this.#cursor = { q, k };
    this.#drawOverlay();
    this.#describe(this.#cursor);
    this.#reveal(this.#cursor);
  }

  // Scrolls the keyboard cursor into view (the label strips take `label` pixels on each side).
  #reveal({ q, k }) {
    const g = this.#geo,
      s = this.#scroller;
    const x = g.label + k * g.cell,
      y = g.label + q * g.cell;
    if (x < s.scrollLeft + g.label || x + g.cell > s.scrollLeft + s.clientWidth)
      s.scrollLeft = x - g.label - (s.clientWidth - g.label) / 2;
    if (y < s.scrollTop + g.label || y + g.cell > s.scrollTop + s.clientHeight)
      s.scrollTop = y - g.label - (s.clientHeight - g.label) / 2;
  }

  #describe(cell) {
    const seq = this.#seq;
    if (!cell || !seq || cell.q >= seq.length || cell.k >= seq.length) {
      this.#described = null;
      this.#say(
        this.#off && seq?.length
          ? `Layer ${this.#layer}, ${this.#headName} is switched off: its attention is multiplied by 0, so this map is empty and the head adds nothing.`
          : this.#defaultReadout,
      );
      return;
    }
    this.#described = cell;
    const { q, k } = cell;
    const who = (i) => `#${i + (seq.offset ?? 0)} ${spokenText(seq.texts[i])}`; // numbered in the whole sequence
    let value;
    if (k > q && !seq.bidirectional) value = 'masked: a token only sees itself and earlier tokens';
    else if (seq.wasDropped(q))
      value = `not kept while generating (the page keeps the attention of the last ${seq.keepRows} tokens): computed again when it ends`;
    else if (!seq.hasRow(q)) value = 'not computed: the last token’s row comes with the next token';
    else if (k < seq.windowStart(q)) value = 'outside the window: the context was full and slid past this token';
    else {
      const v = seq.value(this.#layer, this.#head, q, k);
      value = `${v.toFixed(4)} (${(100 * v).toFixed(1)}%)`;
    }
    const off = this.#off ? ' (switched off: its attention is multiplied by 0)' : '';
    this.#say(`Layer ${this.#layer}, ${this.#headName}${off}: ${who(q)} → ${who(k)}: ${value}`);
  }

  // The readout is a live region: written only when its text changes.
  #say(text) {
    if (this.#readout.textContent !== text) this.#readout.textContent = text;
  }
}

// Shows an overlay box at [x, y, width, height] (CSS pixels), or hides it (rect false).
function place(box, rect) {
  box.hidden = !rect;
  if (!rect) return;
  const [x, y, w, h] = rect;
  Object.assign(box.style, { left: `${x}px`, top: `${y}px`, width: `${w}px`, height: `${h}px` });
}
