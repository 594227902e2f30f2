// "Layers": the logit lens (docs/js-api.md). What each layer would predict if it were the last:
// for one token, every layer's most likely guesses for it, so a person watches the answer form
// layer by layer; and for the prompt, a grid of layer x position with each layer's top guess for
// the next token. Layers are numbered from 0, as everywhere on the page: row "Layer 0" is the
// output of the first block (the embeddings have no row).
//
// The lens costs one final norm and one LM head per layer and position (on the shipped model it
// halves the speed of generation), so the page asks for it only while this panel is in view: for
// the prompt when it comes into view, and for a generation that starts while it is in view.
import { clear, el } from './dom.mjs';
import { appendVisibleText, spokenText } from './token-text.mjs';

export const LENS_TOKENS = 5;

const percent = (p) => `${(100 * p).toFixed(p < 0.001 ? 3 : 1)}%`;

export class LayersView {
  #caption;
  #table;
  #grid;
  #layers = 0;
  #prompt = null; // {ids, texts, lens: [layer][position][K]}, or null until computed
  #generated = new Map(); // position -> {id, lens: [layer][K]}: a generated token, the lens that produced it
  #shown = -1; // the position whose layers the table shows
  #inView = false;
  #onView;

  // caption, table, grid: elements; onView(): called when the panel comes into view.
  constructor({ caption, table, grid, onView }) {
    this.#caption = caption;
    this.#table = table;
    this.#grid = grid;
    this.#onView = onView;
    new IntersectionObserver(([entry]) => {
      const was = this.#inView;
      this.#inView = entry.isIntersecting;
      if (this.#inView && !was) this.#onView();
    }).observe(grid.closest('section'));
    this.reset(0);
  }

  get inView() {
    return this.#inView;
  }

  // Whether the prompt's grid must still be computed.
  get needsPrompt() {
    return this.#prompt === null;
  }

  reset(layers) {
    this.#layers = layers;
    this.#prompt = null;
    this.#generated.clear();
    this.#shown = -1;
    this.#caption.textContent = 'Select a token to see how each layer guessed it.';
    clear(this.#table);
    clear(this.#grid);
  }

  // The prompt's lens ([layer][position] of K {id, probability}); texts: the prompt tokens'
  // texts; textOf(id) -> Promise<string>. Draws the grid.
  async setPrompt(ids, texts, lens, textOf) {
    const tops = await Promise.all(lens.map((rows) => Promise.all(rows.map((row) => textOf(row[0].id)))));
    this.#prompt = { ids, texts, lens };
    const head = el(
      'tr',
      {},
      el('th', { scope: 'col' }, 'Layer'),
      ...texts.map((t, i) =>
        appendVisibleText(el('th', { scope: 'col', className: 'lg-token', title: `token #${i}` }), t),
      ),
    );
    const rows = lens.map((row, l) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, String(l)),
        ...row.map((top, t) => {
          const cell = appendVisibleText(
            el('td', {
              className: 'lg-cell',
              title: `${percent(top[0].probability)} after token #${t}`,
              dataset: { id: top[0].id, probability: top[0].probability },
            }),
            tops[l][t],
          );
          cell.style.setProperty('--p', top[0].probability.toFixed(3));
          cell.setAttribute(
            'aria-label',
            `layer ${l}, after token ${t}: ${spokenText(tops[l][t])}, ${percent(top[0].probability)}`,
          );
          return cell;
        }),
      ),
    );
    this.#grid.replaceChildren(
      el('caption', { className: 'visually-hidden' }, "Each layer's most likely next token after each prompt token"),
      el('thead', {}, head),
      el('tbody', {}, ...rows),
    );
    if (this.#shown >= 0) await this.show(this.#shown, textOf);
  }

  // A generated token (id) at `position` and the lens that produced it ([layer] of K).
  addStep(position, id, lens) {
    this.#generated.set(position, { id, lens });
  }

  // Drops what follows the prompt (a new generation starts).
  truncateToPrompt() {
    this.#generated.clear();
  }

  // The layers' guesses for the token at `position` (its predecessor's lens): from the prompt's
  // grid, or recorded while it was generated.
  async show(position, textOf) {
    this.#shown = position;
    const prompt = this.#prompt,
      generated = this.#generated.get(position);
    let lens = generated?.lens ?? null,
      actual = generated?.id ?? null;
    if (!lens && prompt && position > 0 && position < prompt.ids.length) {
      lens = prompt.lens.map((rows) => rows[position - 1]);
      actual = prompt.ids[position];
    }
    if (!lens) {
      clear(this.#table);
      this.#caption.textContent =
        position === 0
          ? 'The first token has nothing before it: no layer guessed it.'
          : prompt || this.#generated.size
            ? 'Not recorded: this token was generated while this panel was out of view. Keep it in view while generating to watch the layers.'
            : 'The layers come when this panel is in view.';
      return;
    }
    const texts = await Promise.all(lens.map((top) => Promise.all(top.map((t) => textOf(t.id)))));
    if (this.#shown !== position) return; // another token was selected meanwhile
    const chosen = actual;
    this.#caption.textContent =
      `How the model arrived at token #${position}: each layer's ${LENS_TOKENS} likeliest guesses for it, ` +
      "layer 0 (the first) at the top. The last layer's are the model's own; the token that came is marked ●.";
    const rows = lens.map((top, l) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, `Layer ${l}`),
        ...top.map((t, k) => {
          const hit = t.id === chosen;
          const token = appendVisibleText(el('span', { className: 'lt-token' }), texts[l][k]);
          const cell = el(
            'td',
            { className: `lt-cell${hit ? ' chosen' : ''}`, dataset: { id: t.id, probability: t.probability } },
            token,
            hit ? el('span', { className: 'chosen-mark' }, ' ●') : null,
            ' ',
            el('span', { className: 'lt-p' }, percent(t.probability)),
          );
          cell.style.setProperty('--p', t.probability.toFixed(3));
          cell.setAttribute(
            'aria-label',
            `${spokenText(texts[l][k])}, ${percent(t.probability)}${hit ? ', the token that came' : ''}`,
          );
          return cell;
        }),
      ),
    );
    this.#table.replaceChildren(
      el('caption', { className: 'visually-hidden' }, "Each layer's likeliest tokens"),
      el('tbody', {}, ...rows),
    );
  }
}
