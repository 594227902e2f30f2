// Sharded checkpoints (model.safetensors.index.json and the shards it names) through the JS API:
// the gpt2-f32 fixture split into shards by this test loads as the single file does, bit for bit,
// from a directory path, from an HTTP URL, and as a files object (buffers and Blobs), in this
// thread and in a worker, with F32, int8 and int4 matrices; estimateModel reads every shard's header.
// The bad-input table's rows B74-B85, JS API column (C++ API and CLI: tests/shards_test.cpp).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { estimateModel, hubDirectoryUrl, loadModel } from '../../web/dist/glassbox.mjs';
import { expectReject } from './bad-input-table.mjs';
import { readTensors, safetensors } from './safetensors-files.mjs';

const fixture = fileURLToPath(new URL('../fixtures/gpt2-f32/', import.meta.url));
const shardedLlama = fileURLToPath(new URL('../fixtures/llama-linear-sharded/', import.meta.url));
const INDEX = 'model.safetensors.index.json';

// The fixture's config.json and its tensors dealt into `n` shards with their index, in `dir`, as
// transformers' save_pretrained writes them. -> the shards' names.
function writeSharded(dir, n) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), readFileSync(join(fixture, 'config.json')));
  const tensors = readTensors(join(fixture, 'model.safetensors'));
  const per = Math.ceil(tensors.length / n);
  const names = [],
    weightMap = {};
  for (let i = 0; i < n; i++) {
    const name = `model-0000${i + 1}-of-0000${n}.safetensors`;
    const part = tensors.slice(i * per, (i + 1) * per);
    for (const t of part) weightMap[t.name] = name;
    writeFileSync(join(dir, name), safetensors(part));
    names.push(name);
  }
  writeFileSync(join(dir, INDEX), JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }, null, 2));
  return names;
}

// Every position's logits over ids that visit the vocabulary.
async function logitsOf(model) {
  const ids = Array.from({ length: 16 }, (_, i) => (i * 7919) % model.config.vocab_size);
  try {
    return (await model.forward(ids)).logits;
  } finally {
    await model.dispose();
  }
}
const sameBits = (a, b, what) =>
  assert.ok(
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)),
    what,
  );

