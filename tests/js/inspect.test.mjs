// Looking inside through the JS API, in this thread and in a worker thread: hidden
// states, the logit lens and head masks against the PyTorch fixtures (scripts/make_fixtures.py),
// the same bits as the native CLI, and clear errors for bad options.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadModel } from '../../web/dist/glassbox.mjs';

const fixture = (name) => new URL(`../fixtures/${name}/`, import.meta.url);
const expected = (name) => JSON.parse(readFileSync(new URL('expected.json', fixture(name)), 'utf8'));
const MODELS = ['gpt2-f32', 'gpt2-bf16', 'gpt2-single-head', 'openai-gpt', 'openai-gpt-relu-f16', 'gpt2-attn-scaling'];

// Each rank's probability within 1e-5 of PyTorch's, and its token PyTorch's unless it is in a
// near-tie (within 1e-4 of a neighbour; past the last rank the reference's next is not known).
function checkLens(got, want, where) {
  assert.equal(got.length, want.length, where);
  for (const [l, rows] of want.entries()) {
    assert.equal(got[l].length, rows.length, where);
    for (const [t, ranks] of rows.entries()) {
      for (const [r, { id, p }] of ranks.entries()) {
        const mine = got[l][t][r];
        assert.ok(
          Math.abs(mine.probability - p) < 1e-5,
          `${where}: layer ${l} position ${t} rank ${r}: ${mine.probability} vs ${p}`,
        );
        const tie = (r > 0 && ranks[r - 1].p - p < 1e-4) || r === ranks.length - 1 || p - ranks[r + 1].p < 1e-4;
        if (!tie) assert.equal(mine.id, id, `${where}: layer ${l} position ${t} rank ${r}`);
      }
    }
  }
}

