// Combines the benchmark's JSON files into one report: a table of medians (min-max) per engine,
// the ratios glassbox / peer, the decode roofline, and everything as JSON if given a path.
//
//   node bench/report.mjs NATIVE_TOKENIZER.json TOKENIZER_PEERS.json ENGINE.json ONNX.json BROWSER.json PAGE.json
//     ENTRY.json [OUT.json]
//
//   NATIVE_TOKENIZER.json  glassbox_bench (Google Benchmark): the tokenizer natively
//   TOKENIZER_PEERS.json   bench/tokenizer_peers.mjs: npm tiktoken, js-tiktoken
//   ENGINE.json            bench/engine.mjs: glassbox_perf natively and in WebAssembly
//   ONNX.json              bench/onnx_peers.mjs: onnxruntime-node, onnxruntime-web
//   BROWSER.json           bench/browser.mjs: glassbox in Chromium, threaded and not
//   PAGE.json              bench/page.mjs: the web page, beside the JS API in a worker
//   ENTRY.json             bench/tokenizer_entry.mjs: the tokenizer entry beside model.tokenize
//   --wllama WLLAMA.json   (optional, anywhere among the arguments) bench/wllama.mjs's timed runs:
//                          glassbox int8/int4 against wllama Q8_0/Q4_0 in Chromium, one thread;
//   --wllama-check C.json  and its cross-check on the test fixtures (bench/wllama.mjs --fixtures)
//   --llama-cpp LLAMA.json (optional) bench/llama_cpp.mjs: llama.cpp natively (F32, Q8_0, Q4_0) on
//                          one thread and on every core, beside glassbox's native rows
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

import { stats } from './merge.mjs';

const args = process.argv.slice(2);
// `--NAME FILE` taken out of the arguments (null when absent).
const option = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? null : args.splice(i, 2)[1];
};
const wllamaFile = option('--wllama'),
  wllamaCheckFile = option('--wllama-check'),
  llamaCppFile = option('--llama-cpp');
const [nativeFile, peersFile, engineFile, onnxFile, browserFile, pageFile, entryFile, outFile] = args;
const read = (f) => JSON.parse(readFileSync(f, 'utf8'));
const native = read(nativeFile),
  peers = read(peersFile),
  engine = read(engineFile),
  onnx = read(onnxFile);
const browser = read(browserFile),
  page = read(pageFile),
  tokenizerEntry = read(entryFile);

// --- the tokenizer

// Google Benchmark: one "iteration" entry per repetition; bytes_per_second in bytes.
function gbStats(name) {
  const rates = native.benchmarks
    .filter((b) => b.run_name === name && b.run_type === 'iteration')
    .map((b) => b.bytes_per_second / 1e6)
    .sort((a, b) => a - b);
  if (!rates.length) throw new Error(`no runs of ${name} in ${nativeFile}`);
  return {
    median: rates[Math.floor(rates.length / 2)],
    min: rates[0],
    max: rates[rates.length - 1],
    runs: rates.length,
  };
}
const tokenizer = {
  'glassbox (native)': {
    tokens: native.benchmarks.find((b) => b.run_name === 'tokenizer/encode/min_time:1.000')?.tokens,
    encode_mb_s: gbStats('tokenizer/encode/min_time:1.000'),
    decode_mb_s: gbStats('tokenizer/decode/min_time:1.000'),
  },
  'glassbox (wasm)': engine.tokenizer_wasm,
  ...peers.results,
};

// --- the model

// Bytes of weights one decoded token reads: every matrix once (the tied LM head is the token
// embedding), as F32 (4 bytes a value), int8 blocks (32 bytes + a 4-byte scale per 32 values) or
// int4 blocks (16 bytes + a 4-byte scale).
// Biases, LayerNorms and one position row are left out (< 0.1%).
function weightBytes(c, bytesPerValue = 4) {
  const C = c.n_embd,
    L = c.n_layer,
    V = c.vocab_size,
    inner = c.n_inner ?? 4 * C;
  return bytesPerValue * (L * (C * 3 * C + C * C + 2 * C * inner) + V * C);
}
const INT8_BYTES = 36 / 32;
const INT4_BYTES = 20 / 32;
const targets = []; // [what, measured, goal, met]
const int8Targets = []; // int8 decoding's

