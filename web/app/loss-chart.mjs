// The Train panel's loss chart: loss (nats) against step for one or more series (a run's training
// loss, its held-out loss; two runs when one head is compared with many), drawn as SVG polylines.
// The y axis spans what the series hold, from 0.9 x their lowest to their highest value, widened to
// its round ticks, so that the fall after the first steps stays visible; the x axis spans the
// run's steps. Redrawn in an animation frame at most every DRAW_MS however fast the steps arrive
// (each redraw is a repaint and a commit of a large page: at every step, they took a fifth of the
// page's thread), the lines changing their points, the axes made again only when their range
// changes.
import { clear } from './dom.mjs';

const SVG = 'http://www.w3.org/2000/svg';
const H = 260; // viewBox units (its width: the chart's on the page, see #width)
const PAD = { left: 58, right: 12, top: 10, bottom: 38 }; // room for the ticks and the axes' names
const DRAW_MS = 200;

const svg = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
};

// The step between round numbers for axis ticks: about `count` of them between lo and hi.
function tickStep(lo, hi, count) {
  const raw = (hi - lo) / Math.max(1, count),
    mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
}

// The multiples of step from lo to hi.
function ticks(lo, hi, step) {
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

export class LossChart {
  #svg;
  #legend;
  #series = []; // {name, className, points: [[step, loss]], line (its polyline)}
  #steps = 1; // the x axis' end
  #timer = 0; // the redraw due
  #drawn = 0; // when the last was
  #onDraw;
  #axesGroup = svg('g'); // the grid, the ticks and the axes' names
  #axes = ''; // the range they were drawn for
  #width = 640; // viewBox units across: the chart's CSS width, so that its text keeps its size on a phone

  // svg: the <svg> element (role="img"; its aria-label says the latest values); legend: a <ul>;
  // onDraw(): after each redraw (what else follows the steps is updated with the chart).
  constructor(svgElement, legend, onDraw = () => {}) {
    this.#svg = svgElement;
    this.#legend = legend;
    this.#onDraw = onDraw;
    this.#svg.setAttribute('viewBox', `0 0 ${this.#width} ${H}`);
    this.reset([], 1);
    new ResizeObserver(([entry]) => {
      const width = Math.round(entry.contentRect.width);
      if (width <= 0 || width === this.#width) return;
      this.#width = width;
      this.#svg.setAttribute('viewBox', `0 0 ${width} ${H}`);
      this.#axes = ''; // drawn again for the new width
      this.#draw();
    }).observe(svgElement);
  }

  // series: [{name, className}] (className styles the line: see style.css); steps: the x axis' end.
  reset(series, steps) {
    this.#series = series.map((s) => ({
      ...s,
      points: [],
      line: svg('polyline', { class: `chart-line line-${s.className}` }),
    }));
    this.#steps = Math.max(1, steps);
    this.#axes = '';
    this.#svg.replaceChildren(this.#axesGroup, ...this.#series.map((s) => s.line));
    clear(this.#legend);
    for (const s of this.#series) {
      const li = document.createElement('li');
      li.className = `legend-${s.className}`;
      li.textContent = s.name;
      this.#legend.append(li);
    }
    this.#draw();
  }

  // Adds a point to the series with index i (drawn soon).
  add(i, step, loss) {
    if (Number.isFinite(loss)) this.#series[i].points.push([step, loss]);
    if (this.#timer) return;
    const wait = Math.max(0, this.#drawn + DRAW_MS - performance.now());
    this.#timer = setTimeout(() => requestAnimationFrame(() => this.flush()), wait);
  }

  // Draws every point added, now.
  flush() {
    clearTimeout(this.#timer);
    this.#timer = 0;
    this.#drawn = performance.now();
    this.#draw();
    this.#onDraw();
  }

  // The points of each series (for the summary under the chart).
  get series() {
    return this.#series;
  }

  #draw() {
    const values = this.#series.flatMap((s) => s.points.map((p) => p[1]));
    let hi = values.length ? Math.max(...values) : 10,
      lo = values.length ? 0.9 * Math.min(...values) : 0;
    if (!(hi > lo)) hi = lo + 1;
    const step = tickStep(lo, hi, 4);
    [lo, hi] = [Math.floor(lo / step + 1e-9) * step, Math.ceil(hi / step - 1e-9) * step];
    const W = this.#width;
    const x = (s) => PAD.left + (s / this.#steps) * (W - PAD.left - PAD.right);
    const y = (loss) => PAD.top + ((hi - loss) / (hi - lo)) * (H - PAD.top - PAD.bottom);
    const axes = `${lo} ${hi} ${this.#steps}`;
    if (axes !== this.#axes) {
      this.#axes = axes;
      this.#drawAxes(x, y, ticks(lo, hi, step));
    }
    for (const s of this.#series) {
      s.line.setAttribute(
        'points',
        s.points.map(([at, loss]) => `${x(at).toFixed(1)},${y(loss).toFixed(1)}`).join(' '),
      );
      s.line.dataset.points = String(s.points.length);
    }
    const latest = this.#series
      .filter((s) => s.points.length)
      .map((s) => `${s.name} ${s.points.at(-1)[1].toFixed(3)} at step ${s.points.at(-1)[0]}`);
    this.#svg.setAttribute(
      'aria-label',
      latest.length ? `Loss against step: ${latest.join('; ')}.` : 'Loss against step: no steps yet.',
    );
  }

  // The grid, the ticks' labels and the axes' names, for the scales x and y.
  #drawAxes(x, y, yTicks) {
    const W = this.#width;
    const axes = svg('g', { class: 'chart-axes', 'aria-hidden': 'true' });
    for (const v of yTicks) {
      axes.append(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'chart-grid' }));
      const label = svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' });
      label.textContent = v.toFixed(v < 10 ? 1 : 0);
      axes.append(label);
    }
    for (const v of ticks(0, this.#steps, tickStep(0, this.#steps, 5))) {
      const label = svg('text', { x: x(v), y: H - PAD.bottom + 16, 'text-anchor': 'middle' });
      label.textContent = String(v);
      axes.append(label);
    }
    // The axes' names: "step" under the x axis, "loss" beside the y axis (turned, as it reads upward).
    const middle = { x: (PAD.left + W - PAD.right) / 2, y: (PAD.top + H - PAD.bottom) / 2 };
    const xName = svg('text', { x: middle.x, y: H - 4, 'text-anchor': 'middle', class: 'chart-axis-name' });
    xName.textContent = 'step';
    const yName = svg('text', {
      x: 14,
      y: middle.y,
      'text-anchor': 'middle',
      transform: `rotate(-90 14 ${middle.y})`,
      class: 'chart-axis-name',
    });
    yName.textContent = 'loss';
    axes.append(xName, yName);
    this.#axesGroup.replaceWith(axes);
    this.#axesGroup = axes;
  }
}
