// The "Tokens" list: one chip per token (its text with visible whitespace; its id on hover, on
// focus and in data-id), prompt and generated tokens alike. A chip is a button in a list item:
// one Tab stop for the whole list (roving tabindex; arrow keys, Home and End move), Enter/Space
// selects. The selected token's attention over the tokens it sees (the earlier ones; every other
// one for a bidirectional model) is painted on the chips.
//
// The list is virtualized: chip-rows.mjs places every chip, and only the chips of the rows in view
// (a few rows more on each side, and the chip holding the Tab stop) are in the DOM, absolutely
// positioned in a list as tall as all rows. Each item carries aria-posinset / aria-setsize, and the
// list its token count in data-count (data-generated: how many are model output). While the view
// is at the end, it follows new tokens.
import { el, tint } from './dom.mjs';
import { ChipRows } from './chip-rows.mjs';
import { appendVisibleText, isPartial, spokenText } from './token-text.mjs';

const OVERSCAN = 4; // rows kept in the DOM above and below the view

export class TokensView {
  #scroller;
  #list;
  #detail;
  #onSelect;
  #tokens = []; // {id, text, generated}
  #generated = 0; // how many of them are model output
  #rows = new ChipRows();
  #shown = new Map(); // index -> {item, chip}, in the DOM
  #special = new Set(); // ids of the model's special tokens
  #weights = null; // the selected token's attention (see highlight)
  #why = ''; // why there are no weights
  #selected = -1;
  #focusIndex = 0;
  #view = { top: 0, height: 0, width: 0 }; // the scroller's, as last seen (no layout reads per frame)
  #scrollTo = null; // scrollTop to set after the next layout (following the end)

