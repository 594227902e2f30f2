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
  #inView = true;
  #hidden = null; // the latest step shown while the chart was out of view: drawn when it comes in

  constructor(caption, list) {
    this.#caption = caption;
    this.#list = list;
    new IntersectionObserver(([entry]) => {
      this.#inView = entry.isIntersecting;
      if (this.#inView && this.#hidden) this.show(this.#hidden.step, this.#hidden.textOf);
    }).observe(list.parentElement);
  }

  reset() {
    ++this.#version;
    this.#hidden = null;
    this.#caption.textContent = PLACEHOLDER;
    clear(this.#list);
    this.#showCompare(false);
  }

  // step: a GenerateStep; textOf(id) -> Promise<string>. Drawn at once (the page calls it from
  // its frame), or, while the chart is scrolled out of view, when it comes into view; of steps
  // shown in quick succession, the latest wins. Generation asks for step.top (TOP_TOKENS of them).
  show(step, textOf) {
    this.#hidden = this.#inView ? null : { step, textOf };
    return this.#inView ? this.#draw(step, textOf) : Promise.resolve();
  }

  // Draws the latest step shown while out of view (the end of a generation: the chart then holds
  // its last step, in view or not).
  flush() {
    const hidden = this.#hidden;
    this.#hidden = null;
    return hidden ? this.#draw(hidden.step, hidden.textOf) : Promise.resolve();
  }

  async #draw(step, textOf) {
    const version = ++this.#version;
    const texts = await Promise.all(step.top.map((t) => textOf(t.id)));
    if (version !== this.#version) return; // a newer step already drew
    this.#showCompare(false);
    this.#caption.textContent = `For token #${step.position}; the one sampled is marked ●.`;
    this.#list.replaceChildren(...tokenBars(step.top, texts, step.id));
  }

  // With heads switched off: the next token's distribution after `position` with every head
  // (all) and without the silenced ones (masked), side by side; each a list of {id, probability},
  // most probable first. label names the heads that are off.
  async compare(position, all, masked, label, textOf) {
    const version = ++this.#version;
    this.#hidden = null;
    const [allTexts, maskedTexts] = await Promise.all(
      [all, masked].map((top) => Promise.all(top.map((t) => textOf(t.id)))),
    );
    if (version !== this.#version) return;
    this.#caption.textContent = `After token #${position}: the ten likeliest next tokens with every head, and with ${label} off.`;
    clear(this.#list);
    document.getElementById('next-masked-caption').textContent = `${label[0].toUpperCase()}${label.slice(1)} off`;
    document.getElementById('next-bars-all').replaceChildren(...tokenBars(all, allTexts, null));
    document.getElementById('next-bars-masked').replaceChildren(...tokenBars(masked, maskedTexts, null));
    this.#showCompare(true);
  }

  #showCompare(on) {
    document.getElementById('next-compare').hidden = !on;
    this.#list.hidden = on;
  }
}

// The n most probable tokens of softmax(logits), as the engine's most_probable gives them: most
// probable first, ties to the lower id (probabilities computed in doubles).
export function mostProbable(logits, n) {
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x);
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  const order = Array.from(logits.keys())
    .sort((a, b) => logits[b] - logits[a] || a - b)
    .slice(0, n);
  return order.map((id) => ({ id, probability: Math.exp(logits[id] - max) / sum }));
}

// The bars (li elements) of a distribution's top tokens (texts: theirs); chosenId's is marked as
// sampled.
export function tokenBars(top, texts, chosenId) {
  const max = Math.max(...top.map((t) => t.probability), 1e-9);
  return top.map((t, i) => {
    const chosen = t.id === chosenId;
    const pct = `${(100 * t.probability).toFixed(t.probability < 0.001 ? 3 : 1)}%`;
    const fill = el('span', { className: 'bar-fill' });
    fill.style.width = `${Math.max(0.5, (100 * t.probability) / max)}%`;
    const label = appendVisibleText(el('span', { className: 'bar-token' }), texts[i]);
    return el(
      'li',
      {
        className: `bar${chosen ? ' chosen' : ''}`,
        dataset: { id: t.id, probability: t.probability },
        attrs: { 'aria-label': `${spokenText(texts[i])}, id ${t.id}: ${pct}${chosen ? ', sampled' : ''}` },
      },
      el(
        'span',
        { className: 'bar-label', title: `id ${t.id}` },
        label,
        chosen ? el('span', { className: 'chosen-mark' }, ' ●') : null,
      ),
      el('span', { className: 'bar-track' }, fill),
      el('span', { className: 'bar-value' }, pct),
    );
  });
}