const ctx = native.context;
const report = {
  machine: {
    cpu: ctx.cpu,
    compiler: ctx.compiler,
    num_cpus: ctx.num_cpus,
    mhz_per_cpu: ctx.mhz_per_cpu,
    node: peers.node,
    date: ctx.date,
  },
  triad_gb_s: engine.triad,
  models: {},
  tokenizer: { text_bytes: peers.text_bytes, results: tokenizer },
};

const m = (s, digits = 1) => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
const pad = (s, n) => String(s).padEnd(n);
console.log(
  `machine: ${ctx.cpu}, ${ctx.num_cpus} CPUs at ${ctx.mhz_per_cpu} MHz, ${ctx.compiler}, Node ${peers.node}; ` +
    `median (min-max) of ${engine.runs} runs, each in a fresh process, one thread unless the row says otherwise`,
);
console.log(
  `memory bandwidth, one core (STREAM triad): native ${m(engine.triad.native.gb_s, 2)} GB/s, ` +
    `WebAssembly ${m(engine.triad.wasm.gb_s, 2)} GB/s`,
);

for (const [name, model] of Object.entries(engine.models)) {
  const c = model.config;
  const bytes = weightBytes(c);
  const rows = {
    'glassbox native': model.native,
    'glassbox native portable': model.portable,
    'glassbox wasm': model.wasm,
    'glassbox native int8': model.int8.native,
    'glassbox wasm int8': model.int8.wasm,
    'glassbox native int4': model.int4.native,
    'glassbox wasm int4': model.int4.wasm,
    [`glassbox native ${model.all_cores.threads} threads`]: model.all_cores.native,
    [`glassbox native ${model.all_cores.threads} threads portable`]: model.all_cores.portable,
    [`glassbox native ${model.all_cores.threads} threads int8`]: model.all_cores.int8,
    [`glassbox native ${model.all_cores.threads} threads int4`]: model.all_cores.int4,
  };
  const withPeers = name === 'gpt2-small-random';
  if (withPeers)
    Object.assign(
      rows,
      onnx.results,
      Object.fromEntries(
        Object.entries(onnx.results).map(([k, v]) => [
          `${k}, last-position export`,
          { ...v.last_position, decode_tok_s: null, peak_rss_mb: null },
        ]),
      ),
      Object.fromEntries(Object.entries(browser.results).map(([k, v]) => [`glassbox ${k}`, v])),
    );
  console.log(
    `\nmodel ${name}: ${c.n_layer} layers, ${c.n_embd} wide, ${c.n_head} heads, vocabulary ${c.vocab_size}; ` +
      `${model.prompt}-token prompt, ${model.decode} greedy tokens; ${(bytes / 1e6).toFixed(1)} MB of F32 weights per decoded token`,
  );
  console.log(
    `  ${pad('', 32)} ${pad('load ms', 22)} ${pad('first token ms', 22)} ${pad('prefill tok/s', 22)} ${pad('decode tok/s', 22)} peak MB`,
  );
  for (const [engineName, r] of Object.entries(rows).filter(([, r]) => r)) {
    console.log(
      `  ${pad(engineName, 32)} ${pad(m(r.load_ms, 0), 22)} ${pad(m(r.ttft_ms, 0), 22)} ${pad(m(r.prefill_tok_s), 22)} ` +
        `${pad(r.decode_tok_s ? m(r.decode_tok_s) : '-', 22)} ${r.peak_rss_mb ? m(r.peak_rss_mb, 0) : '-'}`,
    );
  }
  const int8Bytes = weightBytes(c, INT8_BYTES);
  const int4Bytes = weightBytes(c, INT4_BYTES);
  const bw = { native: engine.triad.native.gb_s.median * 1e9, wasm: engine.triad.wasm.gb_s.median * 1e9 };
  const roofline = {
    native: bw.native / bytes,
    wasm: bw.wasm / bytes,
    native_int8: bw.native / int8Bytes,
    wasm_int8: bw.wasm / int8Bytes,
    native_int4: bw.native / int4Bytes,
    wasm_int4: bw.wasm / int4Bytes,
  };
  const share = {
    native: model.native.decode_tok_s.median / roofline.native,
    wasm: model.wasm.decode_tok_s.median / roofline.wasm,
    native_int8: model.int8.native.decode_tok_s.median / roofline.native_int8,
    wasm_int8: model.int8.wasm.decode_tok_s.median / roofline.wasm_int8,
    native_int4: model.int4.native.decode_tok_s.median / roofline.native_int4,
    wasm_int4: model.int4.wasm.decode_tok_s.median / roofline.wasm_int4,
  };
  // The same share run by run: each run's decode against the triad its own process measured right
  // after it (glassbox_perf --triad-after), as a shared machine's bandwidth drifts between minutes;
  // then the median of those shares. The targets use these.
  const pairedShare = (r, perToken) =>
    stats(r.decode_tok_s.values.map((tok, i) => (tok * perToken) / (r.triad_gb_s.values[i] * 1e9)));
  const paired = {
    native: pairedShare(model.native, bytes),
    wasm: pairedShare(model.wasm, bytes),
    native_int8: pairedShare(model.int8.native, int8Bytes),
    wasm_int8: pairedShare(model.int8.wasm, int8Bytes),
    native_int4: pairedShare(model.int4.native, int4Bytes),
    wasm_int4: pairedShare(model.int4.wasm, int4Bytes),
  };
  const entry = {
    config: c,
    weight_bytes_per_token: bytes,
    int8_weight_bytes_per_token: int8Bytes,
    int4_weight_bytes_per_token: int4Bytes,
    results: rows,
    roofline_decode_tok_s: roofline,
    share_of_roofline: share,
    share_of_roofline_paired: paired,
  };
  const pct = (s) => `${(100 * s.median).toFixed(0)}% (${(100 * s.min).toFixed(0)}-${(100 * s.max).toFixed(0)})`;
  console.log(
    `  decode roofline (triad bandwidth / weight bytes per token: ${(bytes / 1e6).toFixed(1)} MB F32, ${(int8Bytes / 1e6).toFixed(1)} MB int8, ${(int4Bytes / 1e6).toFixed(1)} MB int4):`,
  );
  console.log(
    `    ${pad('', 12)} ${pad('from the medians above', 36)} run by run, against the triad right after each decode`,
  );
  for (const k of ['native', 'wasm', 'native_int8', 'wasm_int8', 'native_int4', 'wasm_int4'])
    console.log(
      `    ${pad(k.replace('_', ' '), 12)} ${pad(`${roofline[k].toFixed(1)} tok/s; glassbox at ${(100 * share[k]).toFixed(0)}%`, 36)} glassbox at ${pct(paired[k])}`,
    );
  // Int4 against int8, decode tok/s (medians, one thread): its weights are 20/36 of int8's bytes.
  // A target where decoding is bound by memory: weights far larger than the caches (not the
  // shipped model's 8 MB of int8).
  const memoryBound = int8Bytes > 64e6;
  for (const where of ['native', 'wasm']) {
    const r = model.int4[where].decode_tok_s.median / model.int8[where].decode_tok_s.median;
    entry[`int4_over_int8_decode_${where}`] = r;
    if (memoryBound)
      int8Targets.push([`${name}: ${where} int4 decode / int8 decode`, `${r.toFixed(2)}x`, '>= 1.6x', r >= 1.6]);
  }
  if (name === 'gpt2-small-random') {
    int8Targets.push([
      'native int8 decode, share of the roofline',
      `${(100 * paired.native_int8.median).toFixed(0)}%`,
      '>= 80%',
      paired.native_int8.median >= 0.8,
    ]);
    targets.push([
      'WASM F32 decode, share of the roofline',
      `${(100 * paired.wasm.median).toFixed(0)}%`,
      '>= 85%',
      paired.wasm.median >= 0.85,
    ]);
    targets.push([
      'native F32 decode, share of the roofline',
      `${(100 * paired.native.median).toFixed(0)}%`,
      '>= 90%',
      paired.native.median >= 0.9,
    ]);
  }
  if (withPeers) {
    const ratio = (a, b, key) => a[key].median / b[key].median;
    const web = onnx.results['onnxruntime-web'],
      node = onnx.results['onnxruntime-node'];
    entry.ratios = {
      'wasm/onnxruntime-web': {
        decode: ratio(model.wasm, web, 'decode_tok_s'),
        prefill: ratio(model.wasm, web, 'prefill_tok_s'),
      },
      'native/onnxruntime-node': {
        decode: ratio(model.native, node, 'decode_tok_s'),
        prefill: ratio(model.native, node, 'prefill_tok_s'),
      },
      'wasm int8/onnxruntime-web (F32)': {
        decode: ratio(model.int8.wasm, web, 'decode_tok_s'),
        prefill: ratio(model.int8.wasm, web, 'prefill_tok_s'),
      },
      'native int8/onnxruntime-node (F32)': {
        decode: ratio(model.int8.native, node, 'decode_tok_s'),
        prefill: ratio(model.int8.native, node, 'prefill_tok_s'),
      },
    };
    // Prefill against the peers' export that, like glassbox's generate, computes the last
    // position's logits only (the ratios above use the export that computes every position's).
    entry.ratios['wasm/onnxruntime-web'].prefill_last_position_export = ratio(
      model.wasm,
      web.last_position,
      'prefill_tok_s',
    );
    entry.ratios['native/onnxruntime-node'].prefill_last_position_export = ratio(
      model.native,
      node.last_position,
      'prefill_tok_s',
    );
    const r = entry.ratios;
    targets.push([
      'WASM F32 decode / onnxruntime-web',
      `${r['wasm/onnxruntime-web'].decode.toFixed(2)}x`,
      '>= 1.2x',
      r['wasm/onnxruntime-web'].decode >= 1.2,
    ]);
    targets.push([
      'WASM F32 prefill / onnxruntime-web',
      `${r['wasm/onnxruntime-web'].prefill.toFixed(2)}x`,
      '>= 2x',
      r['wasm/onnxruntime-web'].prefill >= 2,
    ]);
    int8Targets.push([
      'WASM int8 decode / onnxruntime-web F32',
      `${r['wasm int8/onnxruntime-web (F32)'].decode.toFixed(2)}x`,
      '>= 3x',
      r['wasm int8/onnxruntime-web (F32)'].decode >= 3,
    ]);
    targets.push([
      'native F32 decode / onnxruntime-node',
      `${r['native/onnxruntime-node'].decode.toFixed(2)}x`,
      '>= 1.0x',
      r['native/onnxruntime-node'].decode >= 1,
    ]);
    targets.push([
      'native F32 prefill / onnxruntime-node',
      `${r['native/onnxruntime-node'].prefill.toFixed(2)}x`,
      '>= 0.8x',
      r['native/onnxruntime-node'].prefill >= 0.8,
    ]);
    for (const [k, v] of Object.entries(entry.ratios)) {
      const last = v.prefill_last_position_export
        ? `; prefill ${v.prefill_last_position_export.toFixed(2)}x against its last-position export`
        : '';
      console.log(
        `  glassbox ${k}: decode ${v.decode.toFixed(2)}x, prefill ${v.prefill.toFixed(2)}x against its all-positions export${last}`,
      );
    }
    const same = (a, b) => {
      const i = a.findIndex((id, j) => id !== b[j]);
      return i === -1 ? 'all equal' : `first differ at token ${i}`;
    };
    entry.greedy_tokens = {
      'native vs wasm': same(model.native.tokens, model.wasm.tokens),
      'native vs onnxruntime-node': same(model.native.tokens, node.tokens),
      'wasm vs onnxruntime-web': same(model.wasm.tokens, web.tokens),
      'int8 vs F32 (native)': same(model.int8.native.tokens, model.native.tokens),
      'int8 native vs wasm': same(model.int8.native.tokens, model.int8.wasm.tokens),
      'int4 vs F32 (native)': same(model.int4.native.tokens, model.native.tokens),
      'int4 native vs wasm': same(model.int4.native.tokens, model.int4.wasm.tokens),
    };
    console.log(
      `  greedy tokens: ${Object.entries(entry.greedy_tokens)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')} ` + `(random weights: the smallest top-2 logit gap was ${node.min_margin.toExponential(1)})`,
    );
  }
  report.models[name] = entry;
}

