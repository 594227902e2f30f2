// The "Attention" region: Layer and Head pickers, the large heatmap of the chosen pair, and one
// thumbnail button per layer × head (pressing one opens it large), each with a switch that turns
// its head off and on (the page then runs the model with a head mask). Redraws are coalesced into
// animation frames; during generation the page's frames draw them (drawLive), the map at most ten
// times a second and the thumbnails at most two and a half.
import { clear, el } from './dom.mjs';
import { Heatmap, drawImageScaled, matrixImage } from './heatmap.mjs';
import { SequenceView } from './sequence.mjs';

const THUMB = 96; // pixels of a thumbnail canvas (longer sequences are sampled)
const THUMB_INTERVAL = 400; // ms between thumbnail redraws while tokens stream
const LIVE_INTERVAL = 100; // ms between heatmap redraws while tokens stream, at least
// ... and at least this many times what the last redraw took: a large heatmap (a context of 256
// tokens is a 2304-pixel canvas) takes tens of ms, and redrawing it ten times a second made a long
// generation on the shipped model about three times slower (docs/performance.md, The page).
const LIVE_COST_FACTOR = 5;

export class AttentionView {
  #layer;
  #head;
  #thumbs;
  #empty;
  #heatmap;
  #onChange;
  #onRestore;
  #seq = null;
  #selected = -1;
  #offset = 0; // sequence index of the first token drawn
  #buttons = []; // [layer][head] -> {button, canvas, off}
  #kvGroup = 0; // query heads per key/value head when they share them (grouped-query attention), else 0
  #onToggleHead;
  #silenced = new Set(); // heads switched off, "layer:head"
  #frame = 0;
  #thumbsDirty = false;
  #thumbsDrawn = 0;
  #thumbsTimer = 0;

  #live = false;
  #thumbsInView = true;
  #dirty = false; // something changed since the last picture
  #drawn = 0;
  #drawCost = 0; // ms the last redraw took

