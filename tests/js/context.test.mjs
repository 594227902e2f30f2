// loadModel's and estimateModel's contextLength: the most positions a sequence holds, which sizes
// its KV cache and the memory check. Default: the model's positions, at most 4,096 (a Llama 3.2
// config's 131,072 would ask for more than the heap); a bad one is an InvalidArgumentError.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { estimateModel, InvalidArgumentError, loadModel } from '../../web/dist/glassbox.mjs';

const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}/`, import.meta.url));

// llama-gqa with a config that gives it 131,072 positions (rotary: no tensor depends on them).
const longContext = mkdtempSync(join(tmpdir(), 'glassbox-context-'));
cpSync(fixture('llama-gqa'), longContext, { recursive: true });
const config = JSON.parse(readFileSync(join(longContext, 'config.json'), 'utf8'));
writeFileSync(join(longContext, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 131072 }));
after(() => rmSync(longContext, { recursive: true, force: true }));

for (const worker of [false, true]) {
  const where = worker ? 'in a worker' : 'in this thread';

  test(`contextLength defaults to the positions, at most 4,096, ${where}`, async () => {
    const gpt2 = await loadModel(fixture('gpt2-f32'), { worker });
    assert.equal(gpt2.contextLength, gpt2.shape.positions);
    await gpt2.dispose();
    const long = await loadModel(longContext, { worker });
    assert.equal(long.shape.positions, 131072);
    assert.equal(long.contextLength, 4096);
    await long.dispose();
  });

  test(`contextLength caps forward and generation ${where}`, async () => {
    const model = await loadModel(fixture('llama-llama3-v5'), { worker, contextLength: 16 });
    assert.equal(model.contextLength, 16);
    const ids = new Int32Array(17).fill(3);
    await assert.rejects(model.forward(ids), {
      name: 'InvalidArgumentError',
      message: /17 tokens do not fit in the context of 16 positions/,
    });
    const full = await loadModel(fixture('llama-llama3-v5'), { worker });
    assert.deepEqual(
      (await model.forward(ids.subarray(0, 16))).logits,
      (await full.forward(ids.subarray(0, 16))).logits,
    );
    await full.dispose();
    const generation = model.generate([1, 2, 3, 4], { maxTokens: 40, temperature: 0, contextFull: 'stop' });
    let tokens = 0;
    for await (const step of generation) tokens += step.id === undefined ? 0 : 1;
    assert.equal(generation.stopReason, 'context_full');
    assert.equal(tokens, 13); // positions 4 .. 16: the last one sampled from position 15, never run
    await model.dispose();
  });
}

test('estimateModel counts the cache of the context asked for', async () => {
  const byDefault = await estimateModel(longContext);
  const whole = await estimateModel(longContext, { contextLength: 131072 });
  const short = await estimateModel(longContext, { contextLength: 64 });
  assert.equal(whole.cacheBytes, byDefault.cacheBytes * 32); // 131,072 positions against 4,096
  assert.equal(byDefault.cacheBytes, short.cacheBytes * 64);
  assert.equal(short.loadBytes, whole.loadBytes);
  assert.equal(whole.totalBytes, whole.loadBytes + whole.cacheBytes);
});

test('a contextLength outside 1 .. the positions is refused', async () => {
  for (const bad of [0, -1, 1.5, '16', null]) {
    await assert.rejects(loadModel(fixture('llama-gqa'), { contextLength: bad }), InvalidArgumentError, String(bad));
    await assert.rejects(estimateModel(fixture('llama-gqa'), { contextLength: bad }), InvalidArgumentError);
  }
  await assert.rejects(loadModel(fixture('llama-llama3-v5'), { contextLength: 513 }), {
    name: 'InvalidArgumentError',
    message: /the context must be 1\.\.512 positions/,
  });
  await assert.rejects(estimateModel(fixture('llama-llama3-v5'), { contextLength: 513 }), {
    name: 'InvalidArgumentError',
    message: /the context must be 1\.\.512 positions/,
  });
});
