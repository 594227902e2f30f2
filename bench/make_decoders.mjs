// Random-weight models with the shapes of real hub models, for the modern decoders' benchmark
// (bench/decoders.mjs): the Hugging Face layout as the hub ships each one, config.json as its
// repository has it and model.safetensors with its tensor names and dtype, so that loading reads
// what it would read from the real files. Speed and memory depend on the shape, not on the values.
//
//   node bench/make_decoders.mjs OUT_DIR [NAME ...]      (default: DEFAULT_SHAPES)
//
// writes OUT_DIR/NAME/{config.json, model.safetensors}; a directory that already has both is kept.
// Weights: uniform with standard deviation 0.02 (the hubs' initializer_range), norms' weights 1 and
// their biases 0, so every activation stays finite. Seeded: the same name gives the same bytes.
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Each shape's config.json, with the values of its hub repository's config.json.
export const SHAPES = {
  // HuggingFaceTB/SmolLM2-135M: llama, 30 x 576, 9 heads sharing 3 KV heads, tied head.
  'smollm2-135m': {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 0,
    eos_token_id: 0,
    hidden_act: 'silu',
    hidden_size: 576,
    initializer_range: 0.041666666666666664,
    intermediate_size: 1536,
    is_llama_config: true,
    max_position_embeddings: 8192,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: 9,
    num_hidden_layers: 30,
    num_key_value_heads: 3,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_interleaved: false,
    rope_scaling: null,
    rope_theta: 100000,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.42.3',
    use_cache: true,
    vocab_size: 49152,
  },
  // Qwen/Qwen2.5-0.5B: qwen2, 24 x 896, 14 heads sharing 2 KV heads, q/k/v biases, tied head.
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'],
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151643,
    hidden_act: 'silu',
    hidden_size: 896,
    initializer_range: 0.02,
    intermediate_size: 4864,
    max_position_embeddings: 32768,
    max_window_layers: 24,
    model_type: 'qwen2',
    num_attention_heads: 14,
    num_hidden_layers: 24,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000.0,
    sliding_window: 32768,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.40.1',
    use_cache: true,
    use_mrope: false,
    use_sliding_window: false,
    vocab_size: 151936,
  },
  // meta-llama/Llama-3.2-1B: llama, 16 x 2048, 32 heads of 64 sharing 8 KV heads, llama3 rope
  // scaling, 131,072 positions, tied head.
  'llama-3.2-1b': {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 128000,
    eos_token_id: 128001,
    head_dim: 64,
    hidden_act: 'silu',
    hidden_size: 2048,
    initializer_range: 0.02,
    intermediate_size: 8192,
    max_position_embeddings: 131072,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: 32,
    num_hidden_layers: 16,
    num_key_value_heads: 8,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_scaling: {
      factor: 32.0,
      high_freq_factor: 4.0,
      low_freq_factor: 1.0,
      original_max_position_embeddings: 8192,
      rope_type: 'llama3',
    },
    rope_theta: 500000.0,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.45.0.dev0',
    use_cache: true,
    vocab_size: 128256,
  },
  // meta-llama/Llama-3.2-3B: llama, 28 x 3072, 24 heads of 128 sharing 8 KV heads, llama3 rope
  // scaling, tied head; 6.4 GB as BF16. Not among the defaults (bench/decoders.mjs): it runs in
  // WebAssembly's 4 GB only as int4.
  'llama-3.2-3b': {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 128000,
    eos_token_id: 128001,
    head_dim: 128,
    hidden_act: 'silu',
    hidden_size: 3072,
    initializer_range: 0.02,
    intermediate_size: 8192,
    max_position_embeddings: 131072,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: 24,
    num_hidden_layers: 28,
    num_key_value_heads: 8,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_scaling: {
      factor: 32.0,
      high_freq_factor: 4.0,
      low_freq_factor: 1.0,
      original_max_position_embeddings: 8192,
      rope_type: 'llama3',
    },
    rope_theta: 500000.0,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.45.0.dev0',
    use_cache: true,
    vocab_size: 128256,
  },
  // Qwen/Qwen2.5-3B: qwen2, 36 x 2048, 16 heads sharing 2 KV heads, q/k/v biases, tied head;
  // 6.2 GB as BF16. Not among the defaults, as Llama-3.2-3B.
  'qwen2.5-3b': {
    architectures: ['Qwen2ForCausalLM'],
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151643,
    hidden_act: 'silu',
    hidden_size: 2048,
    initializer_range: 0.02,
    intermediate_size: 11008,
    max_position_embeddings: 32768,
    max_window_layers: 36,
    model_type: 'qwen2',
    num_attention_heads: 16,
    num_hidden_layers: 36,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000.0,
    sliding_window: 32768,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    transformers_version: '4.40.1',
    use_cache: true,
    use_sliding_window: false,
    vocab_size: 151936,
  },
  // EleutherAI/pythia-410m: gpt_neox, 24 x 1024, 16 heads, rotary on a quarter of each head,
  // parallel residual, a separate embed_out. Its hub weights are F16.
  'pythia-410m': {
    architectures: ['GPTNeoXForCausalLM'],
    bos_token_id: 0,
    eos_token_id: 0,
    hidden_act: 'gelu',
    hidden_size: 1024,
    initializer_range: 0.02,
    intermediate_size: 4096,
    layer_norm_eps: 1e-5,
    max_position_embeddings: 2048,
    model_type: 'gpt_neox',
    num_attention_heads: 16,
    num_hidden_layers: 24,
    rotary_emb_base: 10000,
    rotary_pct: 0.25,
    tie_word_embeddings: false,
    torch_dtype: 'float16',
    transformers_version: '4.24.0',
    use_cache: true,
    use_parallel_residual: true,
    vocab_size: 50304,
  },
};

