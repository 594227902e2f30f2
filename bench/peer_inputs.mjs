// What the llama.cpp peers (bench/llama_cpp.mjs natively, bench/wllama.mjs in Chromium) are given,
// the same for both: the prompt's token ids, and GGUF files written from a glassbox model
// directory once and reused while newer than the directory's config.json and weights.
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
