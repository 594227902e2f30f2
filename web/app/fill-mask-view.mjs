// "Fill mask": a masked LM's guesses at each mask in the prompt. The model is bidirectional: every
// position sees the whole text, later tokens too, so the guess at a mask uses both sides of it.
// For each mask, its likeliest tokens (the softmax of that position's logits, from the same pass
// that gives the attention map), and the text with every mask replaced by its first guess
// (marked, whitespace made visible as on the token chips).
import { el } from './dom.mjs';
import { mostProbable, tokenBars } from './next-token.mjs';
import { appendVisibleText } from './token-text.mjs';

export const FILL_TOKENS = 5;

export class FillMaskView {
  #caption;
  #list;
  #version = 0;

  constructor({ caption, list }) {
    this.#caption = caption;
    this.#list = list;
  }

  // Nothing to show (yet): message says why.
  clear(message) {
    ++this.#version;
    this.#caption.textContent = message;
    this.#list.replaceChildren();
  }

  // ids: the prompt's tokens; logits: (T, V) of its pass; maskId: the model's mask token;
  // textOf(id) and detokenize(ids): the model's, as promises. Of calls in quick succession, the
  // latest is drawn.
  async show(ids, logits, maskId, { textOf, detokenize }) {
    const version = ++this.#version,
      V = logits.length / ids.length;
    const guesses = [];
    for (const [position, id] of ids.entries()) {
      if (id !== maskId) continue;
      const top = mostProbable(logits.subarray(position * V, (position + 1) * V), FILL_TOKENS);
      guesses.push({ position, top, texts: await Promise.all(top.map((t) => textOf(t.id))) });
    }
    // The text between the masks, and each mask's first guess.
    const pieces = [];
    let from = 0;
    for (const g of guesses) {
      pieces.push(await detokenize(ids.slice(from, g.position)), g.texts[0]);
      from = g.position + 1;
    }
    pieces.push(await detokenize(ids.slice(from)));
    if (version !== this.#version) return;
    const filled = el('q', { className: 'filled' });
    pieces.forEach((piece, i) => (i % 2 ? filled.append(appendVisibleText(el('mark'), piece)) : filled.append(piece)));
    this.#caption.replaceChildren(
      `${guesses.length === 1 ? 'With its first guess' : 'With the first guess at each mask'}: `,
      filled,
    );
    this.#list.replaceChildren(
      ...guesses.map((g, i) => {
        const heading = el('h3', { id: `fill-mask-${i}` }, `Mask ${i + 1}, token #${g.position}`);
        return el(
          'li',
          { className: 'fill-mask-item', dataset: { position: g.position } },
          heading,
          el('ol', { className: 'bars', attrs: { 'aria-labelledby': heading.id } }, ...tokenBars(g.top, g.texts, null)),
        );
      }),
    );
  }
}
