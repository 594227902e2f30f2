// "Classification": a classifier's verdict on the prompt (model.classify, docs/js-api.md): its
// label and every label's probability, as bars. The classifier reads the last token, the
// <|endoftext|> the page puts after the prompt (as `glassbox train --task classify` ended every
// example). With heads switched off, each label's probability with every head stands beside it.
import { el } from './dom.mjs';

const percent = (p) => `${(100 * p).toFixed(p < 0.001 ? 3 : 1)}%`;

export class ClassifyView {
  #verdict;
  #list;

  constructor({ verdict, list }) {
    this.#verdict = verdict;
    this.#list = list;
  }

  // Nothing to show (yet): message says why.
  clear(message) {
    this.#verdict.textContent = message;
    this.#list.replaceChildren();
  }

  // result: {label, labels, probabilities} of the model as the page runs it; all: the same with
  // every head (when heads are off, else null), and off: which heads are off ("head L0 H3").
  show(result, all = null, off = '') {
    const best = result.labels.indexOf(result.label);
    this.#verdict.replaceChildren(
      'Label: ',
      el('strong', {}, result.label),
      ` (${percent(result.probabilities[best])})`,
      all
        ? `, with ${off} off; with every head: ${all.label} (${percent(all.probabilities[all.labels.indexOf(all.label)])})`
        : '',
    );
    this.#list.replaceChildren(
      ...result.labels.map((name, i) => {
        const p = result.probabilities[i],
          fill = el('span', { className: 'bar-fill' });
        fill.style.width = `${Math.max(0.5, 100 * p)}%`;
        const everyHead = all ? ` (every head: ${percent(all.probabilities[i])})` : '';
        return el(
          'li',
          {
            className: `bar${i === best ? ' chosen' : ''}`,
            dataset: { label: name, probability: p },
            attrs: { 'aria-label': `${name}: ${percent(p)}${everyHead}${i === best ? ', the label' : ''}` },
          },
          el('span', { className: 'bar-label' }, name),
          el('span', { className: 'bar-track' }, fill),
          el(
            'span',
            { className: 'bar-value' },
            percent(p),
            all ? el('span', { className: 'muted small' }, ` / ${percent(all.probabilities[i])}`) : null,
          ),
        );
      }),
    );
  }
}
