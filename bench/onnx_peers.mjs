// Model speed of the peers, on the model of bench/make_model.py (GPT-2 small shape, random
// weights, model.onnx with a KV cache): onnxruntime-node (native CPU) and onnxruntime-web (its
// WebAssembly backend with SIMD), both on one thread, both under this Node.
//
//   node bench/onnx_peers.mjs MODEL_DIR IDS_FILE RUNS   -> JSON on stdout
//
// IDS_FILE: the prompt, a JSON array of 128 token ids (bench/engine.mjs writes the one
// glassbox_perf uses: the same ids for every engine). The peers are npm packages installed in
// bench/ (bench/package.json) by scripts/bench, not by the tests' setup.
//
// Each run is a fresh child process per peer (the peers alternate), as glassbox_perf's runs are,
// and measures the same things the same way (bench/perf.cpp):
//   load_ms        InferenceSession.create from model.onnx
//   ttft_ms        the 128-token prompt in one run() (pasts of length 0) + the argmax of its last row
//   prefill_tok_s  128 / ttft_ms
//   decode_tok_s   128 greedy steps, one token each with the presents fed back as the pasts
//   peak_rss_mb    the child's resident high-water mark (process.resourceUsage().maxRSS)
// and with model-last.onnx, the export that computes the last position's logits only (as glassbox's
// generate does; a prompt's other rows need no LM head), in runs of their own:
//   last_position  {load_ms, ttft_ms, prefill_tok_s} the same prompt's prefill on that export
// Each figure: median, min and max over RUNS runs. `tokens`: the 128 greedy ids of the first run
// (the prefill's argmax, then 127 of the steps'); min_margin: the smallest top-1 minus top-2
// logit gap among them (a tiny gap may flip between engines on a random model).
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { stats } from './merge.mjs';

const self = fileURLToPath(import.meta.url);
const root = path.join(path.dirname(self), '..');
const peers = path.join(root, 'bench'); // bench/node_modules
const require = createRequire(path.join(peers, 'package.json'));
const versionOf = (name) =>
  JSON.parse(readFileSync(path.join(peers, 'node_modules', name, 'package.json'), 'utf8')).version;

function promptIds(file) {
  const ids = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(ids) || ids.length !== PROMPT_TOKENS || !ids.every(Number.isInteger))
    throw new Error(`${file}: expected a JSON array of ${PROMPT_TOKENS} token ids`);
  return ids;
}

const PROMPT_TOKENS = 128;
const DECODE_STEPS = 128;
const LAYERS = 12,
  HEADS = 12,
  HEAD_SIZE = 64;
const PEERS = ['onnxruntime-node', 'onnxruntime-web'];

// The most probable id of row `row` of logits [1,T,V], and its lead over the second one.
function argmax(logits, row) {
  const V = logits.dims[2];
  const x = logits.data.subarray(row * V, (row + 1) * V);
  let best = 0,
    second = -Infinity;
  for (let j = 1; j < V; ++j) {
    if (x[j] > x[best]) {
      second = x[best];
      best = j;
    } else if (x[j] > second) second = x[j];
  }
  return { id: best, margin: x[best] - second };
}

async function loadPeer(peer) {
  if (peer === 'onnxruntime-node') {
    return {
      ort: require('onnxruntime-node'),
      options: { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 },
    };
  }
  const ort = await import(require.resolve('onnxruntime-web')); // dist/ort.node.min.mjs in Node
  ort.env.wasm.numThreads = 1; // no worker threads
  ort.env.wasm.proxy = false;
  return { ort, options: { executionProviders: ['wasm'] } };
}

// One run in this (child) process: prints its figures as JSON.
async function child(peer, modelDir, idsFile, variant) {
  const { ort, options } = await loadPeer(peer);
  const prompt = promptIds(idsFile);
  const inputIds = (ids) => new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
  let past = {};
  for (let i = 0; i < LAYERS; ++i) {
    for (const kind of ['key', 'value']) {
      past[`past_key_values.${i}.${kind}`] = new ort.Tensor('float32', new Float32Array(0), [1, HEADS, 0, HEAD_SIZE]);
    }
  }
  let t0 = performance.now();
  const session = await ort.InferenceSession.create(
    path.join(modelDir, variant === 'last' ? 'model-last.onnx' : 'model.onnx'),
    options,
  );
  const loadMs = performance.now() - t0;
  // One forward pass: ids [1,T] after the cache; the presents become the next pasts.
  const step = async (ids) => {
    const out = await session.run({ input_ids: inputIds(ids), ...past });
    past = {};
    for (const [name, tensor] of Object.entries(out)) {
      if (name.startsWith('present.')) past[name.replace('present.', 'past_key_values.')] = tensor;
    }
    return out.logits;
  };

  t0 = performance.now();
  const promptLogits = await step(prompt);
  let next = argmax(promptLogits, promptLogits.dims[1] - 1);
  const ttftMs = performance.now() - t0;
  if (variant === 'last') {
    // the prefill only: decoding is one position either way
    await session.release();
    process.stdout.write(
      JSON.stringify({
        load_ms: loadMs,
        ttft_ms: ttftMs,
        prefill_tok_s: (1000 * prompt.length) / ttftMs,
        first: next.id,
      }) + '\n',
    );
    return;
  }

  const tokens = [next.id];
  let minMargin = next.margin;
  t0 = performance.now();
  for (let i = 0; i < DECODE_STEPS; ++i) {
    next = argmax(await step([tokens[tokens.length - 1]]), 0);
    tokens.push(next.id);
    if (tokens.length <= DECODE_STEPS) minMargin = Math.min(minMargin, next.margin);
  }
  const decodeMs = performance.now() - t0;
  tokens.pop(); // the last argmax was not fed back
  await session.release();
  process.stdout.write(
    JSON.stringify({
      load_ms: loadMs,
      ttft_ms: ttftMs,
      prefill_tok_s: (1000 * prompt.length) / ttftMs,
      decode_tok_s: (1000 * DECODE_STEPS) / decodeMs,
      peak_rss_mb: process.resourceUsage().maxRSS / 1024,
      tokens,
      min_margin: minMargin,
    }) + '\n',
  );
}