const f = (s) => `${s.median.toFixed(2)} MB/s (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
console.log(`\ntokenizer, text ${(peers.text_bytes / 1e6).toFixed(2)} MB (Brown corpus):`);
for (const op of ['encode', 'decode']) {
  console.log(`  ${op}:`);
  const ours = tokenizer['glassbox (native)'][`${op}_mb_s`],
    oursWasm = tokenizer['glassbox (wasm)'][`${op}_mb_s`];
  for (const [name, r] of Object.entries(tokenizer)) {
    const s = r[`${op}_mb_s`];
    const vs = name.startsWith('glassbox')
      ? ''
      : `   glassbox native/${name} = ${(ours.median / s.median).toFixed(1)}x, wasm/${name} = ${(oursWasm.median / s.median).toFixed(1)}x`;
    console.log(`    ${pad(name, 20)} ${f(s)}${vs}`);
  }
}
const encodeRatio = tokenizer['glassbox (wasm)'].encode_mb_s.median / tokenizer.tiktoken.encode_mb_s.median;
targets.push(['tokenizer encode, WASM / npm tiktoken', `${encodeRatio.toFixed(2)}x`, '>= 3x', encodeRatio >= 3]);
// The tokenizer entry (its own module) against model.tokenize, each timed over the same text in
// the same round: one tokenizer, which must cost the same wherever it is called from.
const ms = (s) => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}-${s.max.toFixed(0)})`;
console.log(
  `  the tokenizer entry, ${(tokenizerEntry.text_bytes / 1e6).toFixed(1)} MB in one call: ${ms(tokenizerEntry.entry.ms)}, ` +
    `model.tokenize ${ms(tokenizerEntry.model.ms)}; entry / model ${tokenizerEntry.entry.ratio_to_model.median.toFixed(2)}x; ` +
    `memory ${tokenizerEntry.entry.bytes_per_byte.median.toFixed(1)} and ${tokenizerEntry.model.bytes_per_byte.median.toFixed(1)} bytes per byte of text`,
);
report.tokenizer.entry = tokenizerEntry;
const entryRatio = tokenizerEntry.entry.ratio_to_model.median;
targets.push(['tokenizer entry / model.tokenize, time', `${entryRatio.toFixed(2)}x`, '<= 1.2x', entryRatio <= 1.2]);

