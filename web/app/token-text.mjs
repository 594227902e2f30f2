// How a token's text is shown: whitespace made visible (· ↵ →), control characters as their
// symbols, and a token that is only part of a multi-byte character (decoded as U+FFFD) marked.
// Also a per-model cache of each id's text (one detokenize([id]) per distinct id).
import { append, el } from './dom.mjs';

const MARKS = { ' ': '·', '\n': '↵', '\t': '→', '\r': '␍' };
export const REPLACEMENT = '\uFFFD';

export function isPartial(text) {
  return text.includes(REPLACEMENT);
}

function markFor(ch) {
  if (MARKS[ch]) return MARKS[ch];
  const c = ch.codePointAt(0);
  if (c < 0x20) return String.fromCodePoint(0x2400 + c); // ␀ … ␟
  if (c === 0x7f) return '␡';
  return null;
}

// A plain string for places that draw text themselves (canvas labels).
export function visibleText(text) {
  if (text === '') return '∅';
  let out = '';
  for (const ch of text) out += markFor(ch) ?? ch;
  return out;
}

// Appends spans to parent: ordinary runs as text, whitespace marks in a muted span.
export function appendVisibleText(parent, text) {
  if (text === '') {
    parent.append(el('span', { className: 'ws' }, '∅'));
    return parent;
  }
  let run = '';
  for (const ch of text) {
    const mark = markFor(ch);
    if (mark === null) {
      run += ch;
      continue;
    }
    if (run) append(parent, run);
    run = '';
    parent.append(el('span', { className: 'ws' }, mark));
  }
  if (run) append(parent, run);
  return parent;
}

// Words a screen reader can say for a token's text.
export function spokenText(text) {
  if (text === '') return 'empty';
  if (isPartial(text)) return 'part of a character';
  if (text === ' ') return 'space';
  if (text === '\n') return 'newline';
  return `“${text.replace(/\n/g, '↵').replace(/\t/g, '→')}”`;
}

// How a token of a model without a tokenizer is shown: its id, as the CLI names a token by id.
export const idText = (id) => `#${id}`;

// id -> text for one model (or its tokenizer before the model is in); requests for the same id
// share one call. A model without a tokenizer (it runs on ids) shows each token as its id.
export class TokenTexts {
  #model;
  #texts = new Map();

  constructor(model) {
    this.#model = model;
  }

  get(id) {
    if (this.#model.hasTokenizer === false) return Promise.resolve(idText(id));
    let text = this.#texts.get(id);
    if (text === undefined) {
      text = this.#model.detokenize([id]);
      this.#texts.set(id, text);
      text.catch(() => this.#texts.delete(id));
    }
    return text;
  }

  many(ids) {
    return Promise.all(Array.from(ids, (id) => this.get(id)));
  }
}

// The prompt of a model without a tokenizer: token ids separated by commas or spaces, each written
// as a number or as idText writes it ("#12": ids copied from the page) -> {ids} or {error} (why the
// text is not ids of a vocabulary of `vocabulary` tokens).
export function parseIds(text, vocabulary) {
  const words = text.split(/[\s,]+/).filter(Boolean);
  const ids = [];
  for (const word of words) {
    if (!/^#?\d+$/.test(word))
      return {
        error: `“${word.length > 20 ? `${word.slice(0, 20)}…` : word}” is not a token id. This model has no tokenizer: type token ids separated by commas, e.g. 1, 2, 3.`,
      };
    const id = Number(word.replace('#', ''));
    if (id >= vocabulary) return { error: `There is no token ${id}: this model's ids go from 0 to ${vocabulary - 1}.` };
    ids.push(id);
  }
  return { ids };
}
