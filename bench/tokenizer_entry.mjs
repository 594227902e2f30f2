// The tokenizer entry ("glassbox/tokenizer": wasm/tokenizer.mjs and its own small module) against
// the engine's tokenizer (model.tokenize) on the same text and the same vocabulary (GPT-2's, the
// fixture tests/fixtures/tokenizer/gpt2), in Node: each run a fresh process that encodes the text
// once, timed from the call to the ids in hand, with the memory the call took (the process's peak
// resident memory during the call over what it held before it, per byte of text). Both give the
// same ids, or the benchmark fails.
//
//   node bench/tokenizer_entry.mjs --runs N --text FILE [--mb M] [--entry NAME=DIR ...]   JSON on stdout
//
// --mb: the text repeated (or cut) to M MB of UTF-8 (default 10). --entry: the entry with the
// glassbox-tokenizer.wasm of DIR (its wasmPaths option; e.g. another build's, to compare; the glue
// is web/dist's), as NAME; default: web/dist's own, as "entry". Each run is a round: every entry,
// then the engine, so that all see the machine's same slow and fast spells (bench/merge.mjs).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { stats } from './merge.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    text: { type: 'string' },
    mb: { type: 'string', default: '10' },
    entry: { type: 'string', multiple: true },
    child: { type: 'string' },
    wasm: { type: 'string' },
  },
});
const gpt2 = new URL('../tests/fixtures/tokenizer/gpt2/', import.meta.url);

// The text: FILE's, repeated or cut to `mb` MB (at a line's end, so no character is split).
function benchText(file, mb) {
  const given = readFileSync(file, 'utf8');
  const want = Number(mb) * 1e6;
  let text = given;
  while (Buffer.byteLength(text) < want) text += `\n${given}`;
  return text.slice(0, text.lastIndexOf('\n', want) + 1);
}

// A GPT-2 of one block 4 wide with GPT-2's vocabulary, its weights zero: a model whose tokenizer
// is GPT-2's, loaded in a moment.
function tinyGpt2() {
  const V = 50257,
    C = 4,
    P = 8;
  const shapes = {
    'wte.weight': [V, C],
    'wpe.weight': [P, C],
    'h.0.ln_1.weight': [C],
    'h.0.ln_1.bias': [C],
    'h.0.attn.c_attn.weight': [C, 3 * C],
    'h.0.attn.c_attn.bias': [3 * C],
    'h.0.attn.c_proj.weight': [C, C],
    'h.0.attn.c_proj.bias': [C],
    'h.0.ln_2.weight': [C],
    'h.0.ln_2.bias': [C],
    'h.0.mlp.c_fc.weight': [C, 4 * C],
    'h.0.mlp.c_fc.bias': [4 * C],
    'h.0.mlp.c_proj.weight': [4 * C, C],
    'h.0.mlp.c_proj.bias': [C],
    'ln_f.weight': [C],
    'ln_f.bias': [C],
  };
  const header = {};
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const weights = new Uint8Array(8 + json.length + offset);
  new DataView(weights.buffer).setBigUint64(0, BigInt(json.length), true);
  weights.set(json, 8);
  const config = { model_type: 'gpt2', vocab_size: V, n_embd: C, n_layer: 1, n_head: 1, n_positions: P };
  return {
    config: JSON.stringify(config),
    weights,
    vocab: readFileSync(new URL('vocab.json', gpt2)),
    merges: readFileSync(new URL('merges.txt', gpt2)),
  };
}

// One run in this process: -> {ms, bytes_per_byte, tokens, checksum}.
async function child(which) {
  const text = benchText(values.text, values.mb);
  let tokenize;
  if (which === 'entry') {
    const { loadTokenizer } = await import('../web/dist/tokenizer.mjs');
    const tokenizer = await loadTokenizer(fileURLToPath(gpt2), { wasmPaths: values.wasm });
    tokenize = (t) => tokenizer.tokenize(t);
  } else {
    const { loadModel } = await import('../web/dist/glassbox.mjs');
    const model = await loadModel(tinyGpt2());
    tokenize = (t) => model.tokenize(t);
  }
  await tokenize('Hello world'); // the first call's own costs are not the text's
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  const ids = await tokenize(text);
  const ms = performance.now() - t0;
  const peak = process.resourceUsage().maxRSS * 1024;
  let checksum = 0;
  for (const id of ids) checksum = (checksum * 31 + id) % 2 ** 31;
  return { ms, bytes_per_byte: Math.max(peak - before, 0) / Buffer.byteLength(text), tokens: ids.length, checksum };
}

if (values.child) {
  process.stdout.write(JSON.stringify(await child(values.child)));
} else {
  if (!values.text) throw new Error('usage: node bench/tokenizer_entry.mjs --runs N --text FILE [--mb M]');
  const entries = (values.entry ?? ['entry=']).map((e) => e.split(/=(.*)/s).slice(0, 2));
  const runs = { model: [] };
  for (const [name] of entries) runs[name] = [];
  const one = (which, wasm) => {
    const args = [fileURLToPath(import.meta.url), '--child', which, '--text', values.text, '--mb', values.mb];
    if (wasm) args.push('--wasm', wasm);
    return JSON.parse(execFileSync(process.execPath, args, { maxBuffer: 1 << 20 }).toString());
  };
  for (let r = 0; r < Number(values.runs); ++r) {
    for (const [name, dir] of entries) runs[name].push(one('entry', dir));
    runs.model.push(one('model'));
    const b = runs.model.at(-1);
    for (const [name] of entries) {
      const a = runs[name].at(-1);
      if (a.tokens !== b.tokens || a.checksum !== b.checksum)
        throw new Error(`${name} gave other ids than model.tokenize (${a.tokens} against ${b.tokens} tokens)`);
    }
  }
  const figures = (list) => ({
    ms: stats(list.map((x) => x.ms)),
    bytes_per_byte: stats(list.map((x) => x.bytes_per_byte)),
    // each run's time over the engine's in the same round, which shared the machine's state
    ratio_to_model: stats(list.map((x, i) => x.ms / runs.model[i].ms)),
  });
  const result = {
    cpu: cpus()[0]?.model,
    cpus: cpus().length,
    node: process.versions.node,
    text_bytes: Buffer.byteLength(benchText(values.text, values.mb)),
    tokens: runs.model[0].tokens,
    ...Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, figures(list)])),
  };
  process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
}