// The engine's WebAssembly module as a page downloads it, gzip-compressed.
const wasmBytes = readFileSync(new URL('../web/dist/glassbox-core.wasm', import.meta.url));
const wasmGzip = gzipSync(wasmBytes, { level: 9 }).length;
report.wasm_module = { bytes: wasmBytes.length, gzip_bytes: wasmGzip };
targets.push(['engine .wasm, gzip', `${(wasmGzip / 1024).toFixed(0)} KB`, '<= 150 KB', wasmGzip <= 150 * 1024]);

// --- the page, as a person uses it

const f0 = (x) => (x?.median === undefined ? '-' : `${x.median.toFixed(0)} (${x.min.toFixed(0)}-${x.max.toFixed(0)})`);
const pageShare = page.page.tok_s.median / page.api_worker.tok_s.median;
const sustained = page.page.last500_tok_s.median / page.page.first500_tok_s.median;
console.log(
  `\nthe page (web/, shipped model, ${page.tokens} tokens from "The old man walked into the", seed 1, Chromium):`,
);
console.log(
  `  navigation -> Generate enabled   ${f0(page.page.ready_ms)} ms  (in the page, from the navigation's start; ` +
    `seen from the harness, goto() -> noticed: ${f0(page.page.harness_ready_ms)} ms)`,
);
console.log(
  `  the page's tokens/s              ${f0(page.page.tok_s)}  (with the Attention region in view: ${f0(page.page.attention_in_view_tok_s)})`,
);
console.log(
  `  a ${page.long_tokens}-token generation: first 500 tokens ${f0(page.page.first500_tok_s)} tokens/s, last 500 ${f0(page.page.last500_tok_s)}`,
);
console.log(`  the JS API in a worker, attention + top-10, nothing drawn: ${f0(page.api_worker.tok_s)} tokens/s`);
console.log(`  page / JS API ${(100 * pageShare).toFixed(0)}%; last 500 / first 500 ${(100 * sustained).toFixed(0)}%`);
report.page = { ...page, page_vs_api: pageShare, last_vs_first_500: sustained };
const pageTargets = [
  ['page tokens/s / JS API in a worker', `${(100 * pageShare).toFixed(0)}%`, '>= 80%', pageShare >= 0.8],
  ['page: last 500 / first 500 tokens', `${(100 * sustained).toFixed(0)}%`, '>= 90%', sustained >= 0.9],
  [
    'page: navigation -> Generate enabled',
    `${page.page.ready_ms.median.toFixed(0)} ms`,
    '<= 800 ms',
    page.page.ready_ms.median <= 800,
  ],
];