// [name, shape, kind]: kind 'w' random weights, 'one' a norm's weight, 'zero' a norm's bias.
export function tensors(config) {
  const C = config.hidden_size,
    V = config.vocab_size,
    F = config.intermediate_size,
    H = config.num_attention_heads;
  const hd = config.head_dim ?? C / H,
    KV = config.num_key_value_heads ?? H;
  const list = [];
  const add = (name, shape, kind = 'w') => list.push([name, shape, kind]);
  if (config.model_type === 'gpt_neox') {
    add('gpt_neox.embed_in.weight', [V, C]);
    for (let l = 0; l < config.num_hidden_layers; ++l) {
      const p = `gpt_neox.layers.${l}.`;
      for (const norm of ['input_layernorm', 'post_attention_layernorm']) {
        add(`${p}${norm}.weight`, [C], 'one');
        add(`${p}${norm}.bias`, [C], 'zero');
      }
      add(`${p}attention.query_key_value.weight`, [3 * C, C]);
      add(`${p}attention.query_key_value.bias`, [3 * C]);
      add(`${p}attention.dense.weight`, [C, C]);
      add(`${p}attention.dense.bias`, [C]);
      add(`${p}mlp.dense_h_to_4h.weight`, [F, C]);
      add(`${p}mlp.dense_h_to_4h.bias`, [F]);
      add(`${p}mlp.dense_4h_to_h.weight`, [C, F]);
      add(`${p}mlp.dense_4h_to_h.bias`, [C]);
    }
    add('gpt_neox.final_layer_norm.weight', [C], 'one');
    add('gpt_neox.final_layer_norm.bias', [C], 'zero');
    add('embed_out.weight', [V, C]);
  } else {
    // llama, qwen2: Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM names
    const qkvBias = config.model_type === 'qwen2' || config.attention_bias === true;
    add('model.embed_tokens.weight', [V, C]);
    for (let l = 0; l < config.num_hidden_layers; ++l) {
      const p = `model.layers.${l}.`;
      add(`${p}input_layernorm.weight`, [C], 'one');
      for (const [proj, rows] of [
        ['q_proj', H * hd],
        ['k_proj', KV * hd],
        ['v_proj', KV * hd],
      ]) {
        add(`${p}self_attn.${proj}.weight`, [rows, C]);
        if (qkvBias) add(`${p}self_attn.${proj}.bias`, [rows]);
      }
      add(`${p}self_attn.o_proj.weight`, [C, H * hd]);
      add(`${p}post_attention_layernorm.weight`, [C], 'one');
      add(`${p}mlp.gate_proj.weight`, [F, C]);
      add(`${p}mlp.up_proj.weight`, [F, C]);
      add(`${p}mlp.down_proj.weight`, [C, F]);
    }
    add('model.norm.weight', [C], 'one');
    if (!config.tie_word_embeddings) add('lm_head.weight', [V, C]);
  }
  return list;
}

