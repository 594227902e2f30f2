// The bad-input table (docs/bad-input.md), JS API column, rows about the engine's results: results
// that are not finite are an error naming where they first appear (B28, B29), ids of a padded
// vocabulary that have no token are never sampled and have -Infinity logits (B30), and a batch has
// a cap (B34); in this thread and in a worker.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { expectReject } from './bad-input-table.mjs';

const fixture = (name) => new URL(`../fixtures/${name}/`, import.meta.url);
const read = (name, file) => readFileSync(new URL(file, fixture(name)));
const files = (name, withTokenizer = true) => ({
  config: read(name, 'config.json').toString(),
  weights: read(name, 'model.safetensors'),
  ...(withTokenizer ? { vocab: read(name, 'vocab.json').toString(), merges: read(name, 'merges.txt').toString() } : {}),
});

// A copy of safetensors bytes with F32 element `index` of tensor `name` set to `value`.
function withValue(weights, name, index, value) {
  const copy = new Uint8Array(weights);
  const view = new DataView(copy.buffer);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(copy.subarray(8, 8 + n)));
  assert.ok(header[name], name);
  view.setFloat32(8 + n + header[name].data_offsets[0] + 4 * index, value, true);
  return copy;
}

const drain = async (steps) => {
  const ids = [];
  for await (const step of steps) ids.push(step.id);
  return ids;
};

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';

  test(`${where}: B28, B29: results that are not finite are an error naming where they first appear`, async () => {
    const bytes = files('gpt2-bytes');
    const nan = await loadModel(
      { ...bytes, weights: withValue(bytes.weights, 'h.1.mlp.c_fc.bias', 3, NaN) },
      { worker },
    );
    await expectReject('B28', nan.forward([72, 105, 33]));
    await expectReject('B28', nan.forward([72, 105, 33], { lens: 3 }));
    await expectReject('B28', nan.forward([72, 105, 33], { attention: true }));
    await expectReject(
      'B28',
      nan.forwardBatch([
        [1, 2],
        [72, 105, 33],
      ]),
    );
    await expectReject('B28', drain(nan.generate('Hi', { maxTokens: 3 })));
    await nan.dispose();

    const classifier = files('gpt2-classifier', false);
    const cls = await loadModel(
      { ...classifier, weights: withValue(classifier.weights, 'transformer.h.1.mlp.c_fc.bias', 3, NaN) },
      { worker },
    );
    await expectReject('B28', cls.classify([72, 5, 33]));
    await cls.dispose();

    const f32 = files('gpt2-f32', false);
    const inf = await loadModel(
      { ...f32, weights: withValue(f32.weights, 'wpe.weight', 32 + 7, Infinity) },
      { worker },
    );
    await expectReject('B29', inf.forward([1, 5]));
    // Position 0's row is finite: a token there runs, as the fixture's.
    const original = await loadModel(f32, { worker });
    assert.deepEqual((await inf.forward([5])).logits, (await original.forward([5])).logits);
    await inf.dispose();
    await original.dispose();
  });

  test(`${where}: B30: ids of a padded vocabulary without a token are -Infinity and never sampled`, async () => {
    // gpt2-bytes-padded: gpt2-bytes with 63 ids past its 257 tokens whose logits would be the
    // largest (tests/fixtures/README.md).
    const padded = await loadModel(fixture('gpt2-bytes-padded'), { worker });
    const bytes = await loadModel(fixture('gpt2-bytes'), { worker });
    assert.equal(padded.shape.vocabulary, 320);
    const ids = [72, 105, 33, 32];
    const got = (await padded.forward(ids, { lens: 5 })).logits;
    const want = (await bytes.forward(ids)).logits;
    for (let t = 0; t < ids.length; t++) {
      assert.deepEqual(got.subarray(t * 320, t * 320 + 257), want.subarray(t * 257, (t + 1) * 257));
      assert.ok(
        got.subarray(t * 320 + 257, (t + 1) * 320).every((x) => x === -Infinity),
        `position ${t}`,
      );
    }
    for (const layer of (await padded.forward(ids, { lens: 5 })).lens)
      for (const row of layer) for (const { id } of row) assert.ok(id < 257, `lens id ${id}`);
    const [batch] = (await padded.forwardBatch([ids])).logits;
    assert.deepEqual(batch, got);
    for (const temperature of [0, 1, 3]) {
      const options = { maxTokens: 30, temperature, topK: temperature === 3 ? 5 : 0, topP: 0.9, seed: 7, top: 3 };
      const sampled = [];
      for await (const step of padded.generate(ids, options)) {
        sampled.push(step.id);
        for (const { id } of step.top) assert.ok(id < 257, `top id ${id}`);
      }
      assert.deepEqual(sampled, await drain(bytes.generate(ids, options)), `temperature ${temperature}`);
    }
    await padded.dispose();
    await bytes.dispose();
  });

  test(`${where}: B34: a batch whose logits are more than one call returns is refused`, async () => {
    const model = await loadModel(fixture('gpt2-f32'), { worker });
    const batch = Array.from({ length: 43_691 }, () => new Array(32).fill(1));
    await expectReject('B34', model.forwardBatch(batch));
    assert.equal((await model.forwardBatch([[1, 2]])).logits.length, 1); // the model still works
    await model.dispose();
  });
}
