// The GGUF writer (scripts/write_gguf.mjs): its quantizers bit for bit against ggml's reference
// (tests/fixtures/gguf/quant_blocks.json, scripts/make_gguf_fixtures.py), its files read back by a
// small GGUF reader of this test's own (header, metadata types, alignment, each tensor's bytes
// against the safetensors it came from, GPT-2's transposes and Llama's rotary permutation), its
// vocabulary, and its bad inputs. That llama.cpp itself loads the files and computes what
// glassbox computes is bench/llama_cpp_check.mjs's part (it needs the npm peers scripts/bench
// installs).
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { GGML_TYPE, decode, floatToHalf, quantizeQ4_0, quantizeQ8_0 } from '../../scripts/gguf/quantize.mjs';
import { writeModelGguf } from '../../scripts/write_gguf.mjs';

const root = new URL('../..', import.meta.url).pathname;
const fixture = (name) => join(root, 'tests/fixtures', name);

// --- an independent reader: GGUF v3 as ggml's docs/gguf.md describes it ---
function readGguf(file) {
  const b = readFileSync(file);
  let p = 0;
  const u32 = () => ((p += 4), b.readUInt32LE(p - 4));
  const u64 = () => ((p += 8), Number(b.readBigUInt64LE(p - 8)));
  const str = () => {
    const n = u64();
    p += n;
    return b.toString('utf8', p - n, p);
  };
  const value = (type) => {
    switch (type) {
      case 4:
        return u32();
      case 5:
        return ((p += 4), b.readInt32LE(p - 4));
      case 6:
        return ((p += 4), b.readFloatLE(p - 4));
      case 7:
        return ((p += 1), b[p - 1] !== 0);
      case 8:
        return str();
      case 9: {
        const elem = u32();
        const n = u64();
        return { elem, items: Array.from({ length: n }, () => value(elem)) };
      }
      default:
        throw new Error(`reader: unexpected value type ${type}`);
    }
  };
  assert.equal(b.toString('latin1', 0, 4), 'GGUF');
  p = 4;
  const version = u32();
  const nTensors = u64();
  const nKv = u64();
  const kv = new Map();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    const type = u32();
    kv.set(key, { type, value: value(type) });
  }
  const infos = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    infos.push({ name, dims, type: u32(), offset: u64() });
  }
  const dataStart = Math.ceil(p / 32) * 32;
  const tensors = new Map();
  for (const t of infos) {
    const count = t.dims.reduce((a, c) => a * c, 1);
    const size = t.type === 0 ? count * 4 : t.type === 8 ? (count / 32) * 34 : (count / 32) * 18;
    tensors.set(t.name, { ...t, count, bytes: b.subarray(dataStart + t.offset, dataStart + t.offset + size) });
  }
  return { version, kv, tensors, dataStart };
}

// F32 safetensors, read directly.
function readSafetensors(file) {
  const b = readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.toString('utf8', 8, 8 + n));
  return (name) => {
    const t = header[name];
    assert.equal(t.dtype, 'F32');
    const [s, e] = t.data_offsets;
    return { shape: t.shape, x: new Float32Array(b.buffer.slice(b.byteOffset + 8 + n + s, b.byteOffset + 8 + n + e)) };
  };
}

const f32Of = (bytes) => new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
const tmp = () => mkdtempSync(join(tmpdir(), 'gguf-test-'));

test('Q8_0 and Q4_0 blocks are ggml reference blocks, bit for bit', () => {
  const { cases } = JSON.parse(readFileSync(fixture('gguf/quant_blocks.json'), 'utf8'));
  assert.ok(cases.length >= 9);
  for (const [i, c] of cases.entries()) {
    const x = new Float32Array(new Uint32Array(c.input_f32_bits).buffer);
    assert.equal(quantizeQ8_0(x).toString('hex'), c.q8_0, `case ${i} Q8_0`);
    assert.equal(quantizeQ4_0(x).toString('hex'), c.q4_0, `case ${i} Q4_0`);
  }
});

