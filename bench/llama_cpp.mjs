// llama.cpp's speed on the weights glassbox runs: each model directory is written as GGUF
// (scripts/write_gguf.mjs) in F32, Q8_0 and Q4_0, and llama.cpp (the prebuilt CPU libraries of npm
// @node-llama-cpp/linux-x64 through node-llama-cpp, bench/llama_cpp_peer.mjs) prefills a 128-token
// prompt and decodes 128 greedy tokens, as `glassbox_perf model` does (bench/engine.mjs): prefill
// tokens/s = prompt / (prompt's forward + first argmax); decode tokens/s = 128 / the 128 one-token
// forward passes after it. At 1 thread and at every core; llama.cpp's defaults otherwise (F16 KV
// cache, its own choice of CPU kernels for this machine's microarchitecture).
//
//   cd bench && npm ci && cd ..
//   node bench/llama_cpp.mjs --model gpt2-small=build/bench/gpt2-small-random \
//       --model llama-3.2-1b=build/bench/llama-3.2-1b [--types f32,q8_0,q4_0] [--threads 1,N]
//       [--runs 3] [--prompt FILE] [--gguf-dir build/bench/gguf]
//
// --prompt: a JSON array of prompt ids (engine.mjs writes build/bench/prompt-NAME.json); without
// it, 128 ids spread over the vocabulary. GGUF files are written once into --gguf-dir and reused
// while newer than their model's config.json and weights. Each figure is the median of --runs
// runs (min and max beside it). JSON on stdout, its results keyed 'MODEL TYPE THREADS'; progress on
// stderr.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { writeModelGguf } from '../scripts/write_gguf.mjs';
import { dispose, greedyTimed, loadGguf, openLlama } from './llama_cpp_peer.mjs';
import { stats } from './merge.mjs';
import { cachedGguf, promptIds } from './peer_inputs.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    model: { type: 'string', multiple: true },
    types: { type: 'string', default: 'f32,q8_0,q4_0' },
    threads: { type: 'string', default: `1,${cpus().length}` },
    runs: { type: 'string', default: '3' },
    prompt: { type: 'string' },
    'gguf-dir': { type: 'string', default: join(root, 'build/bench/gguf') },
  },
});
const PROMPT = 128,
  DECODE = 128;
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
const threadCounts = [...new Set(values.threads.split(',').map(Number))];
if (threadCounts.some((t) => !Number.isInteger(t) || t < 1))
  throw new Error(`--threads must list positive integers, got ${values.threads}`);
const types = values.types.split(',');
if (!values.model?.length) throw new Error('give at least one --model NAME=DIR');

const log = (s) => process.stderr.write(`llama_cpp: ${s}\n`);

const gguf = (name, dir, type) =>
  cachedGguf(join(values['gguf-dir'], `${name}-${type}.gguf`), dir, (file) => writeModelGguf(dir, file, { type }), log);

// The installed versions (bench/package-lock.json pins them) and the llama.cpp release they carry.
function peerVersions() {
  const read = (p) => JSON.parse(readFileSync(new URL(`./node_modules/${p}`, import.meta.url), 'utf8'));
  const meta = read('@node-llama-cpp/linux-x64/bins/linux-x64/_nlcBuildMetadata.json');
  return {
    'node-llama-cpp': read('node-llama-cpp/package.json').version,
    '@node-llama-cpp/linux-x64': read('@node-llama-cpp/linux-x64/package.json').version,
    'llama.cpp': `${meta.buildOptions.llamaCpp.repo} ${meta.buildOptions.llamaCpp.release}`,
  };
}

const llama = await openLlama();
// Keyed 'MODEL TYPE THREADS' (as bench/merge.mjs pools rounds: by key).
const results = {};
for (const spec of values.model) {
  const eq = spec.indexOf('=');
  if (eq < 1) throw new Error(`--model wants NAME=DIR, got ${spec}`);
  const name = spec.slice(0, eq),
    dir = spec.slice(eq + 1);
  const prompt = promptIds(dir, values.prompt, PROMPT);
  for (const type of types) {
    const file = gguf(name, dir, type);
    for (const threads of threadCounts) {
      const t0 = performance.now();
      const peer = await loadGguf(file, { threads, contextSize: PROMPT + DECODE + 8 });
      const loadMs = performance.now() - t0;
      const prefill = [],
        decode = [];
      let tokens = null;
      try {
        for (let r = 0; r < runs; r++) {
          const run = await greedyTimed(peer, prompt, DECODE);
          prefill.push(PROMPT / run.prefillSeconds);
          decode.push(DECODE / run.decodeSeconds);
          tokens ??= run.ids;
        }
      } finally {
        await dispose(peer);
      }
      const row = {
        model: name,
        type,
        threads,
        load_ms: loadMs,
        prefill_tok_s: stats(prefill),
        decode_tok_s: stats(decode),
        tokens,
      };
      log(
        `${name} ${type} ${threads} thread(s): prefill ${row.prefill_tok_s.median.toFixed(1)} tok/s, decode ${row.decode_tok_s.median.toFixed(1)} tok/s`,
      );
      results[`${name} ${type} ${threads}`] = row;
    }
  }
}
console.log(
  JSON.stringify(
    {
      peer: 'llama.cpp',
      package: peerVersions(),
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      llama_cpu_math_cores: llama.cpuMathCores,
      prompt_tokens: PROMPT,
      decode_tokens: DECODE,
      runs,
      results,
    },
    null,
    1,
  ),
);
