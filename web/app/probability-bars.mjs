// Bars whose length is a probability, on one absolute scale everywhere on the page (Next token,
// Fill mask, Classification): a bar's fill is its probability of the track's full width, so 50%
// fills half a track wherever it is drawn, and two bars compare by their lengths. Each row says
// its token (or label) and percentages as text too, for screen readers.
import { el } from './dom.mjs';
import { appendVisibleText, spokenText } from './token-text.mjs';

export const percent = (p) => `${(100 * p).toFixed(p < 0.001 ? 3 : 1)}%`;

// The n most probable tokens of softmax(logits), as the engine's most_probable gives them: most
// probable first, ties to the lower id (probabilities computed in doubles).
export function mostProbable(logits, n) {
  const p = softmaxOf(logits);
  const order = Array.from(logits.keys())
    .sort((a, b) => logits[b] - logits[a] || a - b)
    .slice(0, n);
  return order.map((id) => ({ id, probability: p(id) }));
}

// id -> softmax(logits)[id], computed in doubles as mostProbable does.
export function softmaxOf(logits) {
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x);
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  return (id) => Math.exp(logits[id] - max) / sum;
}

// A track with its fill: probability p of the track's width (kind: the fill's class, which
// distribution it is in a comparison).
function track(p, kind = '') {
  const fill = el('span', { className: kind ? `bar-fill ${kind}` : 'bar-fill' });
  fill.style.width = `${100 * p}%`;
  return el('span', { className: 'bar-track' }, fill);
}

// One bar (an li): label (a string or a node), probability p, the value shown beside it, and the
// row's spoken text (aria-label). dataset: the row's data attributes (the tests read them).
export function bar({ label, p, value = percent(p), spoken, dataset, chosen = false, title }) {
  return el(
    'li',
    { className: `bar${chosen ? ' chosen' : ''}`, dataset, attrs: { 'aria-label': spoken } },
    el('span', { className: 'bar-label', title }, label),
    track(p),
    el('span', { className: 'bar-value' }, value),
  );
}

// One row of a comparison (an li): its label, then one bar per distribution under each other,
// on the same scale (values[i]: the probability in distribution i; kinds[i]: its class).
export function pairBar({ label, values, kinds, spoken, dataset, title }) {
  return el(
    'li',
    { className: 'bar pair', dataset, attrs: { 'aria-label': spoken } },
    el('span', { className: 'bar-label', title }, label),
    ...values.flatMap((p, i) => [track(p, kinds[i]), el('span', { className: `bar-value ${kinds[i]}` }, percent(p))]),
  );
}

// The key of a comparison's colours (names[i] for kinds[i]); read as text too.
export function pairLegend(names, kinds) {
  return el(
    'p',
    { className: 'pair-legend small' },
    ...names.flatMap((name, i) => [el('span', { className: `swatch ${kinds[i]}` }), `${name} `]),
  );
}

// The bars (li elements) of a distribution's top tokens (texts: theirs); chosenId's is marked as
// sampled.
export function tokenBars(top, texts, chosenId) {
  return top.map((t, i) => {
    const chosen = t.id === chosenId;
    return bar({
      label: [
        appendVisibleText(el('span', { className: 'bar-token' }), texts[i]),
        chosen ? el('span', { className: 'chosen-mark' }, ' ●') : null,
      ],
      p: t.probability,
      spoken: `${spokenText(texts[i])}, id ${t.id}: ${percent(t.probability)}${chosen ? ', sampled' : ''}`,
      dataset: { id: t.id, probability: t.probability },
      chosen,
      title: `id ${t.id}`,
    });
  });
}