test('decoded blocks stay within half a step of the input (a step for Q4_0)', () => {
  const { cases } = JSON.parse(readFileSync(fixture('gguf/quant_blocks.json'), 'utf8'));
  let checked = 0;
  for (const c of cases) {
    const x = new Float32Array(new Uint32Array(c.input_f32_bits).buffer);
    const amax = Math.max(...x.map(Math.abs));
    // A scale below fp16's normal range (2^-14) keeps only a few bits: ggml's blocks lose the
    // values there too (the 1e-6 case), so the bound holds only above it.
    if (amax / 127 < 2 ** -14) continue;
    checked++;
    const q8 = decode(GGML_TYPE.Q8_0, quantizeQ8_0(x), 32);
    const q4 = decode(GGML_TYPE.Q4_0, quantizeQ4_0(x), 32);
    for (let j = 0; j < 32; j++) {
      // fp16 scales are relatively 2^-11 off the float ones: a little beyond half a step.
      assert.ok(Math.abs(q8[j] - x[j]) <= (amax / 127) * 0.51 + 1e-30, `Q8_0 ${x[j]} -> ${q8[j]}`);
      // Q4_0 spans -8..7 steps: the side opposite the largest value clips at 7, a step away.
      assert.ok(Math.abs(q4[j] - x[j]) <= (amax / 8) * 1.01 + 1e-30, `Q4_0 ${x[j]} -> ${q4[j]}`);
    }
  }
  assert.ok(checked >= 7);
});

test('float to half rounds to nearest even, with subnormals and overflow', () => {
  const cases = [
    [1, 0x3c00],
    [-2, 0xc000],
    [65504, 0x7bff],
    [65520, 0x7c00],
    [2 ** -24, 0x0001],
    [2 ** -25, 0x0000],
    [3 * 2 ** -25, 0x0002],
    [-0, 0x8000],
    [1 + 2 ** -11, 0x3c00],
    [1 + 3 * 2 ** -11, 0x3c02],
    [2 ** -14, 0x0400],
    [Infinity, 0x7c00],
    [0.1, 0x2e66],
  ];
  for (const [x, h] of cases) assert.equal(floatToHalf(x), h, `${x}`);
});

