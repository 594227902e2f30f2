// The engine's own figures for scripts/bench: glassbox_perf (bench/perf.cpp) natively and as
// WebAssembly under Node, each run a fresh process, RUNS runs per figure -> medians with min-max.
//
//   node bench/engine.mjs --runs N --text BROWN_TXT --model NAME=DIR [--model NAME=DIR ...]
//
// For each model: load time, time to first token and prefill tokens/s for a 128-token prompt (the
// first 128 tokens of the Brown text in the model's own vocabulary, written to
// build/bench/prompt-NAME.json for the peers to use too), greedy decode tokens/s over 128 tokens
// with the KV cache, peak memory; with F32, int8 and int4 weights (--quantize), on one thread, and
// natively also on every core. Natively F32 twice: with the default fused multiply-adds and with
// the portable products (--arithmetic portable), the WebAssembly build's arithmetic. Also: the tokenizer in WebAssembly on the Brown text, and the
// single-core memory bandwidth (STREAM triad) natively and in WebAssembly, and training tokens/s in
// both. JSON on stdout.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';

import { stats } from './merge.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    text: { type: 'string' },
    model: { type: 'string', multiple: true },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
const PROMPT = 128,
  DECODE = 128;

const builds = {
  native: (args) => [`${root}build/native/glassbox_perf`, args],
  wasm: (args) => [process.execPath, ['--no-experimental-fetch', `${root}build/wasm/glassbox_perf.js`, ...args]],
};
const perf = (build, args) => {
  const [file, argv] = builds[build](args);
  return JSON.parse(execFileSync(file, argv, { maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] }).toString());
};

function repeat(build, args, fields, label) {
  const results = [];
  for (let i = 0; i < runs; ++i) {
    process.stderr.write(`bench: ${label} (${build}) run ${i + 1}/${runs}\n`);
    results.push(perf(build, args));
  }
  const out = Object.fromEntries(fields.map((f) => [f, stats(results.map((r) => r[f]))]));
  if (results[0].tokens) {
    out.tokens = results[0].tokens;
    out.deterministic = results.every((r) => JSON.stringify(r.tokens) === JSON.stringify(results[0].tokens));
  }
  return out;
}

const report = { machine: { cpu: cpus()[0].model, cpus: cpus().length, node: process.version }, runs, models: {} };
const text = readFileSync(values.text, 'utf8');
for (const spec of values.model ?? []) {
  const [name, dir] = spec.split('=');
  const ids = JSON.parse(
    execFileSync(`${root}build/native/glassbox`, ['tokenize', '-m', dir], { input: text.slice(0, 4000) }).toString(),
  );
  if (ids.length < PROMPT) throw new Error(`${dir}: the text gives only ${ids.length} tokens`);
  const idsFile = `${root}build/bench/prompt-${name}.json`;
  writeFileSync(idsFile, JSON.stringify(ids.slice(0, PROMPT)));
  const config = JSON.parse(readFileSync(`${dir}/config.json`, 'utf8'));
  const fields = ['load_ms', 'ttft_ms', 'prefill_tok_s', 'decode_tok_s', 'peak_rss_mb'];
  const args = ['model', dir, '--ids', idsFile, '--decode', String(DECODE)];
  const int8 = [...args, '--quantize', 'int8'];
  const int4 = [...args, '--quantize', 'int4'];
  const portable = [...args, '--arithmetic', 'portable'];
  // Single-thread runs measure the memory bandwidth right after decoding, in the same process,
  // for the decode's share of the roofline at that moment (bench/report.mjs).
  const paired = (a) => [...a, '--triad-after', '256'];
  const withTriad = [...fields, 'triad_gb_s'];
  report.models[name] = {
    dir,
    idsFile,
    config,
    prompt: PROMPT,
    decode: DECODE,
    native: repeat('native', paired(args), withTriad, name),
    portable: repeat('native', paired(portable), withTriad, `${name} portable`),
    wasm: repeat('wasm', paired(args), withTriad, name),
    int8: {
      native: repeat('native', paired(int8), withTriad, `${name} int8`),
      wasm: repeat('wasm', paired(int8), withTriad, `${name} int8`),
    },
    int4: {
      native: repeat('native', paired(int4), withTriad, `${name} int4`),
      wasm: repeat('wasm', paired(int4), withTriad, `${name} int4`),
    },
    // Natively on every core (--threads 0), F32, int8 and int4.
    all_cores: {
      threads: cpus().length,
      native: repeat('native', [...args, '--threads', '0'], fields, `${name} all cores`),
      portable: repeat('native', [...portable, '--threads', '0'], fields, `${name} portable all cores`),
      int8: repeat('native', [...int8, '--threads', '0'], fields, `${name} int8 all cores`),
      int4: repeat('native', [...int4, '--threads', '0'], fields, `${name} int4 all cores`),
    },
  };
}
report.tokenizer_wasm = repeat(
  'wasm',
  ['tokenizer', `${root}tests/fixtures/tokenizer/gpt2`, values.text],
  ['encode_mb_s', 'decode_mb_s'],
  'tokenizer',
);
report.triad = {
  native: repeat('native', ['triad'], ['gb_s'], 'triad'),
  wasm: repeat('wasm', ['triad'], ['gb_s'], 'triad'),
};
// Training: glassbox_perf train's defaults, a 4 x 128 GPT on batches of 16 x 128, one
// thread, natively and in WebAssembly; the losses say whether both computed the same bits.
const training = ['train', '--steps', '10'];
const trainingRuns = { native: [], wasm: [] };
for (let i = 0; i < runs; ++i)
  for (const build of ['native', 'wasm']) {
    process.stderr.write(`bench: training (${build}) run ${i + 1}/${runs}\n`);
    trainingRuns[build].push(perf(build, training));
  }
const tokensPerS = (build) => ({ tokens_per_s: stats(trainingRuns[build].map((r) => r.tokens_per_s)) });
report.training = {
  native: tokensPerS('native'),
  wasm: tokensPerS('wasm'),
  same_losses: JSON.stringify(trainingRuns.native[0].losses) === JSON.stringify(trainingRuns.wasm[0].losses),
};
console.log(JSON.stringify(report, null, 2));
