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

// id -> text for one model; requests for the same id share one call.
export class TokenTexts {
  #model;
  #texts = new Map();

  constructor(model) {
    this.#model = model;
  }

  get(id) {
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
