// "Next token": for the latest generation step, the ten most probable tokens of the distribution
// that step's token was drawn from (step.top: [{id, probability}], probability = softmax of the
// logits before temperature, most probable first), as a bar chart. The sampled token is marked.
import { clear, el } from './dom.mjs';
import { appendVisibleText, spokenText } from './token-text.mjs';

const PLACEHOLDER = '(available after the first generated token)';

export class NextTokenChart {
  #caption;
  #list;
  #version = 0;
  #pending = null;   // the latest step not drawn yet

  constructor(caption, list) {
    this.#caption = caption;
    this.#list = list;
  }

  reset() {
    ++this.#version;
    this.#pending = null;
    this.#caption.textContent = PLACEHOLDER;
    clear(this.#list);
  }

  // step: a GenerateStep; textOf(id) -> Promise<string>. Drawn at the next animation frame (only the
  // latest step of a frame). Generation asks for step.top (TOP_TOKENS of them).
  show(step, textOf) {
    const first = !this.#pending;
    this.#pending = { step, textOf };
    if (!first) return Promise.resolve();
    return new Promise((resolve) => requestAnimationFrame(resolve)).then(() => {
      if (!this.#pending) return undefined;   // reset meanwhile
      const { step: latest, textOf: f } = this.#pending;
      this.#pending = null;
      return this.#draw(latest, f);
    });
  }

  async #draw(step, textOf) {
    const version = ++this.#version;
    const texts = await Promise.all(step.top.map((t) => textOf(t.id)));
    if (version !== this.#version) return;   // a newer step already drew
    const max = Math.max(...step.top.map((t) => t.probability), 1e-9);
    this.#caption.textContent = `For token #${step.position}; the one sampled is marked ●.`;
    const items = step.top.map((t, i) => {
      const chosen = t.id === step.id;
      const pct = `${(100 * t.probability).toFixed(t.probability < 0.001 ? 3 : 1)}%`;
      const fill = el('span', { className: 'bar-fill' });
      fill.style.width = `${Math.max(0.5, (100 * t.probability) / max)}%`;
      const label = appendVisibleText(el('span', { className: 'bar-token' }), texts[i]);
      return el('li', {
        className: `bar${chosen ? ' chosen' : ''}`,
        dataset: { id: t.id, probability: t.probability },
        attrs: { 'aria-label': `${spokenText(texts[i])}, id ${t.id}: ${pct}${chosen ? ', sampled' : ''}` },
      },
      el('span', { className: 'bar-label', title: `id ${t.id}` }, label, chosen ? el('span', { className: 'chosen-mark' }, ' ●') : null),
      el('span', { className: 'bar-track' }, fill),
      el('span', { className: 'bar-value' }, pct));
    });
    this.#list.replaceChildren(...items);
  }
}
