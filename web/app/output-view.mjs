// The "Output" region: the prompt (muted) followed by the generated text, streamed token by token.
// Every piece is a text span that remembers which token positions it came from, so the attention
// of a selected token can be painted on the text too. aria-busy is set while text streams in, so
// a screen reader announces the finished text once instead of every token.
import { clear, el, tint } from './dom.mjs';

export class OutputView {
  #root;
  #spans = []; // {span, positions}
  #line = null; // the block generated text goes on in (null: the next piece opens one)

  constructor(root) {
    this.#root = root;
  }

  showPlaceholder(message = 'Generated text appears here.') {
    this.#line = null;
    clear(this.#root);
    this.#spans = [];
    this.#root.append(el('span', { className: 'placeholder' }, message));
  }

  // segments: [{text, positions: [i, ...]}] covering the prompt.
  start(segments) {
    clear(this.#root);
    this.#spans = [];
    this.#line = el('div', { className: 'line' });
    this.#root.append(this.#line);
    for (const s of segments) this.#line.append(this.#span(s.text, s.positions, 'prompt-text'));
    if (segments.at(-1)?.text.endsWith('\n')) this.#line = null;
    this.#root.setAttribute('aria-busy', 'true');
  }

  // pieces: [[text, position], ...]: the text each step completed ('' while a character is split
  // across tokens: its bytes then show up with the token that completes it), added in one change
  // of the region.
  //
  // Generated text goes in blocks of one line each: a piece that ends a line ("\n") closes its
  // block (a block ending in a newline looks the same as the newline in running text, white-space
  // being pre-wrap). The browser then lays out only the last block when text arrives, where text
  // in one block was laid out whole again for every frame, slower and slower over a long run.
  appendMany(pieces) {
    let line = this.#line,
      fresh = document.createDocumentFragment();
    for (const [text, position] of pieces) {
      if (!text) continue;
      if (!line) fresh.append((line = el('div', { className: 'line' })));
      line.append(this.#span(text, [position], 'generated-text'));
      if (text.endsWith('\n')) line = null;
    }
    this.#root.append(fresh);
    this.#line = line;
  }

  // Where the heads switched off changed during a generation: a mark in the text, whose words
  // (e.g. "without L5 H1") are drawn by style.css, not part of the text; the note under the
  // Output says it in words.
  mark(label) {
    const mark = el('span', { className: 'heads-mark', title: label, dataset: { label } });
    (this.#line ?? this.#root).append(mark);
  }

  finish(text) {
    if (text) (this.#line ?? this.#root).append(this.#span(text, [], 'generated-text'));
    this.#line = null;
    this.#root.setAttribute('aria-busy', 'false');
  }

  // weights over positions 0..selected, or null; selected: the selected position (outlined).
  highlight(weights, selected) {
    for (const { span, positions } of this.#spans) {
      let w = 0;
      if (weights) for (const p of positions) if (p < weights.length && p !== selected) w = Math.max(w, weights[p]);
      tint(span, w);
      span.classList.toggle('selected', selected >= 0 && positions.includes(selected));
    }
  }

  // A span for the text of these positions, recorded but not yet in the region.
  #span(text, positions, className) {
    const span = el('span', { className, dataset: { positions: positions.join(' ') } }, text);
    this.#spans.push({ span, positions });
    return span;
  }
}

// Splits the prompt into per-token pieces of text. A token that is only part of a multi-byte
// character (its own text has U+FFFD) is joined with its neighbours into one piece, decoded
// together, so the prompt reads as typed.
export async function promptSegments(ids, texts, detokenize) {
  const segments = [];
  for (let i = 0; i < ids.length;) {
    if (!texts[i].includes('\uFFFD')) {
      segments.push({ text: texts[i], positions: [i] });
      ++i;
      continue;
    }
    let j = i + 1;
    while (j < ids.length && texts[j].includes('\uFFFD')) ++j;
    const positions = [];
    for (let k = i; k < j; ++k) positions.push(k);
    segments.push({ text: await detokenize(ids.slice(i, j)), positions });
    i = j;
  }
  return segments;
}