const trainingTargets = [];
if (engine.training) {
  const t = engine.training,
    ratio = t.wasm.tokens_per_s.median / t.native.tokens_per_s.median;
  console.log(
    `\ntraining (glassbox_perf train: 4 x 128 GPT, batches of 16 x 128, one thread), tokens/s: ` +
      `native ${m(t.native.tokens_per_s, 0)}, WebAssembly ${m(t.wasm.tokens_per_s, 0)} ` +
      `(${(100 * ratio).toFixed(0)}%); the same losses bit for bit: ${t.same_losses ? 'yes' : 'NO'}`,
  );
  trainingTargets.push(['training, WASM / native tokens/s', `${(100 * ratio).toFixed(0)}%`, '>= 60%', ratio >= 0.6]);
  trainingTargets.push([
    'training, the same losses natively and in WASM',
    t.same_losses ? 'yes' : 'no',
    'bit for bit',
    t.same_losses,
  ]);
}
// --- WebAssembly, one thread: glassbox against wllama (llama.cpp in WebAssembly) in Chromium
if (wllamaFile) wllamaReport(read(wllamaFile), wllamaCheckFile && read(wllamaCheckFile));

function wllamaReport(w, check) {
  const TYPE = { q8_0: 'Q8_0', q4_0: 'Q4_0', f32: 'F32' };
  console.log(
    `\nWebAssembly, one thread: glassbox int8 vs wllama Q8_0 (and int4 vs Q4_0): headless Chromium ` +
      `${w.chromium}, cross-origin isolated, @wllama/wllama ${w.package['@wllama/wllama']} (llama.cpp ` +
      `${w.package['llama.cpp']}), the same weights; ${w.prompt_tokens}-token prompt, ${w.decode_tokens} greedy tokens, ` +
      `KV cache ${w.kv_type}; median (min-max) of ${Object.values(w.results)[0]?.glassbox?.decode_tok_s.runs ?? 0} fresh pages each`,
  );
  console.log(`  ${pad('', 34)} ${pad('prefill tok/s', 22)} ${pad('decode tok/s', 22)} decode glassbox / wllama`);
  const rows = {};
  for (const [key, r] of Object.entries(w.results)) {
    const decode = r.glassbox.decode_tok_s.median / r.wllama.decode_tok_s.median;
    const prefill = r.glassbox.prefill_tok_s.median / r.wllama.prefill_tok_s.median;
    console.log(
      `  ${pad(`${r.model}: glassbox ${r.quantize}`, 34)} ${pad(m(r.glassbox.prefill_tok_s), 22)} ${pad(m(r.glassbox.decode_tok_s), 22)} ${decode.toFixed(2)}x (prefill ${prefill.toFixed(2)}x)`,
    );
    console.log(
      `  ${pad(`${r.model}: wllama ${TYPE[r.type]}`, 34)} ${pad(m(r.wllama.prefill_tok_s), 22)} ${pad(m(r.wllama.decode_tok_s), 22)} greedy tokens: ${r.greedy_tokens}`,
    );
    rows[key] = { ...r, ratio: { decode, prefill } };
    if (r.type !== 'f32')
      int8Targets.push([
        `${r.model}: WASM ${r.quantize} decode / wllama ${TYPE[r.type]}`,
        `${decode.toFixed(2)}x`,
        '>= 1.0x',
        decode >= 1,
      ]);
  }
  if (check) console.log("  the greedy cross-check on the test fixtures' models (bench/wllama.mjs --fixtures):");
  for (const [key, r] of Object.entries(check?.results ?? {})) {
    const c = r.check;
    console.log(
      `    ${key} vs ${r.quantize}: ${c.ok ? 'agree' : 'DISAGREE'}: ${c.compared}/${c.steps} steps with glassbox's margin >= ${c.margin} ` +
        `(${c.disagreements.length} differ); ${c.agree}/${c.steps} steps give the same token; max |log p difference| ${c.maxLogpDiff.toExponential(2)}`,
    );
  }
  report.wllama = { ...w, results: rows, check: check?.results ?? null };
}

