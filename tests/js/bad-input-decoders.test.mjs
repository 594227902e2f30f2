// The bad-input table (docs/bad-input.md), the rows of the decoder types (llama, mistral, qwen2,
// qwen3, gpt_neox, gpt_neo), JS API column: each row's config.json or weights, in a copy of a
// decoder fixture, must reject with the table's fragment from a directory path, from the files
// (buffers; a sharded copy as {config, index, weights: [shards]}) and in estimateModel, in this
// thread and in a worker; after them the fixture loads and runs. C++ API and CLI columns:
// tests/bad_input_decoders_test.cpp.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { estimateModel, loadModel } from '../../web/dist/glassbox.mjs';
import { expectReject } from './bad-input-table.mjs';
import { readTensors, safetensors } from './safetensors-files.mjs';

const INDEX = 'model.safetensors.index.json';
const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}/`, import.meta.url));

let root;
let made = 0;
before(() => (root = mkdtempSync(join(tmpdir(), 'glassbox-bad-decoders-'))));
after(() => rmSync(root, { recursive: true, force: true }));

// A copy of fixture `name` (without its expected outputs) changed by change(dir).
function brokenCopy(name, change) {
  const dir = join(root, `model-${++made}`);
  cpSync(fixture(name), dir, { recursive: true });
  rmSync(join(dir, 'expected.json'));
  change(dir);
  return dir;
}

// The directory's files as loadModel takes them.
function filesOf(dir) {
  const config = readFileSync(join(dir, 'config.json'));
  if (existsSync(join(dir, 'model.safetensors')))
    return { config, weights: readFileSync(join(dir, 'model.safetensors')) };
  const index = readFileSync(join(dir, INDEX));
  const shards = [...new Set(Object.values(JSON.parse(index.toString()).weight_map))].sort();
  return { config, index, weights: shards.map((s) => readFileSync(join(dir, s))) };
}

// Row `id` for a copy of `name` changed by change(dir), on every way of loading it.
async function expectRow(id, name, change) {
  const dir = brokenCopy(name, change);
  for (const worker of [false, true]) {
    await expectReject(id, loadModel(dir, { worker }));
    await expectReject(id, loadModel(filesOf(dir), { worker }));
    await expectReject(id, estimateModel(dir, { worker }));
  }
}

const editConfig = (dir, edit) => {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  edit(config);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
};
const setConfig = (key, value) => (dir) => editConfig(dir, (c) => (c[key] = value));
// model.safetensors with edit(tensor) applied to each tensor; a tensor it returns false for is dropped.
const editTensors = (edit) => (dir) => {
  const file = join(dir, 'model.safetensors');
  writeFileSync(file, safetensors(readTensors(file).filter(edit)));
};

test('B4: an unknown model_type, in a decoder too, lists the supported ones', async () => {
  for (const name of ['gpt2-f32', 'llama-gqa', 'llama-linear-sharded'])
    await expectRow('B4', name, setConfig('model_type', 'mamba'));
});

test('B86, B87: a rope type glassbox does not run, in both config forms', async () => {
  await expectRow('B86', 'llama-gqa', setConfig('rope_scaling', { rope_type: 'yarn', factor: 4.0 }));
  await expectRow('B86', 'llama-linear-sharded', setConfig('rope_scaling', { type: 'yarn', factor: 4.0 }));
  for (const name of ['llama-llama3-v5', 'gpt-neox-sequential-f16-v5'])
    await expectRow('B87', name, (dir) => editConfig(dir, (c) => (c.rope_parameters.rope_type = 'longrope')));
});

test('B88-B90: weights shaped otherwise than the config says', async () => {
  await expectRow(
    'B88',
    'llama-gqa',
    editTensors((t) => {
      if (t.name === 'model.layers.0.mlp.gate_proj.weight') t.shape = [...t.shape].reverse();
      return true;
    }),
  );
  await expectRow('B89', 'llama-llama3-v5', setConfig('num_key_value_heads', 1));
  await expectRow('B90', 'qwen3-qk-norm', setConfig('head_dim', 8));
});

test('B91-B94: heads, widths, rotary part and windows that do not fit together', async () => {
  await expectRow('B91', 'mistral-sliding', setConfig('num_key_value_heads', 3));
  await expectRow('B92', 'mistral-sliding', setConfig('num_attention_heads', 6));
  await expectRow('B93', 'gpt-neox-parallel', setConfig('rotary_pct', 0.2));
  for (const name of ['mistral-sliding', 'qwen2-sliding-v5'])
    await expectRow('B94', name, setConfig('sliding_window', 0));
});

test('B95-B97: weights of the wrong kind, or missing', async () => {
  for (const [dtype, size] of [
    ['I64', 8],
    ['BOOL', 1],
  ])
    await expectRow(
      'B95',
      'llama-gqa',
      editTensors((t) => {
        if (t.name === 'model.layers.0.self_attn.q_proj.weight') {
          t.dtype = dtype;
          t.bytes = Buffer.alloc((t.bytes.length / 4) * size);
        }
        return true;
      }),
    );
  await expectRow(
    'B96',
    'qwen3-qk-norm',
    editTensors((t) => t.name !== 'model.embed_tokens.weight'),
  );
  await expectRow('B97', 'llama-llama3-bf16', (dir) => editConfig(dir, (c) => delete c.tie_word_embeddings));
  await expectRow('B97', 'qwen3-qk-norm', setConfig('tie_word_embeddings', false));
});

test('after the errors, the fixtures load and run, unchanged copies too', async () => {
  for (const worker of [false, true])
    for (const name of ['llama-gqa', 'llama-linear-sharded', 'qwen3-qk-norm', 'gpt-neox-parallel']) {
      const model = await loadModel(
        brokenCopy(name, () => {}),
        { worker },
      );
      const { logits } = await model.forward([1, 2, 3]);
      assert.equal(logits.length, 3 * model.config.vocab_size, name);
      assert.ok(logits.every(Number.isFinite), name);
      await model.dispose();
    }
});
