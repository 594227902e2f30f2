// A prompt's tokens as chips tinted by a score each (saliency, a neuron's activation): blue for
// positive, red for negative, the strongest at full colour; each chip says its token and score in
// its accessible name and title. Chips can be selectable (Neurons: the token whose neurons show),
// one at a time (aria-pressed), by click or by Enter/Space, the arrow keys moving between them.
import { el } from './dom.mjs';
import { appendVisibleText, spokenText } from './token-text.mjs';
import { darkBackground, divergingColor, formatValue } from './value-grid.mjs';

export class ScoreChips {
  element; // the list
  #chips = [];
  #texts;
  #onSelect;
  #selected = -1;

  // texts: the tokens' texts; name: the list's accessible name; onSelect(i): makes the chips
  // buttons that select a token.
  constructor({ texts, name, onSelect = null }) {
    this.#texts = texts;
    this.#onSelect = onSelect;
    this.element = el('ul', { className: 'score-chips', attrs: { 'aria-label': name } });
    texts.forEach((text, i) => {
      const chip = appendVisibleText(
        el(onSelect ? 'button' : 'span', {
          className: 'chip',
          dataset: { index: i },
          attrs: onSelect ? { type: 'button', 'aria-pressed': 'false' } : { role: 'img' },
        }),
        text,
      );
      chip.setAttribute('aria-label', `#${i} ${spokenText(text)}`);
      if (onSelect) {
        chip.tabIndex = i === texts.length - 1 ? 0 : -1;
        chip.addEventListener('click', () => this.select(i));
        chip.addEventListener('keydown', (e) => this.#key(e, i));
      }
      this.#chips.push(chip);
      this.element.append(el('li', {}, chip));
    });
  }

  get selected() {
    return this.#selected;
  }

  // Tints the chips by scores (one per token), full colour at the largest magnitude; label(v):
  // the score in words for the accessible name (default: the number).
  tint(scores, { label = formatValue } = {}) {
    let scale = 0;
    for (const s of scores) if (Number.isFinite(s)) scale = Math.max(scale, Math.abs(s));
    this.#chips.forEach((chip, i) => {
      const v = scores[i];
      chip.style.background = divergingColor(v, scale);
      chip.classList.toggle('dark', darkBackground(v, scale));
      chip.dataset.score = String(v);
      const text = `#${i} ${spokenText(this.#texts[i])}: ${label(v)}`;
      chip.setAttribute('aria-label', text);
      chip.title = text;
    });
  }

  select(i) {
    if (!this.#onSelect || i < 0 || i >= this.#chips.length) return;
    this.#selected = i;
    this.#chips.forEach((chip, j) => {
      chip.setAttribute('aria-pressed', String(j === i));
      chip.tabIndex = j === i ? 0 : -1;
    });
    this.#onSelect(i);
  }

  #key(e, i) {
    const next = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: this.#chips.length - 1 }[e.key];
    if (next === undefined || next < 0 || next >= this.#chips.length) return;
    e.preventDefault();
    this.#chips[i].tabIndex = -1;
    this.#chips[next].tabIndex = 0;
    this.#chips[next].focus();
  }
}
