// The modern decoders (llama, mistral, qwen2, qwen3, gpt_neox, gpt_neo) through the JS API, checked
// against PyTorch (tests/fixtures/*/expected.json, scripts/make_decoder_fixtures.py) as the C++
// ReferenceTest checks them (tests/model_test.cpp): every decoder fixture loads from its directory
// in this thread and in a worker, with no tokenizer (the fixtures have none: they run on ids), and
// gives PyTorch's logits (within 1e-4), attention over query heads (1e-5), hidden states, logit
// lens, head masks and greedy tokens; int8 and int4 weights stay near; a files object, an HTTP URL and a
// hub id load the same bits.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { estimateModel, loadModel } from '../../web/dist/glassbox.mjs';
import { checkQuantizedError } from './quantized-error.mjs';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
const dir = (name) => join(fixtures, name);
const read = (name, file) => readFileSync(join(dir(name), file));
const expected = (name) => JSON.parse(read(name, 'expected.json'));
const configOf = (name) => JSON.parse(read(name, 'config.json'));

const DECODERS = [
  'gpt-neo-local',
  'gpt-neox-parallel',
  'gpt-neox-sequential-f16-v5',
  'llama-gqa',
  'llama-linear-sharded',
  'llama-llama3-bf16',
  'llama-llama3-v5',
  'llama-mqa-bias-v5',
  'mistral-sliding',
  'qwen2-bf16',
  'qwen2-sliding-v5',
  'qwen3-qk-norm',
  'qwen3-sliding-bias-v5',
];
const TYPES = ['llama', 'mistral', 'qwen2', 'qwen3', 'gpt_neox', 'gpt_neo'];

test('the list covers every decoder fixture, and every decoder type', () => {
  const found = readdirSync(fixtures).filter((name) => {
    try {
      return TYPES.includes(configOf(name).model_type) && read(name, 'expected.json');
    } catch {
      return false;
    }
  });
  assert.deepEqual(found.sort(), DECODERS);
  assert.deepEqual([...new Set(DECODERS.map((name) => configOf(name).model_type))].sort(), [...TYPES].sort());
});

// max |a[i] - b[i]| over a flat array and a nested one.
function maxDiff(got, want) {
  const flat = want.flat(Infinity);
  assert.equal(got.length, flat.length);
  let diff = 0;
  for (let i = 0; i < flat.length; ++i) diff = Math.max(diff, Math.abs(got[i] - flat[i]));
  return diff;
}

// Each rank's probability within 1e-5 of PyTorch's, and its token PyTorch's unless it is in a
// near-tie (as tests/js/inspect.test.mjs and tests/inspect_test.cpp check it).
function checkLens(got, want, where) {
  assert.equal(got.length, want.length, where);
  for (const [l, rows] of want.entries())
    for (const [t, ranks] of rows.entries())
      for (const [r, { id, p }] of ranks.entries()) {
        const mine = got[l][t][r];
        assert.ok(Math.abs(mine.probability - p) < 1e-5, `${where}: lens layer ${l} position ${t} rank ${r}`);
        const tie = (r > 0 && ranks[r - 1].p - p < 1e-4) || r === ranks.length - 1 || p - ranks[r + 1].p < 1e-4;
        if (!tie) assert.equal(mine.id, id, `${where}: lens layer ${l} position ${t} rank ${r}`);
      }
}

// Greedy generation from ids, as the reference's greedy() (stops at a full context).
async function greedy(model, g, options = {}) {
  const ids = [];
  const generation = model.generate(g.prompt, {
    maxTokens: g.max_tokens,
    temperature: 0,
    contextFull: 'stop',
    ...options,
  });
  for await (const step of generation) {
    assert.equal(step.text, '', 'a model without a tokenizer has no text to give');
    ids.push(step.id);
  }
  return { ids, stop: generation.stopReason };
}

for (const worker of [false, true]) {
  const mode = worker ? 'worker' : 'main thread';
  for (const name of DECODERS) {
    test(`${mode}: ${name} matches PyTorch through the JS API`, async () => {
      const want = expected(name);
      const config = configOf(name);
      const model = await loadModel(dir(name), { worker });
      try {
        const { layers: L, heads: H, width: C, vocabulary: V } = model.shape;
        const T = want.tokens.length;
        assert.equal(model.shape.modelType, config.model_type);
        assert.equal(model.shape.kvHeads, config.num_key_value_heads ?? H);
        assert.equal(model.hasTokenizer, false);
        assert.equal(V, config.vocab_size);

        const out = await model.forward(want.tokens, { attention: true, hiddenStates: true, lens: want.lens.k });
        const logitDiff = maxDiff(out.logits, want.logits);
        assert.ok(logitDiff < 1e-4, `${name}: max |logit - PyTorch| = ${logitDiff}`);
        // attention [layer][query head][query][key], as the reference gives it
        assert.equal(out.attention.length, L * H * T * T);
        const attentionDiff = maxDiff(out.attention, want.attention);
        assert.ok(attentionDiff < 1e-5, `${name}: max |attention - PyTorch| = ${attentionDiff}`);
        assert.equal(out.hiddenStates.length, (L + 1) * T * C);
        const stateDiff = maxDiff(out.hiddenStates, want.hidden_states);
        assert.ok(stateDiff < 1e-4, `${name}: max |hidden state - PyTorch| = ${stateDiff}`);
        checkLens(out.lens, want.lens.layers, name);

        const plain = await greedy(model, want.greedy);
        assert.deepEqual(plain.ids, want.greedy.tokens, `${name}: greedy tokens`);
        assert.equal(plain.stop, want.greedy.stop);

        // Head masks silence query heads ([layer, query head] pairs).
        for (const m of want.head_masks) {
          const what = `${name} silenced ${JSON.stringify(m.silenced)}`;
          const masked = await model.forward(want.tokens, { headMask: m.silenced });
          const diff = maxDiff(masked.logits, m.logits);
          assert.ok(diff < 1e-4, `${what}: max |logit - PyTorch| = ${diff}`);
          const g = await greedy(model, m.greedy, { headMask: m.silenced });
          assert.deepEqual(g.ids, m.greedy.tokens, `${what}: greedy tokens`);
          assert.equal(g.stop, m.greedy.stop);
        }

        // Text needs a tokenizer: a clear error, and the model goes on working.
        const noTokenizer = (e) => e.name === 'InvalidArgumentError' && /no tokenizer/.test(e.message);
        await assert.rejects(model.tokenize('hello'), noTokenizer);
        await assert.rejects(model.detokenize([1, 2]), noTokenizer);
        await assert.rejects(model.generate('hello', { maxTokens: 1 }).next(), noTokenizer);
        assert.deepEqual((await model.forward(want.tokens)).logits, out.logits);
      } finally {
        await model.dispose();
      }
    });
  }
}

