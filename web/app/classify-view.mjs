// "Classification": a classifier's verdict on the prompt (model.classify, docs/js-api.md): its
// label and every label's probability, as bars on the page's absolute scale (probability-bars.mjs).
// The classifier reads the last token, the <|endoftext|> the page puts after the prompt (as
// `glassbox train --task classify` ended every example). With heads switched off, each label's row
// holds two bars: its probability with every head and without those heads.
import { el } from './dom.mjs';
import { bar, pairBar, pairLegend, percent } from './probability-bars.mjs';

export class ClassifyView {
  #verdict;
  #list;
  #legend = el('p'); // the key of the two bars' colours, shown before the list while heads are off

  constructor({ verdict, list }) {
    this.#verdict = verdict;
    this.#list = list;
  }

  // Nothing to show (yet): message says why.
  clear(message) {
    this.#verdict.textContent = message;
    this.#list.replaceChildren();
    this.#legend.remove();
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
    const kinds = ['all', 'masked'];
    this.#legend.remove();
    this.#legend = all ? pairLegend(['Every head', `${off[0].toUpperCase()}${off.slice(1)} off`], kinds) : el('p');
    if (all) this.#list.before(this.#legend);
    this.#list.replaceChildren(
      ...result.labels.map((name, i) => {
        const p = result.probabilities[i],
          the = i === best ? ', the label' : '';
        if (!all)
          return bar({
            label: name,
            p,
            spoken: `${name}: ${percent(p)}${the}`,
            dataset: { label: name, probability: p },
            chosen: i === best,
          });
        const every = all.probabilities[i];
        return pairBar({
          label: name,
          values: [every, p],
          kinds,
          spoken: `${name}: ${percent(p)} with ${off} off (every head: ${percent(every)})${the}`,
          dataset: { label: name, probability: p, all: every },
        });
      }),
    );
  }
}
