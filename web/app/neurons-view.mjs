// The Neurons experiment's result: the clean prompt's tokens as chips (select one), the selected
// token's K most active MLP neurons in each layer (forward's { neurons: K }), each a button; a
// neuron pressed is fetched over the whole prompt (forward's { neuron }) and tints the chips.
import { clear, el } from './dom.mjs';
import { spokenText } from './token-text.mjs';
import { ScoreChips } from './score-chips.mjs';
import { formatValue } from './value-grid.mjs';

export class NeuronsView {
  #root;
  #chips = null;
  #table = null;
  #caption = null;
  #data = null; // {texts, neurons}
  #pressed = null; // {layer, index}
  #activation; // (layer, index) -> Promise<Float32Array>
  #onNeuron; // ({layer, index, values}) -> void: a neuron shown
  #onError;

  constructor(root, { activation, onNeuron, onError }) {
    this.#root = root;
    this.#activation = activation;
    this.#onNeuron = onNeuron;
    this.#onError = onError;
  }

  clear() {
    this.#data = null;
    this.#pressed = null;
    clear(this.#root);
  }

  // texts: the prompt's token texts; neurons: [layer][position][K] of {index, value}.
  show(texts, neurons) {
    this.#data = { texts, neurons };
    this.#pressed = null;
    this.#chips = new ScoreChips({ texts, name: 'Prompt tokens', onSelect: (i) => this.#showToken(i) });
    this.#caption = el('p', { className: 'small exp-neuron-caption', attrs: { 'aria-live': 'polite' } });
    this.#table = el('table', { className: 'neuron-table', attrs: { 'aria-label': 'Top neurons' } });
    this.#root.replaceChildren(
      this.#chips.element,
      this.#caption,
      el('div', { className: 'neuron-table-scroll' }, this.#table),
    );
    this.#chips.select(texts.length - 1);
  }

  #showToken(position) {
    const { texts, neurons } = this.#data;
    if (!this.#pressed)
      this.#caption.textContent = `Token #${position} ${spokenText(texts[position])}: its most active neurons in each layer (index: activation). Press one to see it over the prompt.`;
    const rows = neurons.map((layer, l) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, `Layer ${l}`),
        ...layer[position].map(({ index, value }) => {
          const pressed = this.#pressed?.layer === l && this.#pressed?.index === index;
          const button = el(
            'button',
            {
              type: 'button',
              className: 'neuron',
              dataset: { layer: l, index, value: String(value) },
              attrs: {
                'aria-pressed': String(pressed),
                'aria-label': `Layer ${l} neuron ${index}: ${formatValue(value)}`,
              },
              on: { click: () => this.#pressNeuron(l, index) },
            },
            // shown as "index: value" (the row names the layer), which its name holds whole
            el('span', { className: 'neuron-index' }, String(index)),
            ': ',
            el('span', { className: 'neuron-value' }, formatValue(value)),
          );
          return el('td', {}, button);
        }),
      ),
    );
    this.#table.replaceChildren(el('tbody', {}, ...rows));
  }

  async #pressNeuron(layer, index) {
    this.#pressed = { layer, index };
    for (const b of this.#table.querySelectorAll('button.neuron'))
      b.setAttribute('aria-pressed', String(Number(b.dataset.layer) === layer && Number(b.dataset.index) === index));
    const data = this.#data;
    try {
      const values = await this.#activation(layer, index);
      if (this.#data !== data) return; // another run meanwhile
      this.#chips.tint(values);
      let top = 0;
      values.forEach((v, i) => {
        if (v > values[top]) top = i;
      });
      this.#caption.textContent =
        `Layer ${layer} neuron ${index} over the prompt: strongest at #${top} ${spokenText(data.texts[top])} ` +
        `(${formatValue(values[top])}). Blue: active; red: negative.`;
      this.#onNeuron({ layer, index, values });
    } catch (e) {
      this.#onError(e);
    }
  }
}
