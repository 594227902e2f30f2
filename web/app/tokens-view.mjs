// The "Tokens" list: one chip per token (its text with visible whitespace; its id on hover, on
// focus and in data-id), prompt and generated tokens alike. A chip is a button in a list item:
// one Tab stop for the whole list (roving tabindex; arrow keys, Home and End move), Enter/Space
// selects. The selected token's attention over earlier tokens is painted on the chips.
import { clear, el, tint } from './dom.mjs';
import { appendVisibleText, isPartial, spokenText } from './token-text.mjs';

export class TokensView {
  #list;
  #detail;
  #chips = [];
  #selected = -1;
  #focusIndex = 0;
  #onSelect;

  constructor(list, detail, { onSelect }) {
    this.#list = list;
    this.#detail = detail;
    this.#onSelect = onSelect;
    list.addEventListener('click', (e) => {
      const chip = e.target.closest('.chip');
      if (chip) this.#toggle(Number(chip.dataset.index));
    });
    list.addEventListener('keydown', (e) => this.#key(e));
    list.addEventListener('focusin', (e) => {
      const chip = e.target.closest('.chip');
      if (chip) this.#describe(Number(chip.dataset.index));
    });
    list.addEventListener('pointerover', (e) => {
      const chip = e.target.closest('.chip');
      if (chip) this.#describe(Number(chip.dataset.index));
    });
  }

  get selected() {
    return this.#selected;
  }

  // tokens: [{id, text, generated}]
  reset(tokens) {
    clear(this.#list);
    this.#chips = [];
    this.#selected = -1;
    this.#focusIndex = 0;
    this.#detail.textContent = '';
    this.appendMany(tokens);
  }

  // tokens: [{id, text, generated}], appended in one change of the list.
  appendMany(tokens) {
    const items = document.createDocumentFragment();
    for (const t of tokens) items.append(this.#chip(t).parentElement);
    this.#list.append(items);
  }

  // A chip (inside its list item) for the next token, recorded but not yet in the list.
  #chip({ id, text, generated = false }) {
    const index = this.#chips.length;
    const chip = el('button', {
      type: 'button',
      className: `chip${generated ? ' generated' : ''}${isPartial(text) ? ' partial' : ''}`,
      tabIndex: index === this.#focusIndex ? 0 : -1,
      title: `id ${id}${isPartial(text) ? ' (part of a multi-byte character)' : ''}`,
      dataset: { id, index },
      attrs: { 'aria-pressed': 'false', 'aria-label': `${spokenText(text)}, id ${id}${generated ? ', model output' : ''}` },
    });
    appendVisibleText(chip, text);
    el('li', {}, chip);
    this.#chips.push({ chip, id, text, generated });
    return chip;
  }

  // Drop chips from `length` on (a new generation from the same prompt).
  truncate(length) {
    while (this.#chips.length > length) this.#chips.pop().chip.parentElement.remove();
    if (this.#selected >= length) this.select(-1);
    if (this.#focusIndex >= length) this.#setFocusIndex(Math.max(0, length - 1));
  }

  select(index, { notify = false } = {}) {
    const prev = this.#chips[this.#selected];
    prev?.chip.setAttribute('aria-pressed', 'false');
    this.#selected = index >= 0 && index < this.#chips.length ? index : -1;
    this.#chips[this.#selected]?.chip.setAttribute('aria-pressed', 'true');
    if (this.#selected >= 0) this.#setFocusIndex(this.#selected);
    if (notify) this.#onSelect(this.#selected);
  }

  // weights: attention of the selected token over keys 0..selected (null: not computed yet).
  // Each earlier chip is tinted by √weight (so that small weights stay visible; the detail line
  // under the list gives the exact numbers).
  highlight(weights) {
    this.#chips.forEach(({ chip }, i) => {
      tint(chip, weights && i < weights.length && i !== this.#selected ? weights[i] : 0);
    });
    if (this.#selected >= 0) this.#describe(this.#selected, weights);
  }

  #toggle(index) {
    this.select(index === this.#selected ? -1 : index, { notify: true });
  }

  #setFocusIndex(index) {
    this.#chips[this.#focusIndex]?.chip.setAttribute('tabindex', '-1');
    this.#focusIndex = index;
    this.#chips[index]?.chip.setAttribute('tabindex', '0');
  }

  #key(e) {
    const chip = e.target.closest('.chip');
    if (!chip) return;
    const i = Number(chip.dataset.index), n = this.#chips.length;
    const moves = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: n - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const j = Math.min(n - 1, Math.max(0, moves[e.key]));
    this.#setFocusIndex(j);
    this.#chips[j].chip.focus();
  }

  // One line under the list: the token under the pointer / in focus, and, for the selected token,
  // the earlier tokens it attends to most.
  #describe(index, weights) {
    const t = this.#chips[index];
    if (!t) return;
    let line = `#${index}: ${spokenText(t.text)} — id ${t.id}${t.generated ? ' (model output)' : ''}`;
    if (index === this.#selected) {
      if (weights) {
        const top = Array.from(weights, (w, k) => [w, k]).sort((a, b) => b[0] - a[0]).slice(0, 3);
        line += `. Attends most to ${top.map(([w, k]) => `#${k} ${spokenText(this.#chips[k].text)} ${(100 * w).toFixed(1)}%`).join(', ')}.`;
      } else {
        line += '. Its attention row comes with the next generated token.';
      }
    }
    this.#detail.textContent = line;
  }
}
