// The modern decoders' speed and memory, beside GPT-2 small, for scripts/bench --decoders: random
// weights with the shapes of SmolLM2-135M, Qwen2.5-0.5B, Llama-3.2-1B and pythia-410m
// (bench/make_decoders.mjs, made once into build/bench/) and GPT-2 small (bench/make_model.py),
// F32, int8 and int4, on one thread:
//   natively   glassbox_perf (bench/perf.cpp): load, prefill a 32-token prompt of ids, greedy decode;
//   WebAssembly the public JS API in Node (web/dist/glassbox.mjs): estimateModel, loadModel,
//              generate with the same prompt, temperature 0.
// Each run is a fresh process; runs go in rounds (every model once per round, bench/merge.mjs
// says why) and figures are medians with min-max.
//
//   node bench/decoders.mjs [--runs N] [--decode N] [--model NAME ...] [--build native|wasm ...]
//                                                                            JSON on stdout
//
// Derived figures, per model: the bytes a decoded token streams (every weight matrix it multiplies
// by, as the engine holds it: 4 bytes a weight in F32, 36 bytes per block of 32 in int8, 20 in int4; and the
// keys and values it reads, at the decode's middle position), the decode's GB/s (tokens/s x those
// bytes) and its ratio to GPT-2 small's in the same build and form; the peak resident memory over
// the resident weights + the KV cache the run allocates. Llama-3.2-1B's config asks for 131,072
// positions and Qwen2.5-0.5B's 32,768: they run with the default context, 4,096 positions, which
// is what the memory checks count.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { SHAPES, writeModel } from './make_decoders.mjs';
import { stats } from './merge.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'build/bench');
const PROMPT = 32;
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    decode: { type: 'string', default: '64' },
    model: { type: 'string', multiple: true },
    build: { type: 'string', multiple: true }, // native, wasm (default: both)
    child: { type: 'string' }, // a JS API run: the model directory
    quantize: { type: 'string', default: 'none' },
    ids: { type: 'string' },
  },
});
const decode = Number(values.decode);

// One run through the public JS API, in this process: JSON on stdout.
async function child(dir) {
  const { loadModel, estimateModel } = await import('../web/dist/glassbox.mjs');
  const { loadCore } = await import('../web/dist/engine.mjs');
  const core = await loadCore(); // the module's own start is not the load's
  const ids = JSON.parse(readFileSync(values.ids, 'utf8'));
  const estimate = await estimateModel(dir, { quantize: values.quantize });
  const result = { load_bytes: estimate.loadBytes, cache_bytes: estimate.cacheBytes, fits: estimate.fits };
  const t0 = performance.now();
  let model;
  try {
    model = await loadModel(dir, { quantize: values.quantize });
  } catch (e) {
    return { ...result, refused: e.message };
  }
  result.load_ms = performance.now() - t0;
  result.heap_in_use_mb = core.heapBytesInUse() / 2 ** 20;
  let n = 0,
    t1 = 0;
  const tokens = [];
  for await (const step of model.generate(ids, { maxTokens: decode + 1, temperature: 0 })) {
    if (n++ === 0) t1 = performance.now(); // decode: after the prompt's token
    tokens.push(step.id);
  }
  result.decode_tok_s = (1000 * (n - 1)) / (performance.now() - t1);
  result.peak_rss_mb = process.resourceUsage().maxRSS / 1024;
  result.heap_mb = core.HEAPU8.length / 2 ** 20;
  result.tokens = tokens;
  await model.dispose();
  return result;
}

if (values.child) {
  process.stdout.write(JSON.stringify(await child(values.child)));
  process.exit(0);
}

// The models: made once, kept in build/bench/.
mkdirSync(out, { recursive: true });
const gpt2 = join(out, 'gpt2-small-random');
if (!existsSync(join(gpt2, 'model.safetensors')))
  throw new Error(`${gpt2} is missing: /usr/bin/python3 bench/make_model.py ${gpt2} --no-onnx makes it`);
const dirs = { 'gpt2-small': gpt2 };
for (const [name, config] of Object.entries(SHAPES)) {
  const dir = join(out, name);
  if (!existsSync(join(dir, 'model.safetensors'))) {
    process.stderr.write(`bench: making ${dir}\n`);
    writeModel(dir, config);
  }
  dirs[name] = dir;
}
const names = values.model ?? Object.keys(dirs);
for (const n of names) if (!dirs[n]) throw new Error(`no model ${n}; the models: ${Object.keys(dirs).join(', ')}`);

