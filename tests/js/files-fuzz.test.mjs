// The JS API's file reading in Node, fuzzed: a model directory (the gpt2-bytes fixture) one of whose
// four files is made, at random, a FIFO, a directory, a loop of symbolic links, a link to a device
// or to a file that reads on past its size, a huge sparse file, the file cut at a random point,
// random bytes, or the file with random bytes changed; then loadModel (in this thread, or in a worker), estimateModel and the tokenizer entry
// read it. Each must load or reject with one of the API's error classes, within a time limit: no
// hang, no raw error, no process brought down. Seeded, so a failure names the case that reproduces
// it. The libFuzzer targets (tests/fuzz) cover the parsers behind; this covers the reading before.
//
//   node --test tests/js/files-fuzz.test.mjs                      the default: 48 cases, seed 1
//   GLASSBOX_FILES_FUZZ_CASES=5000 GLASSBOX_FILES_FUZZ_SEED=7 node --test tests/js/files-fuzz.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { estimateModel, GlassboxError, loadModel } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';

const CASES = Number(process.env.GLASSBOX_FILES_FUZZ_CASES ?? 48);
const SEED = Number(process.env.GLASSBOX_FILES_FUZZ_SEED ?? 1);
const LIMIT_MS = 20_000; // per call: a hang, not a slow machine

const fixture = fileURLToPath(new URL('../fixtures/gpt2-bytes/', import.meta.url));
const FILES = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];
// The classes the API documents for a bad file (the base class alone says nothing).
const CLASSES = new Set(['ModelFormatError', 'InvalidArgumentError', 'OutOfMemoryError']);

// xorshift32: the same cases for the same seed everywhere.
function random(seed) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
  const below = (n) => Math.floor((next() / 2 ** 32) * n);
  return { below, bytes: (n) => Uint8Array.from({ length: n }, () => below(256)) };
}

// What replaces the file at `path` (whose original bytes are `bytes`): [name, make(path)].
function mutations(r, bytes) {
  return [
    ['a FIFO', (p) => execFileSync('mkfifo', [p])],
    ['a directory', (p) => mkdirSync(p)],
    ['a loop of symbolic links', (p) => symlinkSync(p, p)],
    ['a link to /dev/zero', (p) => symlinkSync('/dev/zero', p)],
    ['a link to /dev/urandom', (p) => symlinkSync('/dev/urandom', p)],
    ['a link to /dev/null', (p) => symlinkSync('/dev/null', p)],
    ['a file of size 0 that reads on (/proc/self/pagemap)', (p) => symlinkSync('/proc/self/pagemap', p)],
    [
      'a huge sparse file',
      (p) => {
        writeFileSync(p, bytes.subarray(0, r.below(bytes.length + 1)));
        truncateSync(p, 2 ** 26 + r.below(2 ** 32)); // over 64 MB, up to 4 GB, holes
      },
    ],
    ['the file cut short', (p) => writeFileSync(p, bytes.subarray(0, r.below(bytes.length)))],
    ['random bytes', (p) => writeFileSync(p, r.bytes(r.below(4096)))],
    [
      'the file with random bytes changed',
      (p) => {
        const changed = Uint8Array.from(bytes);
        for (let n = 1 + r.below(8); n > 0; --n) changed[r.below(changed.length)] = r.below(256);
        writeFileSync(p, changed);
      },
    ],
  ];
}

// The promise, or a rejection saying it hung.
function limited(promise, what) {
  let timer;
  const hung = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

// Loads or rejects with a documented class; what loaded is disposed (and, with a tokenizer, used).
// -> 'loaded' or the error's name.
async function expectLoadsOrRefuses(call, what) {
  try {
    const made = await limited(call(), what);
    if (typeof made?.tokenize === 'function') await made.tokenize('Hello world');
    await made?.dispose?.();
    return 'loaded';
  } catch (e) {
    assert.ok(e instanceof GlassboxError, `${what}: not a GlassboxError: ${e?.stack ?? e}`);
    assert.ok(CLASSES.has(e.name), `${what}: ${e.name}: ${e.message}`);
    return e.name;
  }
}

const root = mkdtempSync(join(tmpdir(), 'glassbox-files-fuzz-'));
after(() => rmSync(root, { recursive: true, force: true }));

test(`the Node loader, fuzzed: ${CASES} cases from seed ${SEED}`, { timeout: CASES * 4 * LIMIT_MS }, async (t) => {
  const r = random(SEED);
  const seen = new Map(),
    outcomes = new Map();
  const count = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  for (let i = 0; i < CASES; ++i) {
    const file = FILES[i % FILES.length];
    const dir = join(root, `case-${i}`);
    cpSync(fixture, dir, { recursive: true });
    const path = join(dir, file);
    const all = mutations(r, readFileSync(path));
    const [name, make] = all[r.below(all.length)];
    rmSync(path);
    make(path);
    const what = `seed ${SEED}, case ${i}: ${file} as ${name}`;
    const worker = r.below(4) === 0;
    count(
      outcomes,
      await expectLoadsOrRefuses(() => loadModel(dir, { worker }), `${what}, loadModel (worker: ${worker})`),
    );
    if (file === 'config.json' || file === 'model.safetensors')
      count(outcomes, await expectLoadsOrRefuses(() => estimateModel(dir), `${what}, estimateModel`));
    else count(outcomes, await expectLoadsOrRefuses(() => loadTokenizer(dir), `${what}, loadTokenizer`));
    count(seen, name);
    rmSync(dir, { recursive: true, force: true });
  }
  t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  // the default run gives every mutation at least once
  if (CASES >= 48) assert.equal(seen.size, mutations(r, new Uint8Array(1)).length, [...seen.keys()].join(', '));
});
