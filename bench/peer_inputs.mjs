// What the llama.cpp peers (bench/llama_cpp.mjs natively, bench/wllama.mjs in Chromium) are given,
// the same for both: the prompt's token ids, and GGUF files written from a glassbox model
// directory once and reused while newer than the directory's config.json and weights; and what
// their greedy cross-checks share (bench/llama_cpp_check.mjs, bench/wllama.mjs --fixtures).
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

// The prompt: a JSON array of `length` ids from `file` (bench/engine.mjs writes
// build/bench/prompt-NAME.json), or without one, `length` ids spread over the model's vocabulary.
export function promptIds(dir, file, length = 128) {
  if (file) {
    const ids = JSON.parse(readFileSync(file, 'utf8'));
    if (!Array.isArray(ids) || ids.length !== length)
      throw new Error(`${file}: expected a JSON array of ${length} ids`);
    return ids;
  }
  const configFile = join(dir, 'config.json');
  if (!existsSync(configFile)) throw new Error(`${dir}: no config.json (not a model directory)`);
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  return Array.from({ length }, (_, i) => (1 + 997 * i) % config.vocab_size);
}

// `file`, written by write(file) unless it exists and is newer than the model's files.
export function cachedGguf(file, dir, write, log = () => {}) {
  mkdirSync(dirname(file), { recursive: true });
  const sources = ['config.json', 'model.safetensors', 'model.safetensors.index.json']
    .map((f) => join(dir, f))
    .filter(existsSync);
  if (existsSync(file) && sources.every((f) => statSync(f).mtimeMs < statSync(file).mtimeMs)) return file;
  log(`writing ${file}`);
  const t0 = performance.now();
  write(file);
  log(`wrote ${file} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

// The cross-checks' models, test fixtures that take every path of the GGUF writer: GPT-2's Conv1D
// transposes, Llama's rotary permutation with and without grouped KV heads, Llama 3's rope_freqs,
// linear rope scaling and shards, Qwen2's biases, Qwen3's q/k norms, GPT-NeoX's regrouped qkv and
// partial rotary.
export const CHECK_FIXTURES = [
  'gpt2-f32',
  'llama-gqa',
  'llama-llama3-bf16',
  'llama-linear-sharded',
  'qwen2-bf16',
  'qwen3-qk-norm',
  'gpt-neox-parallel',
];

// Steps whose glassbox top-2 margin is below this are not compared (logit units), per GGUF type.
// The quantized margins are set by how far the two quantized runs fall from F32 on the fixtures
// (rows of 32 values: one block per row, so the logits move by up to 1 for Q8_0 and 7 for Q4_0
// where F32's reach 14): only steps whose winner is clear of that noise are compared.
export const GREEDY_MARGIN = { f32: 0.01, q8_0: 0.5, q4_0: 2.5 };