// Int8 and int4 weights against PyTorch's F32 logits: the largest error within 4% (int4: 50%) of
// the logits' span, the root mean square error within 6% (int4: 60%) of their standard deviation,
// and really quantized (the bounds and their reasons: tests/model_test.cpp,
// QuantizedLogitsStayNearPyTorch).
for (const quantize of ['int8', 'int4'])
  test(`${quantize}: every decoder stays near PyTorch`, async () => {
    for (const name of DECODERS) {
      const want = expected(name);
      const model = await loadModel(dir(name), { quantize });
      assert.equal(model.quantize, quantize);
      const { logits } = await model.forward(want.tokens);
      await model.dispose();
      checkQuantizedError(assert, logits, want.logits, quantize, name);
    }
  });

// The logits of one fixture's tokens from a loaded model (then disposed).
async function logitsOf(model, name) {
  try {
    return (await model.forward(expected(name).tokens)).logits;
  } finally {
    await model.dispose();
  }
}

// The files themselves: {config, weights} (buffers or Blobs), or a sharded checkpoint's {config,
// index, weights: [shards in the index's order]}, with no vocab or merges.
function filesOf(name, asBlob = false) {
  const wrap = (bytes) => (asBlob ? new Blob([bytes]) : bytes);
  const config = read(name, 'config.json');
  let index;
  try {
    index = read(name, 'model.safetensors.index.json');
  } catch {
    return { config: wrap(config), weights: wrap(read(name, 'model.safetensors')) };
  }
  const shards = [...new Set(Object.values(JSON.parse(index).weight_map))].sort();
  return { config: wrap(config), index: wrap(index), weights: shards.map((s) => wrap(read(name, s))) };
}

test('a files object without vocab and merges loads the same bits, in this thread and in a worker', async () => {
  for (const name of ['llama-gqa', 'llama-linear-sharded', 'gpt-neox-parallel', 'qwen3-qk-norm']) {
    const reference = await logitsOf(await loadModel(dir(name)), name);
    for (const [worker, asBlob] of [
      [false, false],
      [true, true],
    ]) {
      const model = await loadModel(filesOf(name, asBlob), { worker });
      assert.equal(model.hasTokenizer, false);
      assert.deepEqual(await logitsOf(model, name), reference, `${name} (worker: ${worker})`);
    }
  }
});

// --- an HTTP server of tests/fixtures (404 for what a directory does not have, as the hub answers)

let server, base;
const requested = [];
before(async () => {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requested.push(path);
    const [, name, file] = /^\/([\w.-]+)\/([\w.-]+)$/.exec(path) ?? [];
    let body;
    try {
      body = name && read(name, file);
    } catch {
      body = null;
    }
    if (!body) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server?.close());

test('from a URL: a directory without vocab.json and merges.txt loads (their 404 is no error), one file or shards', async () => {
  for (const name of ['mistral-sliding', 'llama-linear-sharded']) {
    const reference = await logitsOf(await loadModel(dir(name)), name);
    for (const worker of [false, true]) {
      requested.length = 0;
      const model = await loadModel(`${base}${name}/`, { worker });
      assert.equal(model.hasTokenizer, false);
      assert.equal(model.shape.modelType, configOf(name).model_type);
      assert.deepEqual(await logitsOf(model, name), reference, `${name} (worker: ${worker})`);
      assert.ok(requested.includes(`/${name}/vocab.json`), 'the tokenizer files were asked for');
    }
  }
});

// A hub id names https://huggingface.co/OWNER/NAME/resolve/main/: here fetch answers those
// addresses from the local server (this thread's fetch: the test cannot reach the hub).
test('a hub id: the model and its memory estimate, without a tokenizer', async () => {
  const realFetch = globalThis.fetch;
  const hub = /^https:\/\/huggingface\.co\/test-owner\/([\w.-]+)\/resolve\/main\/([\w.-]+)$/;
  globalThis.fetch = (url, init) => {
    const m = hub.exec(String(url));
    return realFetch(m ? `${base}${m[1]}/${m[2]}` : url, init);
  };
  try {
    for (const name of ['qwen2-bf16', 'llama-linear-sharded']) {
      const estimate = await estimateModel(`test-owner/${name}`);
      assert.ok(estimate.loadBytes > 0 && estimate.cacheBytes > 0 && estimate.fits, JSON.stringify(estimate));
      const model = await loadModel(`test-owner/${name}`);
      assert.equal(model.hasTokenizer, false);
      assert.deepEqual(await logitsOf(model, name), await logitsOf(await loadModel(dir(name)), name), name);
    }
  } finally {
    globalThis.fetch = realFetch;
  }
});
