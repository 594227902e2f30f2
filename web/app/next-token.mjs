// "Next token": for the latest generation step, the ten most probable tokens of the distribution
// that step's token was drawn from (step.top: [{id, probability}], probability = softmax of the
// logits before temperature, most probable first), as a bar chart on the page's absolute scale
// (probability-bars.mjs). The sampled token is marked. With heads switched off, the distribution
// with every head and without them, one row per token with both bars.
import { clear, el } from './dom.mjs';
import { mostProbable, pairBar, pairLegend, percent, softmaxOf, tokenBars } from './probability-bars.mjs';
import { appendVisibleText, spokenText } from './token-text.mjs';

const PLACEHOLDER = '(available after the first generated token)';

export class NextTokenChart {
  #caption;
  #list;
  #version = 0;
  #inView = true;
  #hidden = null; // the latest step shown while the chart was out of view: drawn when it comes in
  #last = null; // the latest step drawn, {step, textOf}: drawn again when a comparison ends

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
    this.#last = null;
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

  // Ends a comparison (every head is on again): the latest step's chart, as it was before.
  restore() {
    if (!this.#last) return this.reset();
    return this.#draw(this.#last.step, this.#last.textOf);
  }

  async #draw(step, textOf) {
    const version = ++this.#version;
    this.#last = { step, textOf };
    const texts = await Promise.all(step.top.map((t) => textOf(t.id)));
    if (version !== this.#version) return; // a newer step already drew
    this.#showCompare(false);
    this.#caption.textContent = `For token #${step.position}; the one sampled is marked ●.`;
    this.#list.replaceChildren(...tokenBars(step.top, texts, step.id));
  }

  // With heads switched off: the next token's distribution after `position` with every head
  // (allLogits, the last position's V logits) and without the silenced ones (maskedLogits). One
  // row for each token among either's ten likeliest, most probable (under either) first, with its
  // probability under both as two bars on the same scale. label names the heads that are off.
  async compare(position, allLogits, maskedLogits, label, textOf) {
    const version = ++this.#version;
    this.#hidden = null;
    const all = softmaxOf(allLogits),
      masked = softmaxOf(maskedLogits);
    const ids = [...new Set([...mostProbable(allLogits, 10), ...mostProbable(maskedLogits, 10)].map((t) => t.id))];
    const rows = ids
      .map((id) => ({ id, all: all(id), masked: masked(id) }))
      .sort((a, b) => Math.max(b.all, b.masked) - Math.max(a.all, a.masked) || a.id - b.id);
    const texts = await Promise.all(rows.map((r) => textOf(r.id)));
    if (version !== this.#version) return;
    const off = `${label} off`;
    this.#caption.textContent = `After token #${position}: the ten likeliest next tokens with every head and the ten with ${off}; each row gives a token's probability both ways.`;
    clear(this.#list);
    const kinds = ['all', 'masked'];
    document.getElementById('next-compare').replaceChildren(
      pairLegend(['Every head', `${off[0].toUpperCase()}${off.slice(1)}`], kinds),
      el(
        'ol',
        { id: 'next-compare-bars', className: 'bars', attrs: { 'aria-labelledby': 'next-caption' } },
        ...rows.map((r, i) =>
          pairBar({
            label: appendVisibleText(el('span', { className: 'bar-token' }), texts[i]),
            values: [r.all, r.masked],
            kinds,
            spoken: `${spokenText(texts[i])}, id ${r.id}: ${percent(r.all)} with every head, ${percent(r.masked)} with ${off}`,
            dataset: { id: r.id, all: r.all, masked: r.masked },
            title: `id ${r.id}`,
          }),
        ),
      ),
    );
    this.#showCompare(true);
  }

  #showCompare(on) {
    document.getElementById('next-compare').hidden = !on;
    this.#list.hidden = on;
  }
}