// IEEE half and bfloat16 bits of a float32 value, rounded to nearest even.
const f32 = new Float32Array(1),
  u32 = new Uint32Array(f32.buffer);
function bf16(x) {
  f32[0] = x;
  const u = u32[0];
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
function f16(x) {
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a < 2 ** -24) return sign; // rounds to zero
  if (a < 2 ** -14) return sign | Math.round(a / 2 ** -24); // subnormal
  let e = Math.floor(Math.log2(a));
  let m = Math.round((a / 2 ** e - 1) * 1024);
  if (m === 1024) ((m = 0), ++e);
  if (e > 15) throw new Error(`${x} does not fit in a half`);
  return sign | ((e + 15) << 10) | m;
}

// xorshift32: the same stream everywhere.
function xorshift(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

// 65,536 random 16-bit values to draw from: two draws per random uint32, so 2.5 GB of weights take
// seconds, not minutes.
function table(encode, next) {
  const t = new Uint16Array(65536);
  const half = 0.02 * Math.sqrt(3); // uniform on [-half, half]: standard deviation 0.02
  for (let i = 0; i < t.length; ++i) t[i] = encode(((next() / 2 ** 32) * 2 - 1) * half);
  return t;
}

export function writeModel(dir, config, seed = 1) {
  const dtype = { bfloat16: 'BF16', float16: 'F16' }[config.torch_dtype];
  if (!dtype) throw new Error(`${dir}: torch_dtype ${config.torch_dtype} is not written here`);
  const encode = dtype === 'BF16' ? bf16 : f16;
  // The safetensors library writes tensors in name order (all here have one dtype).
  const list = tensors(config).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of list) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // the data starts 8-byte aligned, as the library pads
  mkdirSync(dir, { recursive: true });
  const partial = join(dir, 'model.safetensors.partial');
  const fd = openSync(partial, 'w');
  try {
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    writeSync(fd, length);
    writeSync(fd, Buffer.from(json, 'latin1'));
    const next = xorshift(seed);
    const values = table(encode, next);
    const one = encode(1),
      chunk = new Uint16Array(1 << 23); // 16 MB
    for (const [, shape, kind] of list) {
      let left = shape.reduce((a, b) => a * b, 1);
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        if (kind === 'w')
          for (let i = 0; i < n; i += 2) {
            const r = next();
            chunk[i] = values[r & 0xffff];
            chunk[i + 1] = values[r >>> 16]; // n is even: every tensor here has an even size
          }
        else chunk.fill(kind === 'one' ? one : 0, 0, n);
        writeSync(fd, new Uint8Array(chunk.buffer, 0, 2 * n));
        left -= n;
      }
    }
  } finally {
    closeSync(fd);
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  renameSync(partial, join(dir, 'model.safetensors')); // a whole file or none
  return 8 + json.length + offset;
}

// The shapes scripts/bench --decoders makes and measures; the 3B ones are made when named.
export const DEFAULT_SHAPES = Object.keys(SHAPES).filter((name) => !name.endsWith('-3b'));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out, ...names] = process.argv.slice(2);
  if (!out) throw new Error('usage: node bench/make_decoders.mjs OUT_DIR [NAME ...]');
  for (const name of names.length ? names : DEFAULT_SHAPES) {
    const config = SHAPES[name];
    if (!config) throw new Error(`no shape ${name}; the shapes: ${Object.keys(SHAPES).join(', ')}`);
    const dir = join(out, name);
    if (existsSync(join(dir, 'config.json')) && existsSync(join(dir, 'model.safetensors'))) continue;
    const t0 = performance.now();
    const bytes = writeModel(dir, config);
    process.stderr.write(
      `make_decoders: ${dir}: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
  }
}
