// The page's record of a sequence's attention (web/app/sequence.mjs), in Node: what a long
// generation keeps and lets go, and the rows a window's forward pass puts back.
//
//   node --test tests/page/
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Sequence, SequenceView } from '../../web/app/sequence.mjs';

const L = 2,
  H = 3,
  N = 8; // layers, heads, context (keepRows)

// The attention a forward pass over T tokens gives, (L, H, T, T), made up: row q of head lh
// spreads over keys 0..q as (k + 1 + lh) / sum.
function forwardAttention(T) {
  const a = new Float32Array(L * H * T * T);
  for (let lh = 0; lh < L * H; ++lh) {
    for (let q = 0; q < T; ++q) {
      let sum = 0;
      for (let k = 0; k <= q; ++k) sum += k + 1 + lh;
      for (let k = 0; k <= q; ++k) a[(lh * T + q) * T + k] = (k + 1 + lh) / sum;
    }
  }
  return a;
}

// A generation step's row for query q over keys start..q: the row q - start of a forward pass
// over the window from `start` (what the engine computes after sliding to it).
function stepAttention(q, start) {
  const T = q - start + 1,
    full = forwardAttention(T),
    row = new Float32Array(L * H * T);
  for (let lh = 0; lh < L * H; ++lh) for (let k = 0; k < T; ++k) row[lh * T + k] = full[(lh * T + T - 1) * T + k];
  return row;
}

// A sequence of a 3-token prompt and `steps` generated tokens, the window sliding by half a
// context when full, as the engine does.
function generated(steps) {
  const seq = new Sequence(L, H, N);
  seq.setPrompt([1, 2, 3], ['a', 'b', 'c']);
  seq.setPromptAttention(forwardAttention(3));
  let start = 0;
  for (let position = 3; position < 3 + steps; ++position) {
    if (position - start > N) start = position - N / 2; // the query position - 1 no longer fits
    seq.addStep(10 + position, `t${position}`, position, stepAttention(position - 1, start), start);
  }
  return seq;
}

test("a long generation keeps the prompt's rows and the last context's, and says which were let go", () => {
  const seq = generated(30);
  assert.equal(seq.length, 33);
  for (let q = 0; q < 3; ++q) assert.ok(seq.hasRow(q), `prompt row ${q} kept`);
  for (let q = 3; q < 33 - 1 - N; ++q) assert.ok(!seq.hasRow(q) && seq.wasDropped(q), `row ${q} let go`);
  for (let q = 33 - 1 - N + 1; q < 32; ++q) assert.ok(seq.hasRow(q), `row ${q} kept`);
  assert.ok(!seq.hasRow(32) && !seq.wasDropped(32), "the last token's row is not computed yet, not let go");
  // After it, a new generation from the prompt starts with the prompt's rows, nothing let go.
  seq.truncateToPrompt();
  assert.equal(seq.length, 3);
  for (let q = 0; q < 3; ++q) assert.ok(seq.hasRow(q) && !seq.wasDropped(q));
  assert.deepEqual(seq.droppedWindows(0, 3), []);
});

test('restoreWindow puts back exactly the rows the generation computed in that window', () => {
  const seq = generated(30);
  // Every row as the generation made it, before any was let go (a sequence that keeps them all).
  const full = new Sequence(L, H, Infinity);
  full.setPrompt([1, 2, 3], ['a', 'b', 'c']);
  full.setPromptAttention(forwardAttention(3));
  let start = 0;
  for (let position = 3; position < 33; ++position) {
    if (position - start > N) start = position - N / 2;
    full.addStep(10 + position, `t${position}`, position, stepAttention(position - 1, start), start);
  }
  const q = 10,
    s = seq.windowStart(q);
  assert.ok(seq.wasDropped(q));
  const windows = seq.droppedWindows(s, s + N);
  assert.ok(windows.includes(s));
  for (const w of windows) seq.restoreWindow(w, forwardAttention(Math.min(N, seq.length - w)));
  for (let k = 0; k <= q; ++k) {
    for (const [l, h] of [
      [0, 0],
      [1, 2],
    ]) {
      const got = seq.value(l, h, q, k),
        want = full.value(l, h, q, k);
      if (Number.isNaN(want)) assert.ok(Number.isNaN(got), `key ${k} outside the window`);
      else assert.ok(Math.abs(got - want) < 1e-4, `layer ${l} head ${h} ${q} -> ${k}: ${got} vs ${want}`);
    }
  }
  const view = new SequenceView(seq, s, Math.min(N, seq.length - s));
  assert.equal(view.windowStart(q - s), 0);
  assert.deepEqual(seq.droppedWindows(s, s + view.length), [], 'nothing left to restore in the view');
  seq.dropRestored();
  assert.ok(seq.wasDropped(q), 'let go again');
});