// --- natively: glassbox against llama.cpp on the same weights, one thread and every core
if (llamaCppFile) llamaCppReport(read(llamaCppFile));

function llamaCppReport(l) {
  const FORMS = { f32: ['F32', null], q8_0: ['Q8_0', 'int8'], q4_0: ['Q4_0', 'int4'] };
  console.log(
    `\nNatively: glassbox against llama.cpp ${l.package['llama.cpp']} (npm node-llama-cpp ` +
      `${l.package['node-llama-cpp']}, its prebuilt CPU build), GGUF files written from the same weights; ` +
      `${l.prompt_tokens}-token prompt, ${l.decode_tokens} greedy tokens; median (min-max)`,
  );
  console.log(`  ${pad('', 40)} ${pad('prefill tok/s', 22)} ${pad('decode tok/s', 22)} decode glassbox / llama.cpp`);
  const rows = {};
  for (const [key, r] of Object.entries(l.results)) {
    const model = engine.models[r.model];
    if (!model) continue;
    const [type, quantize] = FORMS[r.type];
    // glassbox's row at the same thread count: one thread, or every core (engine.mjs, --threads 0)
    const allCores = r.threads === model.all_cores.threads && r.threads > 1;
    if (r.threads !== 1 && !allCores) continue;
    const where = allCores ? model.all_cores : model;
    const ours = quantize ? (allCores ? where[quantize] : where[quantize].native) : where.native;
    const decode = ours.decode_tok_s.median / r.decode_tok_s.median;
    const prefill = ours.prefill_tok_s.median / r.prefill_tok_s.median;
    const threads = `${r.threads} thread${r.threads > 1 ? 's' : ''}`;
    console.log(
      `  ${pad(`${r.model}, ${threads}: glassbox ${quantize ?? 'F32'}`, 40)} ${pad(m(ours.prefill_tok_s), 22)} ${pad(m(ours.decode_tok_s), 22)} ${decode.toFixed(2)}x (prefill ${prefill.toFixed(2)}x)`,
    );
    console.log(
      `  ${pad(`${r.model}, ${threads}: llama.cpp ${type}`, 40)} ${pad(m(r.prefill_tok_s), 22)} ${m(r.decode_tok_s)}`,
    );
    rows[key] = {
      ...r,
      glassbox: { prefill_tok_s: ours.prefill_tok_s, decode_tok_s: ours.decode_tok_s },
      ratio: { decode, prefill },
    };
    if (quantize === 'int8')
      int8Targets.push([
        `${r.model}: native int8 decode / llama.cpp Q8_0, ${threads}`,
        `${decode.toFixed(2)}x`,
        '>= 1.0x',
        decode >= 1,
      ]);
  }
  report.llama_cpp = { ...l, results: rows };
}