// The prompt: 32 ids every vocabulary here has.
const idsFile = join(out, 'prompt-decoders.json');
writeFileSync(idsFile, JSON.stringify(Array.from({ length: PROMPT }, (_, i) => (1 + 997 * i) % 49152)));

// The safetensors header: what each tensor is, without reading the weights.
function header(dir) {
  const fd = openSync(join(dir, 'model.safetensors'), 'r');
  try {
    const length = Buffer.alloc(8);
    readSync(fd, length, 0, 8, 0);
    const json = Buffer.alloc(Number(length.readBigUInt64LE()));
    readSync(fd, json, 0, json.length, 8);
    return JSON.parse(json.toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

// Weights a decoded token multiplies by: every matrix, the LM head (the tied embedding, or the
// separate head) included; not the rows it looks up (token and position embeddings).
function streamedWeights(dir) {
  const tensors = Object.entries(header(dir)).filter(([name]) => name !== '__metadata__');
  const separateHead = tensors.some(([name]) => /(^|\.)(lm_head|embed_out)\.weight$/.test(name));
  let n = 0;
  for (const [name, { shape }] of tensors) {
    if (shape.length !== 2 || /(^|\.)wpe\.weight$/.test(name)) continue;
    if (separateHead && /(^|\.)(wte|embed_tokens|embed_in)\.weight$/.test(name)) continue;
    n += shape[0] * shape[1];
  }
  return n;
}

// One position's keys and values in every layer, F32.
function kvBytesPerPosition(config) {
  const layers = config.n_layer ?? config.num_hidden_layers;
  const heads = config.n_head ?? config.num_attention_heads;
  const width = config.n_embd ?? config.hidden_size;
  const headDim = config.head_dim ?? width / heads;
  return 2 * layers * (config.num_key_value_heads ?? heads) * headDim * 4;
}

const BYTES_PER_WEIGHT = { none: 4, int8: 36 / 32, int4: 20 / 32 };
const builds = values.build ?? ['native', 'wasm'];
for (const b of builds) if (b !== 'native' && b !== 'wasm') throw new Error(`--build is native or wasm, not ${b}`);
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);

// A load refused for memory (natively: more than the memory available) is a figure too.
function native(dir, quantize) {
  try {
    return JSON.parse(
      execFileSync(
        join(root, 'build/native/glassbox_perf'),
        ['model', dir, '--ids', idsFile, '--decode', String(decode), '--quantize', quantize],
        { maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'] },
      ).toString(),
    );
  } catch (e) {
    const message = e.stderr?.toString().trim() ?? '';
    if (/memory/.test(message)) return { refused: message.replace(/^glassbox_perf: /, '') };
    process.stderr.write(message + '\n');
    throw e;
  }
}
const wasm = (dir, quantize) =>
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--no-experimental-fetch',
        fileURLToPath(import.meta.url),
        '--child',
        dir,
        '--quantize',
        quantize,
        '--ids',
        idsFile,
        '--decode',
        String(decode),
      ],
      { maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] },
    ).toString(),
  );

// raw[name][build][quantize]: one result per run.
const raw = {};
for (let r = 1; r <= runs; ++r)
  for (const name of names)
    for (const quantize of ['none', 'int8', 'int4'])
      for (const [build, run] of [
        ['native', native],
        ['wasm', wasm],
      ].filter(([b]) => builds.includes(b))) {
        // A refused load (its estimate does not fit) says so once.
        const list = (((raw[name] ??= {})[build] ??= {})[quantize] ??= []);
        if (list.length && list[0].refused) continue;
        process.stderr.write(`bench: round ${r}/${runs}: ${name} ${quantize} (${build})\n`);
        list.push(run(dirs[name], quantize));
      }

