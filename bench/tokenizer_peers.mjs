// Tokenizer throughput of the peers, on the same text and machine as glassbox_bench:
// npm tiktoken (OpenAI's Rust core compiled to WebAssembly) and js-tiktoken (pure JavaScript).
//
//   node bench/tokenizer_peers.mjs TEXT_FILE RUNS   -> JSON on stdout
//
// Each figure: median, min and max MB/s over RUNS timed runs (after one warm-up run).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { stats } from './merge.mjs';

const require = createRequire(import.meta.url);
// Read the version from the installed package (its "exports" hide package.json from require).
const versionOf = (name) =>
  JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url))).version;
const [file, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const text = readFileSync(file, 'utf8');
const mb = Buffer.byteLength(text) / 1e6;

function measure(fn) {
  fn(); // warm-up (JIT, WASM compilation, caches)
  const rates = [];
  for (let i = 0; i < runs; ++i) {
    const start = process.hrtime.bigint();
    fn();
    rates.push(mb / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  return stats(rates);
}

const results = {};

const { get_encoding } = require('tiktoken');
const tk = get_encoding('gpt2');
const tkIds = tk.encode_ordinary(text);
results.tiktoken = {
  version: versionOf('tiktoken'),
  tokens: tkIds.length,
  encode_mb_s: measure(() => tk.encode_ordinary(text)),
  // decode returns UTF-8 bytes; a JS user also needs the string
  decode_mb_s: measure(() => new TextDecoder().decode(tk.decode(tkIds))),
};
tk.free();

const { getEncoding } = require('js-tiktoken');
const js = getEncoding('gpt2');
const jsIds = js.encode(text, [], []);
results['js-tiktoken'] = {
  version: versionOf('js-tiktoken'),
  tokens: jsIds.length,
  encode_mb_s: measure(() => js.encode(text, [], [])),
  decode_mb_s: measure(() => js.decode(jsIds)),
};

process.stdout.write(
  JSON.stringify({ text_bytes: Buffer.byteLength(text), node: process.version, results }, null, 2) + '\n',
);