let root, server, base;
let made = 0;
const fresh = () => join(root, `model-${++made}`);
before(async () => {
  root = mkdtempSync(join(tmpdir(), 'glassbox-shards-'));
  // Files of `root` over HTTP, with byte ranges, as the hub serves them.
  server = createServer((req, res) => {
    let bytes;
    try {
      bytes = readFileSync(join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    } catch {
      res.writeHead(404);
      return res.end();
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!range) {
      res.writeHead(200, { 'content-length': bytes.length });
      return res.end(bytes);
    }
    const [a, b] = [Number(range[1]), Math.min(Number(range[2]), bytes.length - 1)];
    res.writeHead(206, { 'content-range': `bytes ${a}-${b}/${bytes.length}`, 'content-length': b - a + 1 });
    res.end(bytes.subarray(a, b + 1));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => {
  server?.close();
  rmSync(root, { recursive: true, force: true });
});

test('a sharded checkpoint loads as the single file, bit for bit: path, URL, files object; thread and worker; F32, int8 and int4', async () => {
  const dir = fresh();
  const names = writeSharded(dir, 3);
  const url = `${base}${dir.slice(root.length + 1)}/`;
  const files = (weights) => ({
    config: readFileSync(join(dir, 'config.json')),
    index: readFileSync(join(dir, INDEX)),
    weights,
  });
  for (const quantize of ['none', 'int8', 'int4']) {
    const want = await logitsOf(await loadModel(fixture, { quantize }));
    for (const worker of [false, true]) {
      const how = `quantize ${quantize}, worker ${worker}`;
      sameBits(await logitsOf(await loadModel(dir, { quantize, worker })), want, `${how}: path`);
      sameBits(await logitsOf(await loadModel(url, { quantize, worker })), want, `${how}: URL`);
      const buffers = names.map((n) => readFileSync(join(dir, n)));
      sameBits(await logitsOf(await loadModel(files(buffers), { quantize, worker })), want, `${how}: buffers`);
      // (in-memory Blobs: Node cannot send a file-backed one to a worker)
      const blobs = names.map((n) => new Blob([readFileSync(join(dir, n))]));
      sameBits(await logitsOf(await loadModel(files(blobs), { quantize, worker })), want, `${how}: Blobs`);
    }
  }
});

test("estimateModel reads every shard: the single file's estimate, and the shards' bytes", async () => {
  const dir = fresh();
  const names = writeSharded(dir, 3);
  const url = `${base}${dir.slice(root.length + 1)}/`;
  const shardBytes = names.reduce((n, name) => n + statSync(join(dir, name)).size, 0);
  for (const quantize of ['none', 'int8', 'int4']) {
    const single = await estimateModel(fixture, { quantize });
    for (const worker of [false, true])
      for (const source of [dir, url]) {
        const e = await estimateModel(source, { quantize, worker });
        assert.equal(e.loadBytes, single.loadBytes, `${source}, ${quantize}, worker ${worker}`);
        assert.equal(e.cacheBytes, single.cacheBytes);
        assert.equal(e.fileBytes, shardBytes);
      }
  }
});

test("a hub page of a sharded checkpoint's index is its directory", () => {
  assert.equal(
    hubDirectoryUrl('https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B/blob/main/model.safetensors.index.json'),
    'https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B/resolve/main/',
  );
});

test("progress of a sharded load counts every shard's bytes", async () => {
  const dir = fresh();
  const names = writeSharded(dir, 2);
  const total = names.reduce((n, name) => n + statSync(join(dir, name)).size, 0);
  const events = [];
  await (await loadModel(dir, { onProgress: (e) => events.push(e) })).dispose();
  const last = events.filter((e) => e.phase === 'read').at(-1);
  assert.deepEqual([last.loaded, last.total], [total, total]);
  assert.equal(events.at(-1).phase, 'convert');
});

// ---------------------------------------------------------------------------------------------
// Bad input, B74-B85: each way of loading a sharded directory (path and URL, thread and worker,
// estimateModel) refuses it, and the next load works.

// A copy of the sharded llama fixture in `dir`. -> its shards' names.
function copyShardedLlama(dir) {
  cpSync(shardedLlama, dir, { recursive: true });
  rmSync(join(dir, 'expected.json'));
  return [...new Set(Object.values(JSON.parse(readFileSync(join(dir, INDEX), 'utf8')).weight_map))].sort();
}

// A sharded copy (gpt2-f32 in three shards, or with `llama` the sharded llama fixture) changed by
// change(dir, names), as each reader sees it.
async function expectRow(id, change, { url = true, estimate = true, llama = false } = {}) {
  const dir = fresh();
  const names = llama ? copyShardedLlama(dir) : writeSharded(dir, 3);
  change(dir, names);
  const sources = [dir];
  if (url) sources.push(`${base}${dir.slice(root.length + 1)}/`);
  for (const source of sources)
    for (const worker of [false, true]) {
      await expectReject(id, loadModel(source, { worker }));
      if (estimate) await expectReject(id, estimateModel(source, { worker }));
    }
}
const editIndex = (dir, edit) => {
  const index = JSON.parse(readFileSync(join(dir, INDEX), 'utf8'));
  edit(index.weight_map);
  writeFileSync(join(dir, INDEX), JSON.stringify(index));
};
const firstTensor = (dir, name) => readTensors(join(dir, name))[0];

test('B74: a shard the index names is missing', async () => {
  for (const llama of [false, true]) await expectRow('B74', (dir, names) => rmSync(join(dir, names[1])), { llama });
});

test('B75: the index names a tensor no shard has', async () => {
  for (const llama of [false, true]) {
    await expectRow('B75', (dir, names) => editIndex(dir, (map) => (map['h.0.extra.weight'] = names[0])), { llama });
    await expectRow(
      'B75',
      (dir, names) =>
        writeFileSync(join(dir, names.at(-1)), safetensors(readTensors(join(dir, names.at(-1))).slice(1))),
      { llama },
    );
  }
});

test('B76: a shard holds a tensor the index does not name', async () => {
  await expectRow('B76', (dir, names) => editIndex(dir, (map) => delete map[firstTensor(dir, names[1]).name]));
});

test('B77: the index places a tensor in another shard', async () => {
  await expectRow('B77', (dir, names) => editIndex(dir, (map) => (map[firstTensor(dir, names[1]).name] = names[2])));
});

test('B78, B79, B83: an index that is not JSON, has no weight_map, or an empty one', async () => {
  await expectRow('B78', (dir) => writeFileSync(join(dir, INDEX), '{"weight_map": {'));
  for (const text of ['{"metadata": {}}', '[1, 2]', '{"weight_map": ["model.safetensors"]}'])
    await expectRow('B79', (dir) => writeFileSync(join(dir, INDEX), text));
  await expectRow('B83', (dir) => writeFileSync(join(dir, INDEX), '{"weight_map": {}}'));
});

test('B80: a shard that is not a regular file (a path in Node)', async () => {
  await expectRow(
    'B80',
    (dir, names) => {
      rmSync(join(dir, names[1]));
      execFileSync('mkfifo', [join(dir, names[1])]);
    },
    { url: false },
  );
  await expectRow(
    'B80',
    (dir, names) => {
      rmSync(join(dir, names[2]));
      mkdirSync(join(dir, names[2]));
    },
    { url: false },
  );
});

test('B81: a shard named by a path is never read', async () => {
  for (const file of ['../model.safetensors', '/etc/passwd', '..', ''])
    await expectRow('B81', (dir) => editIndex(dir, (map) => (map['wte.weight'] = file)));
});

test('B82: a shard shorter than its header says', async () => {
  await expectRow(
    'B82',
    (dir, names) => {
      const bytes = readFileSync(join(dir, names[1]));
      writeFileSync(join(dir, names[1]), bytes.subarray(0, bytes.length - 5));
    },
    { estimate: false },
  );
});

test("B84, B85: a files object's shards: no index, or not the shards the index names", async () => {
  const dir = fresh();
  const names = writeSharded(dir, 3);
  const config = readFileSync(join(dir, 'config.json'));
  const index = readFileSync(join(dir, INDEX));
  const weights = names.map((n) => readFileSync(join(dir, n)));
  for (const worker of [false, true]) {
    await expectReject('B84', loadModel({ config, weights }, { worker }));
    await expectReject('B84', loadModel({ config, weights: weights[0], index }, { worker }));
    await expectReject('B85', loadModel({ config, weights: weights.slice(1), index }, { worker }));
    const swapped = [
      new File([weights[1]], names[1]),
      new File([weights[0]], names[0]),
      new File([weights[2]], names[2]),
    ];
    // (Node's structured clone gives a worker a File as a Blob without its name: there the index's
    // check of each shard's tensors refuses the mix-up, B77.)
    await expectReject(worker ? 'B77' : 'B85', loadModel({ config, weights: swapped, index }, { worker }));
  }
  await expectReject('B85', estimateModel({ config, weights: weights.slice(1), index }));
  // and sha256, which checks one model.safetensors, is refused for shards
  await assert.rejects(
    loadModel({ config, weights, index }, { sha256: '0'.repeat(64) }),
    /a sharded checkpoint has none/,
  );
  // the next load works
  sameBits(
    await logitsOf(await loadModel({ config, weights, index })),
    await logitsOf(await loadModel(fixture)),
    'after the errors',
  );
});
