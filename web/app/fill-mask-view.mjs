// "Fill mask": a masked LM's guesses at each mask in the prompt. The model is bidirectional: every
// position sees the whole text, later tokens too, so the guess at a mask uses both sides of it.
// For each mask, its likeliest tokens (the softmax of that position's logits, from the same pass
// that gives the attention map, which computes the masks' rows of logits alone), as bars on the
// page's absolute scale, and the text with every mask replaced by its first guess (marked; plain
// text, as a sentence reads).
import { el } from './dom.mjs';
import { mostProbable, tokenBars } from './probability-bars.mjs';

export const FILL_TOKENS = 5;

// The positions of the mask tokens in ids, in order: the rows of logits the guesses need.
export const maskPositions = (ids, maskId) => ids.flatMap((id, t) => (id === maskId ? [t] : []));

export class FillMaskView {
  #caption;
  #list;
  #version = 0;

  constructor({ caption, list }) {
    this.#caption = caption;
    this.#list = list;
  }

  // Nothing to show (yet): message says why; action ({label, run}), if given, a button after it
  // that does something about it.
  clear(message, action = null) {
    ++this.#version;
    this.#caption.replaceChildren(
      message,
      action
        ? el('button', { type: 'button', className: 'secondary small-button', on: { click: action.run } }, action.label)
        : null,
    );
    this.#list.replaceChildren();
  }

  // ids: the prompt's tokens; masks: the positions of its mask tokens (maskPositions); logits:
  // (masks.length, V), the rows of those positions; textOf(id) and detokenize(ids): the model's,
  // as promises. Of calls in quick succession, the latest is drawn.
  async show(ids, masks, logits, { textOf, detokenize }) {
    const version = ++this.#version,
      V = logits.length / masks.length;
    const guesses = [];
    for (const [m, position] of masks.entries()) {
      const top = mostProbable(logits.subarray(m * V, (m + 1) * V), FILL_TOKENS);
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
    for (const [i, piece] of pieces.entries()) {
      if (i % 2 === 0) {
        filled.append(piece);
        continue;
      }
      // A guess's leading space belongs to the sentence; the mark holds its word (or, for a
      // guess that is all space, the space).
      const word = piece.trimStart();
      filled.append(word ? piece.slice(0, piece.length - word.length) : '', el('mark', {}, word || piece));
    }
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
