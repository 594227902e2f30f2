// The interpretability experiments through the JS API, in this thread and in a worker thread:
// activation patching, direct logit attribution, saliency, neurons and steering on every fixture of
// tests/fixtures/experiments (the float64 PyTorch reference, scripts/experiments_reference.py), at
// the tolerances the C++ tests use (tests/experiments_test.cpp); patching's progress and abort;
// and clear errors for bad arguments.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';

const fixtures = new URL('../fixtures/', import.meta.url);
const EXPERIMENTS = readdirSync(new URL('experiments/', fixtures))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(new URL(`experiments/${f}`, fixtures), 'utf8')));
const SITES = { residPre: 'resid_pre', attnOut: 'attn_out', mlpOut: 'mlp_out', head: 'head' };

// The largest |got - want| over a grid of [row][column] (got: Float32Array rows).
function maxDiff(got, want) {
  assert.equal(got.length, want.length);
  let d = 0;
  for (const [i, row] of want.entries()) {
    assert.equal(got[i].length, row.length);
    for (const [j, x] of row.entries()) d = Math.max(d, Math.abs(got[i][j] - x));
  }
  return d;
}

const near = (got, want, tolerance, what) =>
  assert.ok(Math.abs(got - want) <= tolerance, `${what}: ${got} vs ${want} (tolerance ${tolerance})`);

async function greedy(model, prompt, options = {}) {
  const ids = [];
  for await (const step of model.generate(prompt, { maxTokens: 8, temperature: 0, ...options })) ids.push(step.id);
  return ids;
}