const report = {
  machine: {
    cpu: cpus()[0].model,
    // "AMD EPYC" names no generation: the family does (26: Zen 5)
    cpu_family: readFileSync('/proc/cpuinfo', 'utf8').match(/^cpu family\s*:\s*(\d+)/m)?.[1] ?? null,
    cpus: cpus().length,
    node: process.version,
  },
  runs,
  prompt: PROMPT,
  decode,
  threads: 1,
  models: {},
};
for (const name of names) {
  const config = JSON.parse(readFileSync(join(dirs[name], 'config.json'), 'utf8'));
  const weights = streamedWeights(dirs[name]);
  const kvPosition = kvBytesPerPosition(config);
  const positions = Math.min(config.n_positions ?? config.max_position_embeddings, PROMPT + decode);
  const entry = (report.models[name] = {
    dir: dirs[name],
    streamed_weights: weights,
    kv_bytes_per_position: kvPosition,
  });
  for (const build of builds)
    for (const quantize of ['none', 'int8', 'int4']) {
      const results = raw[name][build]?.[quantize];
      if (!results?.length) continue;
      const figure = (key) => stats(results.map((x) => x[key]));
      const form = quantize === 'none' ? 'f32' : quantize;
      if (results[0].refused) {
        entry[`${build}_${form}`] = {
          refused: results[0].refused,
          ...(build === 'wasm' && { load_bytes: results[0].load_bytes, cache_bytes: results[0].cache_bytes }),
        };
        continue;
      }
      // The keys and values a decoded token reads, at the decode's middle position.
      const streamed = weights * BYTES_PER_WEIGHT[quantize] + kvPosition * (PROMPT + decode / 2);
      const e = {
        load_ms: figure('load_ms'),
        peak_rss_mb: figure('peak_rss_mb'),
        decode_tok_s: figure('decode_tok_s'),
        streamed_mb_per_token: streamed / 2 ** 20,
        kv_cache_mb: (kvPosition * positions) / 2 ** 20,
        deterministic: results.every((x) => JSON.stringify(x.tokens) === JSON.stringify(results[0].tokens)),
      };
      e.decode_gb_s = (e.decode_tok_s.median * streamed) / 1e9;
      // Resident: natively the process after the load; in WebAssembly the heap the model holds.
      e.resident_mb = build === 'native' ? figure('rss_after_load_mb') : figure('heap_in_use_mb');
      e.peak_over_resident_and_kv = e.peak_rss_mb.median / (e.resident_mb.median + e.kv_cache_mb);
      if (build === 'wasm') {
        e.estimate = { load_bytes: results[0].load_bytes, cache_bytes: results[0].cache_bytes, fits: results[0].fits };
        e.heap_mb = figure('heap_mb');
      }
      entry[`${build}_${form}`] = e;
    }
}
// Against GPT-2 small: each round's GB/s over GPT-2's in the same round (the runs nearest in
// time, so in the same phase of a shared machine), the median of those.
const base = report.models['gpt2-small'];
if (base)
  for (const entry of Object.values(report.models))
    for (const key of ['native_f32', 'native_int8', 'native_int4', 'wasm_f32', 'wasm_int8', 'wasm_int4']) {
      const e = entry[key],
        b = base[key];
      if (!e?.decode_gb_s || !b?.decode_gb_s) continue;
      const gbs = (x, i) => x.decode_tok_s.values[i] * x.streamed_mb_per_token;
      e.speed_per_byte_vs_gpt2 = stats(e.decode_tok_s.values.map((_, i) => gbs(e, i) / gbs(b, i)));
    }
console.log(JSON.stringify(report, null, 2));

// The figures as a table, on stderr: medians.
const cell = (e, key, digits = 1) =>
  e?.[key] ? (typeof e[key] === 'object' ? e[key].median : e[key]).toFixed(digits) : '-';
process.stderr.write(
  '| model | run | load s | peak MiB | resident + KV MiB | peak / that | decode tok/s | GB/s | per byte vs GPT-2 |\n',
);
process.stderr.write('|---|---|---|---|---|---|---|---|---|\n');
for (const [name, entry] of Object.entries(report.models))
  for (const key of ['native_f32', 'native_int8', 'native_int4', 'wasm_f32', 'wasm_int8', 'wasm_int4']) {
    const e = entry[key];
    if (!e) continue;
    if (e.refused) {
      process.stderr.write(`| ${name} | ${key} | refused: ${e.refused} |\n`);
      continue;
    }
    process.stderr.write(
      `| ${name} | ${key} | ${(e.load_ms.median / 1000).toFixed(2)} | ${cell(e, 'peak_rss_mb', 0)} | ` +
        `${e.resident_mb.median.toFixed(0)} + ${e.kv_cache_mb.toFixed(0)} | ${e.peak_over_resident_and_kv.toFixed(2)} | ` +
        `${cell(e, 'decode_tok_s')} | ${e.decode_gb_s.toFixed(1)} | ${cell(e, 'speed_per_byte_vs_gpt2', 2)} |\n`,
    );
  }
