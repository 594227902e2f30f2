#!/usr/bin/env node
// Writes a glassbox model directory (config.json + model.safetensors or its shards, F32/F16/BF16,
// and its tokenizer) as a GGUF file that llama.cpp loads, so llama.cpp can run the same weights.
//
//   node scripts/write_gguf.mjs MODEL_DIR OUT.gguf [--type f32|q8_0|q4_0] [--no-tokenizer] [--verbose]
//
// --type: how the matrices are stored (default f32). q8_0 / q4_0 quantize every 2-D weight whose rows
// are a multiple of 32 values (token embedding and LM head included, as llama.cpp's converter does);
// norms, biases, GPT-2's position embedding and any matrix with other rows stay F32. Model types:
// gpt2, llama, mistral (without a sliding window), qwen2, qwen3, gpt_neox. The tokenizer
// (vocab.json + merges.txt, or a byte-level BPE tokenizer.json) becomes llama.cpp's "gpt2"
// vocabulary; a directory with none, or --no-tokenizer, gets a placeholder one (gguf/vocab.mjs
// says why), and the model runs on token ids. Errors name the problem; nothing is left behind.
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe } from './gguf/arch.mjs';
import { T, writeGguf } from './gguf/container.mjs';
import { GGML_TYPE, QK, encode, typeName } from './gguf/quantize.mjs';
import { Weights } from './gguf/safetensors.mjs';
import { vocabMetadata } from './gguf/vocab.mjs';

// llama.cpp's file types (llama_ftype) for general.file_type.
const FILE_TYPE = { f32: 0, q4_0: 2, q8_0: 7 };
const MATRIX_TYPE = { f32: GGML_TYPE.F32, q8_0: GGML_TYPE.Q8_0, q4_0: GGML_TYPE.Q4_0 };

// What would be written for `type`: { config, weights, arch, meta, tensors } where each tensor has
// its GGUF name, dims, ggml type, element count, source tensor (src; none for made ones),
// whether the source is transposed (GPT-2's Conv1D), and data() encoding it.
export function planGguf(dir, { type = 'f32', noTokenizer = false, log = () => {} } = {}) {
  if (!(type in FILE_TYPE)) throw new Error(`unknown --type '${type}' (use f32, q8_0 or q4_0)`);
  let config;
  try {
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  } catch (e) {
    throw new Error(`${join(dir, 'config.json')}: ${e.message}`);
  }
  const weights = new Weights(dir);
  const model = describe(config, weights);
  const nVocab = weights.shape(model.embedding)[0];
  const meta = [
    { key: 'general.architecture', type: T.STRING, value: model.arch },
    { key: 'general.name', type: T.STRING, value: basename(resolve(dir)) },
    { key: 'general.file_type', type: T.UINT32, value: FILE_TYPE[type] },
    { key: 'general.quantization_version', type: T.UINT32, value: 2 },
    { key: 'general.alignment', type: T.UINT32, value: 32 },
    ...model.meta,
    ...vocabMetadata(dir, config, model.arch, nVocab, { noTokenizer }),
  ];
  const tensors = model.tensors.map((t) => {
    // Shapes and dtypes are checked here, before anything is written.
    const shape = t.make ? t.shape : weights.shape(t.src);
    if (!t.make) weights.info(t.src);
    const count = shape.reduce((a, b) => a * b, 1);
    const matrix = shape.length === 2 && !t.keepF32 && !t.name.endsWith('_norm.weight');
    // safetensors shapes are outermost first; GGUF dims innermost first. A transposed Conv1D
    // weight (in, out) becomes (out, in): dims [in, out]. Blocks run along the innermost dim.
    const dims = t.dims ? t.dims(shape) : [...shape].reverse();
    const storage = matrix && dims[0] % QK === 0 ? MATRIX_TYPE[type] : GGML_TYPE.F32;
    return {
      name: t.name,
      dims,
      type: storage,
      count,
      src: t.src,
      transposed: Boolean(t.dims),
      data() {
        let x = t.make ? t.make() : weights.read(t.src);
        if (t.map) x = t.map(x, shape);
        log(`${t.name} ${typeName(this.type)} [${dims.join(', ')}]`);
        return encode(this.type, x);
      },
    };
  });
  return { config, weights, arch: model.arch, meta, tensors };
}

export function writeModelGguf(dir, dest, options = {}) {
  const plan = planGguf(dir, options);
  writeGguf(dest, plan.meta, plan.tensors);
  return { arch: plan.arch, tensors: plan.tensors.length, type: options.type ?? 'f32' };
}

function main(argv) {
  const args = [];
  let type = 'f32',
    noTokenizer = false,
    verbose = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--type') type = argv[++i];
    else if (a === '--no-tokenizer') noTokenizer = true;
    else if (a === '--verbose') verbose = true;
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else args.push(a);
  }
  if (args.length !== 2)
    throw new Error('usage: write_gguf.mjs MODEL_DIR OUT.gguf [--type f32|q8_0|q4_0] [--no-tokenizer] [--verbose]');
  const log = verbose ? (s) => process.stderr.write(`${s}\n`) : () => {};
  const r = writeModelGguf(args[0], args[1], { type, noTokenizer, log });
  process.stderr.write(`wrote ${args[1]}: ${r.arch}, ${r.tensors} tensors, ${r.type}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`write_gguf: ${e.message}\n`);
    process.exit(1);
  }
}