for (const worker of [false, true]) {
  const mode = worker ? 'worker' : 'main thread';

  test(`${mode}: every experiment of every fixture matches the float64 reference`, async () => {
    assert.ok(EXPERIMENTS.length >= 11, 'the fixtures of tests/fixtures/experiments');
    for (const want of EXPERIMENTS) {
      const name = want.model;
      const model = await loadModel(new URL(`${name}/`, fixtures), { worker });
      const { layers: L, heads: H } = model.shape;

      // Patching: raw metrics within 1e-5, normalized grids within 1e-4; onProgress once per layer and site.
      const seen = [];
      const got = await model.patch({
        clean: want.clean,
        corrupted: Int32Array.from(want.corrupted),
        answer: want.answer,
        wrong: want.wrong,
        onProgress: (p) => seen.push(p),
      });
      near(got.clean, want.patch.clean, 1e-5, `${name}: clean metric`);
      near(got.corrupted, want.patch.corrupted, 1e-5, `${name}: corrupted metric`);
      assert.deepEqual(got.tokens, { clean: want.clean, corrupted: want.corrupted });
      for (const [key, site] of Object.entries(SITES)) {
        const d = maxDiff(got[key], want.patch[site]);
        assert.ok(d <= 1e-4, `${name}: ${site}: max |normalized - reference| = ${d}`);
      }
      assert.equal(seen.length, 4 * L, `${name}: one progress call per layer and site`);
      for (const [i, p] of seen.entries()) {
        const [key, site] = Object.entries(SITES)[Math.floor(i / L)];
        assert.equal(p.site, site);
        assert.equal(p.layer, i % L);
        assert.equal(p.done, i + 1);
        assert.equal(p.total, 4 * L);
        assert.deepEqual(Array.from(p.row), Array.from(got[key][p.layer]), `${name}: ${site} row ${p.layer}`);
      }
      // `what`: only those grids, in that order.
      const { clean, corrupted, answer, wrong } = want;
      const some = await model.patch({ clean, corrupted, answer, wrong, what: ['head', 'mlp_out'] });
      assert.deepEqual(Object.keys(some).sort(), ['clean', 'corrupted', 'head', 'mlpOut', 'tokens']);
      assert.deepEqual(some.head, got.head);
      assert.equal(some.head.length, L);
      assert.equal(some.head[0].length, H);

      // Attribution: parts within 1e-5, summing to the total within 1e-5; post-norm models refuse.
      if (want.attribute) {
        for (const a of want.attribute) {
          const r = await model.attribute({ prompt: want.clean, answer: a.answer, wrong: a.wrong });
          const where = `${name}: attribute ${a.answer}${a.wrong === undefined ? '' : ` - ${a.wrong}`}`;
          near(r.embed, a.embed, 1e-5, `${where}: embed`);
          near(r.posEmbed, a.pos_embed, 1e-5, `${where}: posEmbed`);
          near(r.bias, a.bias, 1e-5, `${where}: bias`);
          near(r.total, a.total, 1e-5, `${where}: total`);
          assert.ok(maxDiff(r.heads, a.heads) <= 1e-5, `${where}: heads`);
          assert.ok(maxDiff([r.mlp], [a.mlp]) <= 1e-5, `${where}: mlp`);
          const sum =
            r.embed +
            r.posEmbed +
            r.bias +
            r.heads.flatMap((h) => [...h]).reduce((x, y) => x + y, 0) +
            r.mlp.reduce((x, y) => x + y, 0);
          near(sum, r.total, 1e-5, `${where}: the parts' sum`);
          assert.ok(Math.abs(r.residual) <= 1e-5, `${where}: residual ${r.residual}`);
        }
      } else {
        await assert.rejects(
          model.attribute({ prompt: want.clean, answer: want.answer, wrong: want.wrong }),
          (e) => e.name === 'InvalidArgumentError' && /post-norm|openai-gpt/.test(e.message),
        );
      }

      // Saliency: within 1e-4 of the largest |score|; the target the last position's argmax by default.
      if (want.saliency) {
        for (const s of want.saliency) {
          const r = await model.forward(want.clean, {
            saliency: true,
            ...(!s.default && { target: s.target }),
            logits: false,
          });
          assert.equal(r.target, s.target, `${name}: saliency target`);
          const largest = Math.max(...s.scores.map(Math.abs));
          const d = maxDiff([r.saliency], [s.scores]);
          assert.ok(d <= 1e-4 * largest, `${name}: saliency of ${s.target}: max diff ${d}, largest |score| ${largest}`);
        }
      } else {
        await assert.rejects(
          model.forward(want.clean, { saliency: true }),
          (e) =>
            e.name === 'InvalidArgumentError' &&
            e.message.includes('saliency needs a backward pass') &&
            e.message.includes(want.model_type),
        );
      }

      // Neurons: the top K of each layer and position, and one neuron over the prompt, within 1e-5.
      const { k, top, mlp_act: act } = want.neurons;
      const r = await model.forward(want.clean, { neurons: k, neuron: { layer: L - 1, index: 3 }, logits: false });
      assert.equal(r.logits, undefined);
      for (let l = 0; l < L; ++l)
        for (let t = 0; t < want.clean.length; ++t)
          for (let i = 0; i < k; ++i) {
            assert.equal(r.neurons[l][t][i].index, top[l][t][i].index, `${name}: neuron rank ${i} at ${l}, ${t}`);
            near(r.neurons[l][t][i].value, top[l][t][i].value, 1e-5, `${name}: neuron value at ${l}, ${t}`);
          }
      assert.ok(maxDiff([r.neuron], [act[L - 1].map((row) => row[3])]) <= 1e-5, `${name}: neuron ${L - 1}:3`);

      // Steering: the steered greedy tokens are the reference's; coefficient 0 is plain generation, bit for bit.
      const { layer, plus, minus, runs } = want.steer;
      for (const run of runs) {
        const steer = { layer, coefficient: run.coefficient, plus, minus: Int32Array.from(minus) };
        assert.deepEqual(
          await greedy(model, run.greedy.prompt, { steer }),
          run.greedy.tokens,
          `${name}: c = ${run.coefficient}`,
        );
      }
      const zero = { layer, coefficient: 0, plus, minus };
      const steered = [],
        plain = [];
      for await (const s of model.generate(want.clean, { maxTokens: 6, seed: 7, top: 5, steer: zero })) steered.push(s);
      for await (const s of model.generate(want.clean, { maxTokens: 6, seed: 7, top: 5 })) plain.push(s);
      assert.deepEqual(steered, plain, `${name}: coefficient 0 is no steering`);
      await model.dispose();
    }
  });

  test(`${mode}: patching stops at an abort and the model goes on`, async () => {
    const want = EXPERIMENTS.find((e) => e.model === 'gpt2-f32');
    const model = await loadModel(new URL('gpt2-f32/', fixtures), { worker });
    const args = { clean: want.clean, corrupted: want.corrupted, answer: want.answer, wrong: want.wrong };
    const stop = new AbortController();
    const reason = new Error('stopped by the test');
    let calls = 0;
    await assert.rejects(
      model.patch({
        ...args,
        signal: stop.signal,
        onProgress: () => {
          if (++calls === 1) stop.abort(reason);
        },
      }),
      (e) => e === reason,
    );
    assert.ok(calls >= 1);
    if (!worker) assert.equal(calls, 1, 'the run stops after the layer it was on');
    // Aborted before it starts: rejects at once.
    await assert.rejects(model.patch({ ...args, signal: AbortSignal.abort(reason) }), (e) => e === reason);
    // An onProgress that throws ends the run with an error that says so.
    await assert.rejects(
      model.patch({
        ...args,
        onProgress: () => {
          throw new Error('drawing failed');
        },
      }),
      (e) => e.name === 'InvalidArgumentError' && e.message === 'onProgress threw: drawing failed',
    );
    // One run at a time: a second while the first runs is refused, and the first goes on.
    const first = model.patch(args);
    await assert.rejects(model.patch(args), (e) => e.name === 'StateError' && /already running/.test(e.message));
    // The model still works: the same results as before.
    const again = await first;
    near(again.clean, want.patch.clean, 1e-5, 'clean metric after the abort');
    assert.ok(maxDiff(again.residPre, want.patch.resid_pre) <= 1e-4);
    // Disposed while it runs: the run ends with the model.
    await assert.rejects(
      model.patch({ ...args, onProgress: () => void model.dispose() }),
      (e) => e.name === 'StateError' && /disposed/.test(e.message),
    );
  });

  test(`${mode}: bad experiment arguments are clear errors`, async () => {
    // gpt2-bytes: 2 layers, a byte-level tokenizer (" Mary" is several tokens, "a" one).
    const model = await loadModel(new URL('gpt2-bytes/', fixtures), { worker });
    const { layers: L } = model.shape;
    const fails = async (promise, pattern) =>
      assert.rejects(promise, (e) => {
        assert.equal(e.name, 'InvalidArgumentError', e.message);
        assert.match(e.message, pattern);
        return true;
      });
    const ok = { clean: 'abcab', corrupted: 'abdab', answer: 'a', wrong: 'b' };
    await fails(
      model.patch({ ...ok, corrupted: 'abdabx' }),
      /^the clean prompt has 5 tokens and the corrupted one 6: patching needs prompts of the same length$/,
    );
    const pieces = (await model.tokenize(' Mary')).length;
    assert.ok(pieces > 1, 'the test needs a text of several tokens');
    await fails(
      model.patch({ ...ok, answer: ' Mary' }),
      new RegExp(`^answer " Mary" is ${pieces} tokens: " " \\(id \\d+\\), "M" \\(id \\d+\\), "a"`),
    );
    await fails(model.attribute({ prompt: 'abc', answer: 'a', wrong: ' Mary' }), /^wrong " Mary" is \d+ tokens: /);
    await fails(model.patch({ ...ok, answer: '' }), /^answer is empty/);
    await fails(model.patch({ ...ok, answer: 1.5 }), /^answer must be a token's text \(like " Mary"\) or its id/);
    await fails(model.patch({ ...ok, wrong: 100000 }), /^the wrong answer is token id 100000, outside the vocabulary/);
    await fails(
      model.patch({ ...ok, what: ['heads'] }),
      /^unknown patching site 'heads' \(use resid_pre, attn_out, mlp_out or head\)$/,
    );
    await fails(model.patch({ ...ok, what: 'head' }), /^what must be an array of patching sites/);
    await fails(model.patch({ ...ok, what: [] }), /^patching: no site asked for/);
    await fails(model.patch({ ...ok, corrupted: ok.clean }), /give the same metric/);
    await fails(model.patch({ ...ok, clean: 5 }), /^clean must be a string or an array of token ids, got 5$/);
    await fails(model.patch({ ...ok, answr: 'a' }), /^patch: unknown option "answr" \(did you mean "answer"\?\)/);
    await fails(model.patch({ clean: 'a', corrupted: 'b', answer: 'a' }), /^patch needs wrong/);
    await fails(model.patch(), /^patch needs \{ clean, corrupted, answer, wrong \}$/);
    await fails(model.attribute({ prompt: 'abc' }), /^attribute needs answer/);

    const steer = (s) => greedy(model, 'ab', { steer: { layer: 0, coefficient: 1, plus: 'a', minus: 'b', ...s } });
    await fails(
      steer({ layer: L }),
      new RegExp(`^steering: there is no layer ${L}: the model has layers 0\\.\\.${L - 1}`),
    );
    await fails(steer({ layer: -1 }), /^steering: there is no layer -1/);
    await fails(steer({ coefficient: 'strong' }), /^steer\.coefficient must be a finite number, got "strong"$/);
    await fails(steer({ coefficient: NaN }), /^steering: the coefficient is not a finite number$/);
    await fails(steer({ layer: 0.5 }), /^steer\.layer must be an integer/);
    await fails(steer({ plus: 7 }), /^steer\.plus must be a string or an array of token ids/);
    await fails(steer({ strength: 2 }), /^steer: unknown key "strength"/);
    await fails(greedy(model, 'ab', { steer: 4 }), /^steer must be \{ layer, coefficient, plus, minus \}/);

    const F = 4 * model.shape.width; // gpt2's MLP width (n_inner: 4 x n_embd)
    await fails(
      model.forward([1, 2], { neuron: { layer: 0, index: F } }),
      new RegExp(`^there is no neuron ${F}: the MLP has neurons 0\\.\\.${F - 1}`),
    );
    await fails(model.forward([1, 2], { neuron: { layer: L, index: 0 } }), new RegExp(`^there is no layer ${L}`));
    await fails(model.forward([1, 2], { neuron: [0, 1] }), /^neuron must be \{ layer, index \}/);
    await fails(model.forward([1, 2], { neurons: 0 }), /^neurons must be an integer from 1 to the MLP's width/);
    await fails(model.forward([1, 2], { neurons: F + 1 }), new RegExp(`^the top neurons are 1 to ${F} per layer`));
    await fails(
      model.forward([1, 2], { target: 3 }),
      /^target is the token whose saliency is computed: give it with saliency: true$/,
    );
    await fails(model.forward([1, 2], { saliency: true, target: ' Mary' }), /^target " Mary" is \d+ tokens/);
    await fails(model.forward([1, 2], { saliency: 'yes' }), /^saliency must be true or false/);
    // Nothing is left broken: an experiment still runs.
    const r = await model.forward([1, 2], { saliency: true, target: 'a', neurons: 2 });
    assert.equal(r.target, (await model.tokenize('a'))[0]);
    assert.equal(r.saliency.length, 2);
    await model.dispose();
  });
}
