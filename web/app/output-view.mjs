// The "Output" region: the prompt (muted) followed by the generated text, streamed token by token.
// Every piece is a text span that remembers which token positions it came from, so the attention
// of a selected token can be painted on the text too. aria-busy is set while text streams in, so
// a screen reader announces the finished text once instead of every token.
import { clear, el, tint } from './dom.mjs';

export class OutputView {
  #root;
  #spans = [];   // {span, positions}

  constructor(root) {
    this.#root = root;
  }

  showPlaceholder(message = 'Generated text appears here.') {
    clear(this.#root);
    this.#spans = [];
    this.#root.append(el('span', { className: 'placeholder' }, message));
  }

  // segments: [{text, positions: [i, ...]}] covering the prompt.
  start(segments) {
    clear(this.#root);
    this.#spans = [];
    for (const s of segments) this.#add(s.text, s.positions, 'prompt-text');
    this.#root.setAttribute('aria-busy', 'true');
  }

  // pieces: [[text, position], ...]: the text each step completed ('' while a character is split
  // across tokens: its bytes then show up with the token that completes it), added in one change
  // of the region.
  appendMany(pieces) {
    const spans = document.createDocumentFragment();
    for (const [text, position] of pieces) if (text) spans.append(this.#span(text, [position], 'generated-text'));
    this.#root.append(spans);
  }

  finish(text) {
    if (text) this.#add(text, [], 'generated-text');
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

  #add(text, positions, className) {
    this.#root.append(this.#span(text, positions, className));
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