  // onRestore(starts): the view needs rows the sequence let go, of the windows from these starts.
  // onToggleHead(layer, head): a head's switch was pressed.
  constructor({ layerSelect, headSelect, thumbs, empty, heatmap, onChange, onSelectQuery, onRestore, onToggleHead }) {
    this.#onRestore = onRestore;
    this.#onToggleHead = onToggleHead;
    this.#layer = layerSelect;
    this.#head = headSelect;
    this.#thumbs = thumbs;
    this.#empty = empty;
    this.#onChange = onChange;
    // The heatmap draws a window of the sequence (see #view): its queries are offset.
    this.#heatmap = new Heatmap({ ...heatmap, onSelectQuery: (q) => onSelectQuery(q + this.#offset) });
    for (const s of [layerSelect, headSelect]) s.addEventListener('change', () => this.#changed());
    // While tokens stream, thumbnails scrolled out of view are not redrawn (until they come in).
    new IntersectionObserver(([entry]) => {
      this.#thumbsInView = entry.isIntersecting;
      if (this.#thumbsInView && this.#thumbsDirty) this.update();
    }).observe(thumbs);
    let width = 0;
    new ResizeObserver(([entry]) => {
      if (Math.abs(entry.contentRect.width - width) < 1) return;
      width = entry.contentRect.width;
      this.update();
    }).observe(heatmap.scroller.parentElement);
  }

  get layer() {
    return Number(this.#layer.value) || 0;
  }

  get head() {
    return Number(this.#head.value) || 0;
  }

  // Query head h in words: "head 5", or with grouped-query attention "head 5 · KV head 2" (the
  // key/value head it reads: h / (heads / kvHeads), as the model computes it).
  headName(h) {
    return this.#kvGroup ? `head ${h} · KV head ${Math.floor(h / this.#kvGroup)}` : `head ${h}`;
  }

  // A new model: n_layer × n_head query heads, kvHeads of keys and values (fewer: grouped-query
  // or multi-query attention; each head-level view is of a query head, naming its KV head).
  configure(layers, heads, kvHeads = heads) {
    this.#kvGroup = kvHeads > 0 && kvHeads < heads ? heads / kvHeads : 0;
    const fill = (select, n, text) => {
      clear(select);
      for (let i = 0; i < n; ++i) select.append(el('option', { value: String(i) }, text(i)));
    };
    fill(this.#layer, layers, String);
    fill(this.#head, heads, (h) => (this.#kvGroup ? `${h} · KV ${Math.floor(h / this.#kvGroup)}` : String(h)));
    clear(this.#thumbs);
    this.#thumbs.style.setProperty('--heads', String(heads));
    this.#thumbs.append(el('span', { className: 'thumb-corner', attrs: { 'aria-hidden': 'true' } }, 'L \\ H'));
    for (let h = 0; h < heads; ++h)
      this.#thumbs.append(
        el(
          'span',
          { className: 'thumb-axis', attrs: { 'aria-hidden': 'true' } },
          this.#kvGroup ? `${h} · KV ${Math.floor(h / this.#kvGroup)}` : String(h),
        ),
      );
    this.#buttons = [];
    for (let l = 0; l < layers; ++l) {
      this.#thumbs.append(el('span', { className: 'thumb-axis', attrs: { 'aria-hidden': 'true' } }, String(l)));
      const row = [];
      for (let h = 0; h < heads; ++h) {
        const canvas = el('canvas', { width: THUMB, height: THUMB, attrs: { 'aria-hidden': 'true' } });
        const button = el(
          'button',
          {
            type: 'button',
            className: 'thumb',
            title: `Layer ${l}, ${this.headName(h)} (X switches it off and on)`,
            dataset: { layer: l, head: h },
            attrs: {
              'aria-label': `Layer ${l}, ${this.headName(h)}`,
              'aria-pressed': String(l === 0 && h === 0),
              'aria-keyshortcuts': 'X',
            },
            on: { click: () => this.open(l, h), keydown: (e) => this.#moveFocus(e, l, h) },
          },
          canvas,
        );
        button.tabIndex = l === 0 && h === 0 ? 0 : -1; // one Tab stop for the grid; arrows move, X switches
        // The switch, in a row of its own under the thumbnail (a target of 24 px or more that covers
        // nothing): out of the Tab order (the grid's X key does the same), for the pointer.
        const off = el(
          'button',
          {
            type: 'button',
            className: 'head-off',
            title: `Switch layer ${l}, head ${h} off`,
            attrs: { 'aria-label': `Layer ${l} head ${h} off`, 'aria-pressed': 'false' },
            on: { click: () => this.#onToggleHead(l, h) },
          },
          '×',
        );
        off.tabIndex = -1;
        this.#thumbs.append(el('div', { className: 'thumb-cell' }, button, off));
        row.push({ button, canvas, off });
      }
      this.#buttons.push(row);
    }
    this.#seq = null;
    this.update({ thumbs: true });
  }

  // Shows layer/head large (a thumbnail was pressed).
  open(layer, head) {
    this.#layer.value = String(layer);
    this.#head.value = String(head);
    this.#changed();
    document.getElementById('heatmap-scroll').scrollIntoView({ block: 'nearest' });
    document.getElementById('heatmap').focus({ preventScroll: true });
  }

  setSequence(seq) {
    this.#seq = seq;
    this.update({ thumbs: true });
  }

  setSelected(q) {
    this.#selected = q;
    this.update();
  }

  // While tokens stream in (the heatmap then grows its canvases in steps).
  // A generation that starts brings the map back to its latest tokens.
  setLive(live) {
    this.#live = live;
    if (live) this.#heatmap.follow();
  }

  // Schedules a redraw; thumbs: also the thumbnails (throttled unless force). While tokens stream,
  // nothing is scheduled: the page's own frames call drawLive.
  update({ thumbs = false, force = false } = {}) {
    if (thumbs) this.#thumbsDirty = true;
    if (force) this.#thumbsDrawn = 0;
    this.#dirty = true;
    if (this.#frame || this.#live) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#draw();
    });
  }

  // While tokens stream: draws what changed, in the frame the page is drawing anyway (a frame of
  // its own would cost the browser's style, layout and paint once more), and at most ten times a
  // second (and five times what the last picture took apart).
  drawLive() {
    if (!this.#dirty || performance.now() - this.#drawn < Math.max(LIVE_INTERVAL, LIVE_COST_FACTOR * this.#drawCost))
      return;
    this.#draw();
  }

  // Draws now (the tests and the end of a generation want the final picture at once).
  flush() {
    if (this.#frame) cancelAnimationFrame(this.#frame);
    clearTimeout(this.#thumbsTimer);
    this.#frame = this.#thumbsTimer = 0;
    this.#thumbsDrawn = 0;
    this.#draw();
  }

  // Which heads are off: a Set of "layer:head".
  setSilenced(silenced) {
    this.#silenced = new Set(silenced);
    this.update();
    this.#buttons.forEach((row, l) =>
      row.forEach(({ button, off }, h) => {
        const isOff = silenced.has(`${l}:${h}`);
        off.setAttribute('aria-pressed', String(isOff));
        off.title = `Switch layer ${l}, head ${h} ${isOff ? 'on' : 'off'}`;
        button.classList.toggle('silenced', isOff);
        button.setAttribute('aria-label', `Layer ${l}, ${this.headName(h)}${isOff ? ' (off)' : ''}`);
      }),
    );
  }

  // Arrow keys (and Home/End) move the focus within the thumbnail grid: left/right across heads,
  // up/down across layers; X switches the focused head off and on.
  #moveFocus(e, l, h) {
    if (e.key === 'x' || e.key === 'X') {
      e.preventDefault();
      return this.#onToggleHead(l, h);
    }
    const layers = this.#buttons.length,
      heads = this.#buttons[0]?.length ?? 0;
    const to = {
      ArrowLeft: [l, h - 1],
      ArrowRight: [l, h + 1],
      ArrowUp: [l - 1, h],
      ArrowDown: [l + 1, h],
      Home: [0, 0],
      End: [layers - 1, heads - 1],
    }[e.key];
    if (!to) return;
    e.preventDefault();
    const [nl, nh] = to;
    if (nl < 0 || nl >= layers || nh < 0 || nh >= heads) return;
    const current = this.#buttons[l][h].button,
      next = this.#buttons[nl][nh].button;
    current.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }

  #changed() {
    for (const row of this.#buttons)
      for (const { button } of row) {
        const pressed = Number(button.dataset.layer) === this.layer && Number(button.dataset.head) === this.head;
        button.setAttribute('aria-pressed', String(pressed));
        button.tabIndex = pressed ? 0 : -1;
      }
    this.update();
    this.#onChange(this.layer, this.head);
  }

  #draw() {
    this.#dirty = false;
    this.#drawn = performance.now();
    try {
      this.#drawAll();
    } finally {
      this.#drawCost = performance.now() - this.#drawn;
    }
  }

  // What the heatmap and thumbnails show: all tokens while they fit one context; past it, the
  // latest context's worth, or, when an earlier token is selected, the window the model saw when
  // it computed that token's row (rows the sequence let go are restored for it, see app.mjs).
  #view() {
    const seq = this.#seq,
      N = seq?.keepRows;
    if (!seq || seq.length <= N) return seq;
    const recent = SequenceView.recent(seq, N),
      q = this.#selected;
    if (q < 0 || q >= recent.offset) return recent;
    const start = seq.windowStart(q);
    return new SequenceView(seq, start, Math.min(N, seq.length - start));
  }

  #drawAll() {
    const seq = this.#view();
    const T = seq?.length ?? 0;
    const offset = seq?.offset ?? 0;
    const dropped = T && !this.#live ? this.#seq.droppedWindows(offset, offset + T) : [];
    if (dropped.length) this.#onRestore(dropped);
    this.#offset = seq?.offset ?? 0;
    this.#empty.hidden = T > 0;
    const selected = this.#selected >= this.#offset ? this.#selected - this.#offset : -1;
    this.#heatmap.draw(seq, this.layer, this.head, selected, {
      live: this.#live,
      off: this.#silenced.has(`${this.layer}:${this.head}`),
      headName: this.headName(this.head),
    });
    if (!this.#thumbsDirty || (this.#live && !this.#thumbsInView)) return;
    const now = performance.now();
    if (now - this.#thumbsDrawn < THUMB_INTERVAL) {
      // again soon, with everything new by then
      this.#thumbsTimer ||= setTimeout(
        () => {
          this.#thumbsTimer = 0;
          this.update();
        },
        THUMB_INTERVAL - (now - this.#thumbsDrawn),
      );
      this.#dirty = true; // (while streaming, the next drawLive after the timer draws them)
      return;
    }
    this.#thumbsDirty = false;
    this.#thumbsDrawn = now;
    const size = Math.min(T, THUMB);
    this.#buttons.forEach((row, l) =>
      row.forEach(({ canvas }, h) => {
        const ctx = canvas.getContext('2d');
        if (!T) ctx.clearRect(0, 0, THUMB, THUMB);
        else drawImageScaled(ctx, matrixImage(seq, l, h, size), 0, 0, THUMB, THUMB);
      }),
    );
  }
}