test('GPT-2 as GGUF: metadata types, alignment, and every tensor as llama.cpp lays it out', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'gpt2.gguf');
    writeModelGguf(fixture('gpt2-f32'), file, { type: 'f32' });
    const g = readGguf(file);
    assert.equal(g.version, 3);
    assert.equal(g.dataStart % 32, 0);
    assert.deepEqual(g.kv.get('general.architecture'), { type: 8, value: 'gpt2' });
    assert.deepEqual(g.kv.get('gpt2.block_count'), { type: 4, value: 2 });
    assert.deepEqual(g.kv.get('gpt2.context_length'), { type: 4, value: 32 });
    assert.deepEqual(g.kv.get('gpt2.feed_forward_length'), { type: 4, value: 128 });
    assert.deepEqual(g.kv.get('gpt2.attention.head_count'), { type: 4, value: 4 });
    assert.equal(g.kv.get('gpt2.attention.layer_norm_epsilon').type, 6);
    assert.equal(g.kv.get('tokenizer.ggml.tokens').value.items.length, 96);
    assert.equal(g.tensors.size, 4 + 2 * 12);
    for (const t of g.tensors.values()) assert.equal(t.offset % 32, 0, t.name);
    const st = readSafetensors(join(fixture('gpt2-f32'), 'model.safetensors'));
    assert.deepEqual(f32Of(g.tensors.get('token_embd.weight').bytes), st('wte.weight').x);
    assert.deepEqual(g.tensors.get('token_embd.weight').dims, [32, 96]);
    // Conv1D (in, out) -> llama.cpp's (out, in): dims [in, out], row o = column o.
    const qkv = g.tensors.get('blk.1.attn_qkv.weight');
    assert.deepEqual(qkv.dims, [32, 96]);
    const src = st('h.1.attn.c_attn.weight');
    const got = f32Of(qkv.bytes);
    for (let o = 0; o < 96; o++) for (let i = 0; i < 32; i++) assert.equal(got[o * 32 + i], src.x[i * 96 + o]);
    assert.deepEqual(g.tensors.get('blk.0.ffn_down.weight').dims, [128, 32]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Llama as GGUF: q and k rows permuted to adjacent rotary pairs, v untouched, Q8_0 blocks of the permuted rows', () => {
  const dir = tmp();
  try {
    const st = readSafetensors(join(fixture('llama-gqa'), 'model.safetensors'));
    const config = JSON.parse(readFileSync(join(fixture('llama-gqa'), 'config.json'), 'utf8'));
    const d = config.hidden_size / config.num_attention_heads;
    for (const type of ['f32', 'q8_0']) {
      const file = join(dir, `llama-${type}.gguf`);
      writeModelGguf(fixture('llama-gqa'), file, { type });
      const g = readGguf(file);
      assert.deepEqual(g.kv.get('general.architecture').value, 'llama');
      assert.deepEqual(g.kv.get('llama.rope.dimension_count'), { type: 4, value: d });
      assert.equal(g.kv.get('llama.attention.layer_norm_rms_epsilon').type, 6);
      const q = g.tensors.get('blk.0.attn_q.weight');
      assert.equal(q.type, type === 'f32' ? GGML_TYPE.F32 : GGML_TYPE.Q8_0);
      const rows = decode(q.type, q.bytes, q.count);
      const orig = st('model.layers.0.self_attn.q_proj.weight').x;
      const C = config.hidden_size;
      for (let h = 0; h < config.num_attention_heads; h++)
        for (let i = 0; i < d / 2; i++)
          for (let j = 0; j < 2; j++) {
            const from = orig.subarray((h * d + j * (d / 2) + i) * C, (h * d + j * (d / 2) + i + 1) * C);
            const want = type === 'f32' ? from : decode(GGML_TYPE.Q8_0, quantizeQ8_0(from), C);
            assert.deepEqual(rows.subarray((h * d + 2 * i + j) * C, (h * d + 2 * i + j + 1) * C), want);
          }
      const v = g.tensors.get('blk.0.attn_v.weight');
      const vWant = st('model.layers.0.self_attn.v_proj.weight').x;
      assert.deepEqual(
        decode(v.type, v.bytes, v.count),
        type === 'f32' ? vWant : decode(GGML_TYPE.Q8_0, quantizeQ8_0(vWant), vWant.length),
      );
      assert.equal(g.tensors.get('blk.0.attn_norm.weight').type, GGML_TYPE.F32);
      assert.ok(g.tensors.has('output.weight'), 'an untied LM head is written');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Llama 3's rope scaling becomes rope_freqs.weight, and a tied head is left to token_embd", () => {
  const dir = tmp();
  try {
    const file = join(dir, 'l3.gguf');
    writeModelGguf(fixture('llama-llama3-bf16'), file, { type: 'q4_0' });
    const g = readGguf(file);
    const f = g.tensors.get('rope_freqs.weight');
    assert.deepEqual(f.dims, [8]);
    // head_dim 16, theta 500000, factor 8, original context 64: wavelengths 2*pi*theta^(2k/16).
    const factors = f32Of(f.bytes);
    assert.equal(factors[0], 1);
    assert.equal(factors[7], 8);
    assert.ok(!g.tensors.has('output.weight'));
    assert.equal(g.tensors.get('token_embd.weight').type, GGML_TYPE.Q4_0);
    assert.deepEqual(g.kv.get('general.file_type').value, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a tokenizer.json becomes the gpt2 vocabulary: tokens by id, special tokens as control tokens, merges as pairs', () => {
  const dir = tmp();
  try {
    for (const f of ['config.json', 'model.safetensors']) copyFileSync(join(fixture('qwen3-qk-norm'), f), join(dir, f));
    const vocab = Object.fromEntries(
      Array.from({ length: 126 }, (_, i) => [i < 26 ? String.fromCharCode(97 + i) : `t${i}`, i]),
    );
    const tokenizer = {
      model: { type: 'BPE', vocab, merges: [['a', 'b'], 'c d'] },
      pre_tokenizer: { type: 'ByteLevel' },
      added_tokens: [{ id: 126, content: '<|endoftext|>', special: true }],
    };
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
    writeModelGguf(dir, join(dir, 'm.gguf'));
    const g = readGguf(join(dir, 'm.gguf'));
    const tokens = g.kv.get('tokenizer.ggml.tokens').value.items;
    const types = g.kv.get('tokenizer.ggml.token_type').value;
    assert.equal(types.elem, 5);
    assert.deepEqual([tokens[0], tokens[126], tokens[127]], ['a', '<|endoftext|>', '[PAD127]']);
    assert.deepEqual([types.items[0], types.items[126], types.items[127]], [1, 3, 5]);
    assert.deepEqual(g.kv.get('tokenizer.ggml.merges').value.items, ['a b', 'c d']);
    assert.equal(g.kv.get('tokenizer.ggml.pre').value, 'qwen2');
    assert.equal(g.kv.get('general.architecture').value, 'qwen3');
    assert.ok(g.tensors.has('blk.1.attn_k_norm.weight'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Bad input: a clear error naming the problem, and neither the file nor a temporary one left.
function refuses(makeDir, pattern) {
  const dir = tmp();
  try {
    makeDir(dir);
    const dest = join(dir, 'out.gguf');
    assert.throws(() => writeModelGguf(dir, dest, { type: 'q8_0' }), pattern);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('gguf')),
      [],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const copyModel =
  (name, edit = (c) => c) =>
  (dir) => {
    copyFileSync(join(fixture(name), 'model.safetensors'), join(dir, 'model.safetensors'));
    const config = JSON.parse(readFileSync(join(fixture(name), 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(edit(config)));
  };

// A copy of the fixture's safetensors with one tensor renamed or given another dtype label.
const editedWeights = (name, tensor, edit) => (dir) => {
  copyModel(name)(dir);
  const b = readFileSync(join(dir, 'model.safetensors'));
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.toString('utf8', 8, 8 + n));
  edit(header, tensor);
  let text = Buffer.from(JSON.stringify(header));
  text = Buffer.concat([text, Buffer.alloc(Math.max(0, n - text.length), 0x20)]);
  assert.equal(text.length, n);
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([b.subarray(0, 8), text, b.subarray(8 + n)]));
};

test('an unknown model type is refused by name', () => {
  refuses(
    copyModel('gpt2-f32', (c) => ({ ...c, model_type: 'bloom' })),
    /model_type 'bloom' cannot be written as GGUF \(supported: gpt2, llama/,
  );
});

test('a missing tensor is refused by name', () => {
  refuses(
    editedWeights('gpt2-f32', 'h.1.mlp.c_fc.weight', (h, t) => {
      h[`${t}X`] = h[t];
      delete h[t];
    }),
    /missing tensor 'h\.1\.mlp\.c_fc\.weight'/,
  );
});

test('an unsupported dtype is refused by name', () => {
  refuses(
    editedWeights('gpt2-f32', 'h.0.ln_1.bias', (h, t) => {
      h[t].dtype = 'I32';
    }),
    /tensor 'h\.0\.ln_1\.bias' has dtype I32 \(supported: F32, F16, BF16\)/,
  );
});

test('a sliding window llama.cpp would ignore is refused', () => {
  refuses(
    copyModel('qwen2-bf16', (c) => ({ ...c, use_sliding_window: true })),
    /sliding-window attention \(sliding_window 4\)/,
  );
});

test('a tokenizer larger than the embedding is refused', () => {
  refuses((dir) => {
    copyModel('gpt2-f32')(dir);
    for (const f of ['vocab.json', 'merges.txt']) copyFileSync(join(fixture('tokenizer/gpt2'), f), join(dir, f));
  }, /the tokenizer has ids up to 50256 but the embedding has 96 rows/);
});

test('an unknown storage type is refused', () => {
  assert.throws(
    () => writeModelGguf(fixture('gpt2-f32'), join(tmpdir(), 'never.gguf'), { type: 'q5_k' }),
    /unknown --type 'q5_k' \(use f32, q8_0 or q4_0\)/,
  );
});
