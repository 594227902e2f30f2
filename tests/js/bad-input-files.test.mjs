// The bad-input table's rows about a model's files (docs/bad-input.md), JS API column: special files
// (a FIFO, a device, a directory) where a model directory's files belong, small files over the
// CLI's caps (read from a path, given as Blobs or buffers, or downloaded with or without a
// Content-Length), each refused without being read whole, never a hang; in this thread, in a
// worker, estimateModel, and the tokenizer entry (glassbox/tokenizer), which reads vocab.json and
// merges.txt the same way.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  openAsBlob,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { estimateModel, GlassboxError, loadModel } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';
import { fragment } from './bad-input-table.mjs';

const fixture = fileURLToPath(new URL('../fixtures/gpt2-bytes/', import.meta.url));
const read = (file) => readFileSync(join(fixture, file));
const MB = 2 ** 20;

// `promise` rejects with row `id`'s class and fragment, and the message begins with `where` (the
// file's path or address, or the file given), as the CLI's does.
async function expectRow(id, promise, where) {
  const want = fragment(id);
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof GlassboxError, `${id}: a GlassboxError, got ${e}`);
    assert.equal(e.name, want.name, `${id}: ${e.message}`);
    assert.ok(e.message.includes(want.message), `${id}: "${e.message}" should contain "${want.message}"`);
    assert.ok(e.message.startsWith(where), `${id}: "${e.message}" should begin with "${where}"`);
    return true;
  });
}

let root;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'glassbox-files-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

// A copy of the gpt2-bytes fixture (which has a tokenizer) whose `file` is replaced by make(path).
let made = 0;
function modelWith(file, make) {
  const dir = join(root, `model-${++made}`);
  cpSync(fixture, dir, { recursive: true });
  rmSync(join(dir, file));
  make(join(dir, file));
  return { dir, path: join(dir, file) };
}
const fifo = (path) => execFileSync('mkfifo', [path]);
const sparse = (bytes) => (path) => {
  writeFileSync(path, '');
  truncateSync(path, bytes); // a hole: no disk, no memory
};

// Each way the JS API reads a model directory's `file` from a path, in this thread and in a worker.
function readers(file) {
  const ways = [];
  for (const worker of [false, true]) ways.push([`loadModel, worker: ${worker}`, (dir) => loadModel(dir, { worker })]);
  if (file === 'config.json' || file === 'model.safetensors')
    for (const worker of [false, true])
      ways.push([`estimateModel, worker: ${worker}`, (dir) => estimateModel(dir, { worker })]);
  if (file === 'vocab.json' || file === 'merges.txt') ways.push(['loadTokenizer', (dir) => loadTokenizer(dir)]);
  return ways;
}
const FILES = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];

test(
  'B66: a FIFO as any file of the model directory is not a regular file, and nothing waits for a writer',
  { timeout: 60_000 },
  async () => {
    for (const file of FILES) {
      const { dir, path } = modelWith(file, fifo);
      for (const [how, load] of readers(file))
        await expectRow('B66', load(dir), path).catch((e) => assert.fail(`${how}: ${e.message}`));
    }
  },
);

test(
  'B67: a device (/dev/zero, /dev/urandom) as any file of the model directory is not a regular file',
  { timeout: 60_000 },
  async () => {
    for (const file of FILES) {
      for (const device of ['/dev/zero', '/dev/urandom']) {
        const { dir, path } = modelWith(file, (p) => symlinkSync(device, p));
        const rss = process.memoryUsage().rss;
        for (const [how, load] of readers(file))
          await expectRow('B67', load(dir), path).catch((e) => assert.fail(`${how}, ${device}: ${e.message}`));
        assert.ok(process.memoryUsage().rss - rss < 256 * MB, `${file} -> ${device}: nothing of it was read`);
      }
    }
  },
);

test('B68: a directory as any file of the model directory is not a regular file', { timeout: 60_000 }, async () => {
  for (const file of FILES) {
    const { dir, path } = modelWith(file, (p) => mkdirSync(p));
    for (const [how, load] of readers(file))
      await expectRow('B68', load(dir), path).catch((e) => assert.fail(`${how}: ${e.message}`));
  }
});

test(
  'B69: a 1.5 GB (sparse) vocab.json, or a 65 MB merges.txt, is refused by its size before it is read',
  { timeout: 60_000 },
  async () => {
    for (const [file, bytes] of [
      ['vocab.json', 1.5e9],
      ['merges.txt', 65 * MB],
    ]) {
      const { dir, path } = modelWith(file, sparse(bytes));
      const rss = process.memoryUsage().rss;
      for (const [how, load] of readers(file))
        await expectRow('B69', load(dir), `${path}: is ${bytes} bytes`).catch((e) =>
          assert.fail(`${how}: ${e.message}`),
        );
      assert.ok(process.memoryUsage().rss - rss < 256 * MB, `${file}: nothing of it was read`);
    }
  },
);

