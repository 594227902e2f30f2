// The Train panel's loss chart: loss (nats) against step for one or more series (a run's training
// loss, its held-out loss; two runs when one head is compared with many), drawn as SVG polylines.
// The y axis spans what the series hold, from 0.9 x their lowest to their highest value, so that
// the fall after the first steps stays visible; the x axis spans the run's steps.
// Redrawn at most once per animation frame however fast the steps arrive.
import { clear } from './dom.mjs';

const SVG = 'http://www.w3.org/2000/svg';
const W = 640,
  H = 260; // viewBox units
const PAD = { left: 58, right: 12, top: 10, bottom: 38 }; // room for the ticks and the axes' names

const svg = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
};

// Round numbers for axis ticks: about `count` of them between lo and hi.
function ticks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(1, count),
    mag = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

export class LossChart {
  #svg;
  #legend;
  #series = []; // {name, className, points: [[step, loss]], line}
  #steps = 1; // the x axis' end
  #frame = 0;

  // svg: the <svg> element (role="img"; its aria-label says the latest values); legend: a <ul>.
  constructor(svgElement, legend) {
    this.#svg = svgElement;
    this.#legend = legend;
    this.#svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    this.reset([], 1);
  }

  // series: [{name, className}] (className styles the line: see style.css); steps: the x axis' end.
  reset(series, steps) {
    this.#series = series.map((s) => ({ ...s, points: [] }));
    this.#steps = Math.max(1, steps);
    clear(this.#legend);
    for (const s of this.#series) {
      const li = document.createElement('li');
      li.className = `legend-${s.className}`;
      li.textContent = s.name;
      this.#legend.append(li);
    }
    this.#draw();
  }

  // Adds a point to the series with index i.
  add(i, step, loss) {
    if (!Number.isFinite(loss)) return;
    this.#series[i].points.push([step, loss]);
    this.#frame ||= requestAnimationFrame(() => {
      this.#frame = 0;
      this.#draw();
    });
  }

  // The points of each series (for the summary under the chart).
  get series() {
    return this.#series;
  }

  #draw() {
    clear(this.#svg);
    const values = this.#series.flatMap((s) => s.points.map((p) => p[1]));
    const hi = values.length ? Math.max(...values) : 10,
      lo = values.length ? 0.9 * Math.min(...values) : 0;
    const top = hi > lo ? hi : lo + 1;
    const x = (step) => PAD.left + (step / this.#steps) * (W - PAD.left - PAD.right);
    const y = (loss) => PAD.top + ((top - loss) / (top - lo)) * (H - PAD.top - PAD.bottom);
    const axes = svg('g', { class: 'chart-axes', 'aria-hidden': 'true' });
    for (const v of ticks(lo, top, 4)) {
      axes.append(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'chart-grid' }));
      const label = svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' });
      label.textContent = v.toFixed(v < 10 ? 1 : 0);
      axes.append(label);
    }
    for (const v of ticks(0, this.#steps, 5)) {
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
    this.#svg.append(axes);
    for (const s of this.#series) {
      const points = s.points.map(([step, loss]) => `${x(step).toFixed(1)},${y(loss).toFixed(1)}`).join(' ');
      this.#svg.append(
        svg('polyline', { points, class: `chart-line line-${s.className}`, 'data-points': s.points.length }),
      );
    }
    const latest = this.#series
      .filter((s) => s.points.length)
      .map((s) => `${s.name} ${s.points.at(-1)[1].toFixed(3)} at step ${s.points.at(-1)[0]}`);
    this.#svg.setAttribute(
      'aria-label',
      latest.length ? `Loss against step: ${latest.join('; ')}.` : 'Loss against step: no steps yet.',
    );
  }
}
