// Direct logit attribution's result (model.attribute): a signed bar per head in a layer × head
// grid (value-grid.mjs), a signed bar per MLP and for the embeddings and biases, all on one scale
// (the largest part's magnitude), and the total they sum to.
import { clear, el } from './dom.mjs';
import { formatValue, ValueGrid } from './value-grid.mjs';

export class AttributionView {
  #root;

  constructor(root) {
    this.#root = root;
  }

  clear() {
    clear(this.#root);
  }

  // result: model.attribute's; metric: the metric in words ("logit(“ Mary”) − logit(“ John”)").
  show(result, metric) {
    const { heads, mlp } = result;
    // The heads' bars on their own scale (a head's part is often far smaller than an MLP's or the
    // biases', which would leave every head's bar a sliver); the MLPs' and the rest on theirs.
    let headScale = 0,
      scale = Math.max(Math.abs(result.embed), Math.abs(result.posEmbed), Math.abs(result.bias));
    for (const row of heads) for (const v of row) headScale = Math.max(headScale, Math.abs(v));
    for (const v of mlp) scale = Math.max(scale, Math.abs(v));
    const grid = new ValueGrid({
      name: 'Heads',
      caption:
        '— each head’s output through the output projection (bar to the right: toward the answer; ' +
        `full width: ${formatValue(headScale)}).`,
      rowNames: heads.map((_, l) => ({ label: String(l), spoken: `layer ${l}` })),
      colNames: Array.from(heads[0] ?? [], (_, h) => ({ label: String(h), spoken: `head ${h}` })),
      mode: 'bar',
      scale: headScale,
    });
    grid.setAll(heads);
    const part = (label, v, dataset) =>
      el(
        'li',
        {
          className: 'signed-bar',
          dataset: { value: String(v), ...dataset },
          attrs: { 'aria-label': `${label}: ${formatValue(v)}` },
        },
        el('span', { className: 'bar-label' }, label),
        signedTrack(v, scale),
        el('span', { className: 'bar-value' }, formatValue(v)),
      );
    const mlpList = el(
      'ol',
      { className: 'signed-bars', attrs: { 'aria-label': 'MLPs' } },
      ...Array.from(mlp, (v, l) => part(`MLP ${l}`, v, { layer: l })),
    );
    const others = el(
      'ul',
      { className: 'signed-bars', attrs: { 'aria-label': 'Other parts' } },
      part('Token embedding', result.embed, { part: 'embed' }),
      part('Position embedding', result.posEmbed, { part: 'pos_embed' }),
      part('Biases', result.bias, { part: 'bias' }),
    );
    this.#root.replaceChildren(
      el(
        'p',
        { className: 'exp-total' },
        `${metric} = `,
        el('strong', {}, formatValue(result.total)),
        el(
          'span',
          { className: 'muted small' },
          ` (the parts below sum to it; rounding leaves ${result.residual.toExponential(1).replace('-', '−')})`,
        ),
      ),
      el(
        'div',
        { className: 'exp-attr-layout' },
        grid.element,
        el('div', {}, el('h3', {}, 'MLPs'), mlpList, el('h3', {}, 'Embeddings and biases'), others),
      ),
    );
  }
}

// A track with the zero in the middle and a bar to the right (positive) or to the left.
function signedTrack(v, scale) {
  const w = Math.min(50, (50 * Math.abs(v)) / (scale || 1));
  const fill = el('span', { className: `signed-fill${v < 0 ? ' negative' : ''}` });
  fill.style.width = `${w}%`;
  fill.style.left = v < 0 ? `${50 - w}%` : '50%';
  return el('span', { className: 'signed-track' }, fill);
}