console.log('\ntargets (F32 speed, the tokenizer, the .wasm):');
for (const [what, got, goal, met] of targets)
  console.log(`  ${met ? 'met   ' : 'missed'} ${pad(what, 42)} ${pad(got, 10)} goal ${goal}`);
console.log('targets (the page):');
for (const [what, got, goal, met] of pageTargets)
  console.log(`  ${met ? 'met   ' : 'missed'} ${pad(what, 42)} ${pad(got, 10)} goal ${goal}`);
console.log('targets (int8 and int4 decoding; their load and memory figures: bench/js_load.mjs):');
for (const [what, got, goal, met] of int8Targets)
  console.log(`  ${met ? 'met   ' : 'missed'} ${pad(what, 42)} ${pad(got, 10)} goal ${goal}`);
if (trainingTargets.length) console.log('targets (training):');
for (const [what, got, goal, met] of trainingTargets)
  console.log(`  ${met ? 'met   ' : 'missed'} ${pad(what, 42)} ${pad(got, 10)} goal ${goal}`);
report.targets = [...targets, ...pageTargets, ...int8Targets, ...trainingTargets].map(
  ([what, measured, goal, met]) => ({ what, measured, goal, met }),
);
if (outFile) writeFileSync(outFile, JSON.stringify(report, null, 2) + '\n');