for (const worker of [false, true]) {
  const mode = worker ? 'worker' : 'main thread';

  test(`${mode}: hidden states, the lens and head masks match PyTorch`, async () => {
    for (const name of MODELS) {
      const want = expected(name);
      const model = await loadModel(fixture(name), { worker });
      const { n_layer: L, n_embd: C, vocab_size: V } = model.config;
      const T = want.tokens.length;
      const { hiddenStates, lens, logits } = await model.forward(want.tokens, {
        hiddenStates: true,
        lens: want.lens.k,
        logits: false,
      });
      assert.equal(logits, undefined);
      assert.equal(hiddenStates.length, (L + 1) * T * C);
      let maxDiff = 0;
      for (let i = 0; i <= L; ++i)
        for (let t = 0; t < T; ++t)
          for (let k = 0; k < C; ++k)
            maxDiff = Math.max(maxDiff, Math.abs(hiddenStates[(i * T + t) * C + k] - want.hidden_states[i][t][k]));
      assert.ok(maxDiff < 1e-4, `${name}: max |hidden state - PyTorch| = ${maxDiff}`);
      checkLens(lens, want.lens.layers, name);

      for (const m of want.head_masks) {
        const masked = await model.forward(want.tokens, { headMask: m.silenced });
        let diff = 0;
        for (let t = 0; t < T; ++t)
          for (let v = 0; v < V; ++v) diff = Math.max(diff, Math.abs(masked.logits[t * V + v] - m.logits[t][v]));
        assert.ok(diff < 1e-4, `${name} silenced ${JSON.stringify(m.silenced)}: max |logit - PyTorch| = ${diff}`);
        const g = m.greedy;
        const ids = [];
        const generation = model.generate(g.prompt, {
          maxTokens: g.max_tokens,
          temperature: 0,
          contextFull: 'stop',
          headMask: m.silenced,
          lens: 3,
        });
        for await (const step of generation) {
          ids.push(step.id);
          assert.equal(step.lens.length, L);
          assert.equal(
            step.lens[L - 1][0].id,
            step.id,
            "greedy: the last layer's most probable token is the one chosen",
          );
          assert.equal(step.lens[0].length, 3);
        }
        assert.deepEqual(ids, g.tokens, `${name} silenced ${JSON.stringify(m.silenced)}`);
        assert.equal(generation.stopReason, g.stop);
      }
      await model.dispose();
    }
  });

  test(`${mode}: bad lens and head masks are clear errors`, async () => {
    const model = await loadModel(fixture('gpt2-f32'), { worker }); // 2 layers x 4 heads, 96 tokens
    const fails = async (options, pattern) => {
      await assert.rejects(
        model.forward([1, 2], options),
        (e) => e.name === 'InvalidArgumentError' && pattern.test(e.message),
      );
      const steps = model.generate([1, 2], { maxTokens: 2, ...options });
      await assert.rejects(steps.next(), (e) => e.name === 'InvalidArgumentError' && pattern.test(e.message));
    };
    await fails({ lens: 0 }, /^lens must be an integer from 1 to the vocabulary's size \(tokens per layer\), got 0$/);
    await fails({ lens: 2.5 }, /^lens must be an integer/);
    await fails({ lens: '5' }, /^lens must be an integer/);
    await fails({ lens: 97 }, /^the lens shows 1 to 96 tokens per layer \(the vocabulary\), got 97$/);
    await fails({ headMask: [0, 1] }, /^headMask must be an array of \[layer, head\] pairs of integers/);
    await fails({ headMask: [[0, 1, 2]] }, /^headMask must be an array of \[layer, head\] pairs/);
    await fails({ headMask: [[0, 0.5]] }, /^headMask must be an array of \[layer, head\] pairs/);
    await fails({ headMask: [[2, 0]] }, /^headMask: there is no layer 2: the model has layers 0\.\.1$/);
    await fails({ headMask: [[1, 4]] }, /^headMask: there is no head 4: the model's layers have heads 0\.\.3$/);
    await fails({ headMask: [[-1, 0]] }, /^headMask: there is no layer -1/);
    // The model still works, and an empty mask is no mask.
    const plain = await model.forward([1, 2]);
    assert.deepEqual((await model.forward([1, 2], { headMask: [] })).logits, plain.logits);
    // { logits: 'last' }: the last row alone, the same bits.
    assert.deepEqual((await model.forward([1, 2], { logits: 'last' })).logits, plain.logits.subarray(96));
    await assert.rejects(
      model.forward([1, 2], { logits: 'first' }),
      /^InvalidArgumentError: logits must be true, false, 'last' or positions \(integers >= 0\), got "first"$/,
    );
    await model.dispose();
  });
}

// WebAssembly and native (--arithmetic portable) give the same bits: the CLI's hidden states, lens
// and masked logits.
test('native and WebAssembly: hidden states, lens and masked logits are the same bits', async () => {
  const cli = process.env.GLASSBOX_CLI ?? fileURLToPath(new URL('../../build/native/glassbox', import.meta.url));
  for (const name of ['gpt2-f32', 'openai-gpt']) {
    const want = expected(name);
    const silenced = want.head_masks[0].silenced;
    const model = await loadModel(fixture(name));
    const js = await model.forward(want.tokens, { hiddenStates: true, lens: 4, headMask: silenced });
    await model.dispose();
    const out = JSON.parse(
      execFileSync(
        cli,
        [
          'forward',
          '-m',
          fileURLToPath(fixture(name)),
          '--tokens',
          want.tokens.join(','),
          '--hidden-states',
          '--lens',
          '4',
          '--head-mask',
          silenced.map((p) => p.join(':')).join(','),
          '--arithmetic',
          'portable',
        ],
        { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    const same = (a, b, what) => {
      assert.equal(a.length, b.length, what);
      const differ = a.findIndex((x, i) => !Object.is(x, b[i]));
      assert.equal(differ, -1, `${name}: ${what} ${differ}: WebAssembly ${a[differ]}, native ${b[differ]}`);
    };
    same(js.logits, Float32Array.from(out.logits.flat()), 'logit');
    same(js.hiddenStates, Float32Array.from(out.hidden_states.flat(2)), 'hidden state');
    same(
      js.lens.flat(2).map((e) => e.id),
      out.lens.flat(2).map((e) => e.id),
      'lens id',
    );
    same(
      Float32Array.from(js.lens.flat(2).map((e) => e.probability)),
      Float32Array.from(out.lens.flat(2).map((e) => e.p)),
      'lens p',
    );
  }
});