  constructor(list, detail, { onSelect }) {
    this.#scroller = list.parentElement;
    this.#list = list;
    this.#detail = detail;
    this.#onSelect = onSelect;
    const chipOf = (e) => e.target.closest('.chip');
    list.addEventListener('click', (e) => {
      const chip = chipOf(e);
      if (chip) this.#toggle(Number(chip.dataset.index));
    });
    list.addEventListener('keydown', (e) => this.#key(e));
    for (const type of ['focusin', 'pointerover']) {
      list.addEventListener(type, (e) => {
        const chip = chipOf(e);
        if (chip) this.#describe(Number(chip.dataset.index));
      });
    }
    this.#scroller.addEventListener(
      'scroll',
      () => {
        this.#view.top = this.#scroller.scrollTop;
        this.#render();
      },
      { passive: true },
    );
    const observer = new ResizeObserver((entries) => {
      for (const { target, contentRect } of entries) {
        if (target !== this.#scroller) continue;
        const widthChanged = Math.abs(contentRect.width - this.#view.width) >= 1;
        this.#view.width = contentRect.width;
        this.#view.height = contentRect.height;
        if (widthChanged) this.#relayout();
      }
      if (this.#scrollTo !== null) this.#scroller.scrollTop = this.#scrollTo;
      this.#scrollTo = null;
      this.#view.top = this.#scroller.scrollTop; // as set, or clamped if the list shrank
      this.#render();
    });
    observer.observe(this.#scroller);
    observer.observe(list);
  }

  get selected() {
    return this.#selected;
  }

  // The model's special tokens (model.specialTokenIds): their chips are marked, and named so.
  setSpecial(ids) {
    this.#special = new Set(ids);
  }

  // tokens: [{id, text, generated}]
  reset(tokens) {
    for (const { item } of this.#shown.values()) item.remove();
    this.#shown.clear();
    this.#tokens = [];
    this.#generated = 0;
    this.#rows.truncate(0);
    this.#weights = null;
    this.#selected = -1;
    this.#focusIndex = 0;
    this.#detail.textContent = '';
    this.#scroller.scrollTop = this.#view.top = 0;
    this.#scrollTo = null;
    this.appendMany(tokens, { follow: false }); // a new text shows from its first token
  }

  // tokens: [{id, text, generated}], appended in one change of the list. follow: whether the view
  // moves to the new end (by default, when it was at the end).
  appendMany(tokens, { follow = this.#atEnd() } = {}) {
    this.#tokens.push(...tokens);
    for (const t of tokens) if (t.generated) ++this.#generated;
    if (!this.#rows.calibrated) return this.#relayout(follow);
    this.#rows.append(tokens.map((t) => t.text));
    this.#sized(follow);
  }

  // Drop tokens from `length` on (a new generation from the same prompt).
  truncate(length) {
    if (length >= this.#tokens.length) return;
    this.#tokens.length = length;
    this.#generated = this.#tokens.filter((t) => t.generated).length;
    this.#rows.truncate(length);
    if (this.#selected >= length) this.select(-1);
    if (this.#focusIndex >= length) this.#setFocusIndex(Math.max(0, length - 1));
    this.#sized(false);
  }

  // external: selected elsewhere (the heatmap), so the chip is scrolled into view.
  select(index, { notify = false } = {}) {
    this.#shown.get(this.#selected)?.chip.setAttribute('aria-pressed', 'false');
    this.#selected = index >= 0 && index < this.#tokens.length ? index : -1;
    this.#shown.get(this.#selected)?.chip.setAttribute('aria-pressed', 'true');
    if (this.#selected >= 0) {
      this.#setFocusIndex(this.#selected);
      if (!notify) this.#reveal(this.#selected);
    }
    if (notify) this.#onSelect(this.#selected);
  }

  // weights: attention of the selected token over the keys it sees (0..selected, or every key for a
  // bidirectional model), or null (why: why not, for the detail line). Each chip seen is tinted by
  // √weight (so that small weights stay visible; the detail line under the list gives the exact
  // numbers).
  highlight(weights, why = '') {
    this.#weights = weights;
    this.#why = why;
    for (const [i, { chip }] of this.#shown) this.#tint(chip, i);
    if (this.#selected >= 0) this.#describe(this.#selected);
  }

  #tint(chip, i) {
    const w = this.#weights;
    tint(chip, w && i < w.length && i !== this.#selected ? w[i] : 0);
  }

  // The whole layout again (first use, or the list's width changed): every chip's place, those in
  // the DOM moved to theirs (the same elements, so that focus stays where it is).
  #relayout(follow = this.#atEnd()) {
    if (!this.#rows.calibrated) {
      const probe = (partial) =>
        this.#list.appendChild(
          el('li', {}, el('button', { type: 'button', className: `chip${partial ? ' partial' : ''}` }, 'M')),
        ).firstChild;
      const plain = probe(false),
        partial = probe(true);
      const ok = this.#rows.calibrate(plain, partial);
      plain.parentElement.remove();
      partial.parentElement.remove();
      if (!ok) return;
    }
    this.#rows.relayout(
      this.#tokens.map((t) => t.text),
      this.#view.width || this.#list.clientWidth,
    );
    for (const [i, { item }] of this.#shown) this.#place(item, i);
    this.#sized(follow);
  }

  // After the rows changed: the list's height, the view following the end, the chips in view.
  // The scroll position is computed here but set once the list has its new height (after the
  // next layout, in the ResizeObserver): setting it now would force a layout of the page.
  #sized(follow) {
    const height = this.#rows.height;
    this.#list.style.height = `${height}px`;
    this.#list.dataset.count = String(this.#tokens.length);
    this.#list.dataset.generated = String(this.#generated);
    if (follow) this.#scrollTo = this.#view.top = Math.max(0, height - this.#view.height);
    this.#render();
  }

  #atEnd() {
    return this.#view.top + this.#view.height >= this.#rows.height - 8;
  }

  // Puts the chips of the rows in view in the DOM, in token order, and takes out the others.
  #render() {
    const [first, end] = this.#rows.range(this.#view.top, this.#view.top + this.#view.height, OVERSCAN);
    const keep = (i) => (i >= first && i < end) || i === this.#focusIndex;
    for (const [i, { item }] of this.#shown) {
      if (!keep(i) || i >= this.#tokens.length) {
        item.remove();
        this.#shown.delete(i);
      }
    }
    const wanted = [];
    for (let i = first; i < end; ++i) wanted.push(i);
    if (this.#focusIndex < this.#tokens.length && !(this.#focusIndex >= first && this.#focusIndex < end)) {
      wanted.push(this.#focusIndex);
      wanted.sort((a, b) => a - b);
    }
    const present = [...this.#shown.keys()].sort((a, b) => a - b);
    let k = 0; // present[k]: the first chip in the DOM after token i
    const setsize = String(this.#tokens.length);
    for (const i of wanted) {
      while (k < present.length && present[k] < i) ++k;
      if (present[k] === i) {
        this.#shown.get(i).item.setAttribute('aria-setsize', setsize);
        continue;
      }
      const shown = this.#item(i);
      shown.item.setAttribute('aria-setsize', setsize);
      this.#list.insertBefore(shown.item, k < present.length ? this.#shown.get(present[k]).item : null);
      this.#shown.set(i, shown);
    }
  }

  #item(index) {
    const { id, text, generated = false } = this.#tokens[index];
    const special = this.#special.has(id);
    const chip = el('button', {
      type: 'button',
      className: `chip${generated ? ' generated' : ''}${isPartial(text) ? ' partial' : ''}${special ? ' special' : ''}`,
      tabIndex: index === this.#focusIndex ? 0 : -1,
      title: `id ${id}${isPartial(text) ? ' (part of a multi-byte character)' : ''}${special ? ' (special token)' : ''}`,
      dataset: { id, index },
      attrs: {
        'aria-pressed': String(index === this.#selected),
        'aria-label': `${spokenText(text)}, id ${id}${special ? ', special token' : ''}${generated ? ', model output' : ''}`,
      },
    });
    appendVisibleText(chip, text);
    this.#tint(chip, index);
    const item = el('li', { attrs: { 'aria-posinset': index + 1 } }, chip);
    this.#place(item, index);
    return { item, chip };
  }

  #place(item, index) {
    if (index >= this.#rows.length) return; // (dropped by a truncate; #render takes it out)
    item.style.left = `${this.#rows.x[index]}px`;
    item.style.top = `${this.#rows.row[index] * this.#rows.pitch}px`;
  }

  // Scrolls the list so that token `index` is in view.
  #reveal(index) {
    const top = this.#rows.row[index] * this.#rows.pitch,
      bottom = top + this.#rows.pitch;
    const v = this.#view;
    if (top >= v.top && bottom <= v.top + v.height) return;
    this.#scroller.scrollTop = v.top = Math.max(0, top - (v.height - this.#rows.pitch) / 2);
    this.#render();
  }

  #toggle(index) {
    this.select(index === this.#selected ? -1 : index, { notify: true });
  }

  #setFocusIndex(index) {
    this.#shown.get(this.#focusIndex)?.chip.setAttribute('tabindex', '-1');
    this.#focusIndex = index;
    this.#shown.get(index)?.chip.setAttribute('tabindex', '0');
    this.#render();
  }

  #key(e) {
    const chip = e.target.closest('.chip');
    if (!chip) return;
    const i = Number(chip.dataset.index),
      n = this.#tokens.length;
    const moves = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: n - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const j = Math.min(n - 1, Math.max(0, moves[e.key]));
    this.#setFocusIndex(j);
    this.#reveal(j);
    this.#shown.get(j).chip.focus();
  }

  // One line under the list: the token under the pointer / in focus, and, for the selected token,
  // the tokens it attends to most.
  #describe(index) {
    const t = this.#tokens[index],
      weights = this.#weights;
    if (!t) return;
    let line = `#${index}: ${spokenText(t.text)} — id ${t.id}${t.generated ? ' (model output)' : ''}`;
    if (index === this.#selected) {
      if (weights) {
        const top = Array.from(weights, (w, k) => [w, k])
          .sort((a, b) => b[0] - a[0])
          .slice(0, 3);
        line += `. Attends most to ${top.map(([w, k]) => `#${k} ${spokenText(this.#tokens[k].text)} ${(100 * w).toFixed(1)}%`).join(', ')}.`;
      } else if (this.#why) {
        line += `. ${this.#why}`;
      }
    }
    this.#detail.textContent = line;
  }
}