test(
  'B70: a config.json over 1 MB (sparse, 2 MB) is refused by its size before it is read',
  { timeout: 60_000 },
  async () => {
    const { dir, path } = modelWith('config.json', sparse(2 * MB));
    for (const [how, load] of readers('config.json'))
      await expectRow('B70', load(dir), `${path}: is ${2 * MB} bytes`).catch((e) =>
        assert.fail(`${how}: ${e.message}`),
      );
  },
);

test(
  'B70: a config.json that holds more than its size says is read no further than the cap',
  { timeout: 60_000 },
  async () => {
    // /proc/self/pagemap: a regular file whose size is 0, and which reads on for gigabytes (8 bytes
    // per page of the reader's address space), as a file that grows while it is read would
    const { dir, path } = modelWith('config.json', (p) => symlinkSync('/proc/self/pagemap', p));
    for (const [how, load] of readers('config.json'))
      await expectRow('B70', load(dir), `${path}: is at least `).catch((e) => assert.fail(`${how}: ${e.message}`));
  },
);

test(
  'B71: a Blob or buffer given as vocab, merges or config over its cap is refused before it is read',
  { timeout: 60_000 },
  async () => {
    const big = join(root, 'big');
    sparse(65 * MB)(big);
    const files = {
      config: read('config.json'),
      weights: read('model.safetensors'),
      vocab: read('vocab.json'),
      merges: read('merges.txt'),
    };
    // a Blob of a sparse file: 65 MB that take no memory until read
    const blob = await openAsBlob(big);
    const buffer = new ArrayBuffer(65 * MB);
    for (const worker of [false, true]) {
      await expectRow(
        'B71',
        loadModel({ ...files, vocab: blob }, { worker }),
        `"vocab" (vocab.json): is ${65 * MB} bytes`,
      );
      await expectRow(
        'B71',
        loadModel({ ...files, merges: buffer }, { worker }),
        `"merges" (merges.txt): is ${65 * MB} bytes`,
      );
      await expectRow(
        'B71',
        loadModel({ ...files, config: new Uint8Array(2 * MB) }, { worker }),
        '"config" (config.json)',
      );
      await expectRow('B71', estimateModel({ ...files, config: blob }, { worker }), '"config" (config.json)');
    }
    await expectRow('B71', loadTokenizer({ vocab: blob, merges: files.merges }), '"vocab" (vocab.json)');
    await expectRow(
      'B71',
      loadTokenizer({ vocab: files.vocab, merges: new Uint8Array(buffer) }),
      '"merges" (merges.txt)',
    );
  },
);

// A server of the fixture whose `file` is either announced as 65 MB (Content-Length) with a few
// bytes sent and the rest never, or streamed without a length, zeros for as long as it is read.
let server, base;
const streamed = { bytes: 0 };
before(async () => {
  server = createServer((req, res) => {
    const [mode, name] = req.url.split('/').slice(-2);
    if (mode === 'announced' && name === 'vocab.json') {
      res.writeHead(200, { 'content-length': 65 * MB });
      return res.write('{"'); // and nothing more: the length alone must refuse it
    }
    if (mode === 'streamed' && (name === 'vocab.json' || name === 'config.json')) {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length
      const chunk = Buffer.alloc(MB, 0x20);
      const more = () => {
        while (!res.destroyed && res.write(chunk)) streamed.bytes += chunk.length;
      };
      res.on('drain', more);
      return more();
    }
    let body;
    try {
      body = read(name);
    } catch {
      return res.writeHead(404).end(); // (the optional files the fixture does not have)
    }
    res.writeHead(200).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test(
  'B72: a download of vocab.json announcing more than 64 MB is refused by its Content-Length',
  { timeout: 60_000 },
  async () => {
    const url = `${base}/announced/vocab.json`;
    for (const worker of [false, true])
      await expectRow('B72', loadModel(`${base}/announced/`, { worker }), `${url}: is ${65 * MB} bytes`);
    await expectRow('B72', loadTokenizer(`${base}/announced/`), `${url}: is ${65 * MB} bytes`);
  },
);

test(
  'B73: a download without a length is refused once it passes the cap, without reading the rest',
  { timeout: 60_000 },
  async () => {
    for (const worker of [false, true]) {
      await expectRow('B73', loadModel(`${base}/streamed/`, { worker }), `${base}/streamed/config.json`);
      await expectRow('B73', estimateModel(`${base}/streamed/`, { worker }), `${base}/streamed/config.json`);
    }
    const rss = process.memoryUsage().rss;
    await expectRow('B73', loadTokenizer(`${base}/streamed/`), `${base}/streamed/vocab.json`);
    assert.ok(process.memoryUsage().rss - rss < 512 * MB, 'the endless vocab.json was not held');
  },
);

test('the caps are no smaller than they say: a regular config.json of just under 1 MB is read (and parsed)', async () => {
  // JSON of 1 MB - 1 bytes: the fixture's config padded with spaces, one byte under the cap
  const config = read('config.json').toString();
  const { dir } = modelWith('config.json', (p) =>
    writeFileSync(p, config + ' '.repeat(MB - 1 - Buffer.byteLength(config))),
  );
  for (const worker of [false, true]) {
    const model = await loadModel(dir, { worker });
    assert.deepEqual(model.config, JSON.parse(config));
    await model.dispose();
  }
});