function main(modelDir, idsFile, runs) {
  const prompt = promptIds(idsFile);
  const perRun = Object.fromEntries(PEERS.map((p) => [p, []]));
  const lastRuns = Object.fromEntries(PEERS.map((p) => [p, []]));
  const run = (peer, variant) =>
    JSON.parse(
      execFileSync(process.execPath, [self, '--child', peer, modelDir, idsFile, variant], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
  for (let r = 0; r < runs; ++r) {
    for (const peer of PEERS) {
      process.stderr.write(`bench/onnx_peers: ${peer} run ${r + 1}/${runs}\n`);
      perRun[peer].push(run(peer, 'all'));
      lastRuns[peer].push(run(peer, 'last'));
    }
  }
  const results = {};
  for (const peer of PEERS) {
    const first = perRun[peer][0];
    results[peer] = { version: versionOf(peer) };
    for (const key of ['load_ms', 'ttft_ms', 'prefill_tok_s', 'decode_tok_s', 'peak_rss_mb']) {
      results[peer][key] = stats(perRun[peer].map((run) => run[key]));
    }
    results[peer].last_position = Object.fromEntries(
      ['load_ms', 'ttft_ms', 'prefill_tok_s'].map((key) => [key, stats(lastRuns[peer].map((r) => r[key]))]),
    );
    if (lastRuns[peer].some((r) => r.first !== first.tokens[0]))
      throw new Error(`${peer}: model-last.onnx's first token differs from model.onnx's`);
    results[peer].tokens_same_every_run = perRun[peer].every(
      (run) => JSON.stringify(run.tokens) === JSON.stringify(first.tokens),
    );
    results[peer].min_margin = first.min_margin;
    results[peer].tokens = first.tokens;
  }
  const [a, b] = PEERS.map((p) => results[p].tokens);
  const agree = a.findIndex((id, i) => id !== b[i]);
  const cpus = os.cpus();
  const report = {
    model: {
      dir: modelDir,
      onnx_bytes: statSync(path.join(modelDir, 'model.onnx')).size,
      config: JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')),
    },
    prompt: { file: idsFile, tokens: prompt.length, ids: prompt },
    decode_steps: DECODE_STEPS,
    settings: {
      exports:
        "model.onnx computes the logits of every position (decode, prefill); model-last.onnx the last position's only (last_position: prefill)",
      'onnxruntime-node':
        'executionProviders [cpu], intraOpNumThreads 1, interOpNumThreads 1, default graph optimization (all)',
      'onnxruntime-web':
        'executionProviders [wasm], env.wasm.numThreads 1, proxy off, SIMD build (ort-wasm-simd-threaded.wasm), default graph optimization (all)',
    },
    machine: {
      cpu: cpus[0]?.model,
      logical_cpus: cpus.length,
      memory_gb: os.totalmem() / 2 ** 30,
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      packages: Object.fromEntries(
        ['onnxruntime-node', 'onnxruntime-web', 'onnxruntime-common'].map((name) => [name, versionOf(name)]),
      ),
    },
    tokens_agree: agree === -1,
    first_disagreement: agree === -1 ? null : agree,
    results,
  };
  // Indented, with each array of numbers on one line.
  const text = JSON.stringify(report, null, 2).replace(/\[[-0-9.,\s]*\]/g, (a) => a.replace(/\s+/g, ''));
  process.stdout.write(text + '\n');
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  await child(args[1], args[2], args[3], args[4] ?? 'all');
} else {
  const [modelDir, idsFile, runsArg] = args;
  const runs = Number(runsArg ?? 3);
  if (!modelDir || !idsFile || !Number.isInteger(runs) || runs < 1) {
    process.stderr.write('usage: node bench/onnx_peers.mjs MODEL_DIR IDS_FILE RUNS\n');
    process.exit(2);
  }
  main(modelDir, idsFile, runs);
}
