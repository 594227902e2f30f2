// What llama.cpp expects of each model type: its architecture name, hyperparameter keys and
// tensor names and layouts (llama.cpp's src/llama-arch.cpp, src/models/<arch>.cpp, and the
// conversion/ of convert_hf_to_gguf.py). Each tensor is a recipe: the GGUF name, its safetensors
// source, and how its rows are rearranged; read() runs the recipe when the tensor is written.
import { T } from './container.mjs';

const u32 = (key, value) => ({ key, type: T.UINT32, value });
const f32 = (key, value) => ({ key, type: T.FLOAT32, value });

// (rows, cols) row-major -> (cols, rows): GPT-2's Conv1D stores its weights as (in, out).
export function transpose(x, rows, cols) {
  const out = new Float32Array(x.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = x[r * cols + c];
  return out;
}

// Hugging Face's rotary layout pairs dimension i with i + d/2 in each head (rotate half); llama.cpp's
// "llama" architecture rotates adjacent pairs (2i, 2i+1), so the converter reorders the rows of
// q_proj and k_proj (weights and biases): new row h*d + 2i + j = old row h*d + j*d/2 + i.
function permuteRotary(x, nHead, rowLen) {
  const rows = x.length / rowLen;
  const d = rows / nHead;
  const out = new Float32Array(x.length);
  for (let h = 0; h < nHead; h++)
    for (let i = 0; i < d / 2; i++)
      for (let j = 0; j < 2; j++) {
        const from = (h * d + j * (d / 2) + i) * rowLen;
        out.set(x.subarray(from, from + rowLen), (h * d + 2 * i + j) * rowLen);
      }
  return out;
}

// GPT-NeoX's query_key_value rows are grouped by head ([q_h, k_h, v_h] for each h); llama.cpp's
// gptneox reads them as [all q, all k, all v].
function ungroupQkv(x, nHead, headDim, rowLen) {
  const out = new Float32Array(x.length);
  const block = headDim * rowLen;
  for (let h = 0; h < nHead; h++)
    for (let p = 0; p < 3; p++) {
      const from = (h * 3 + p) * block;
      out.set(x.subarray(from, from + block), (p * nHead + h) * block);
    }
  return out;
}

// Llama 3's rope scaling as the per-dimension frequency divisors llama.cpp takes (rope_freqs.weight).
function llama3RopeFactors(scaling, theta, dim) {
  const factor = scaling.factor ?? 8,
    low = scaling.low_freq_factor ?? 1,
    high = scaling.high_freq_factor ?? 4;
  const old = scaling.original_max_position_embeddings ?? 8192;
  const out = new Float32Array(dim / 2);
  for (let k = 0; k < dim / 2; k++) {
    const freq = Math.fround(1 / Math.fround(theta ** Math.fround((2 * k) / dim)));
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < old / high) out[k] = 1;
    else if (wavelen > old / low) out[k] = factor;
    else {
      const smooth = (old / wavelen - low) / (high - low);
      out[k] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}

function need(config, keys, what) {
  for (const k of keys) if (config[k] !== undefined && config[k] !== null) return config[k];
  throw new Error(`config.json has no ${what} (${keys.join(' or ')})`);
}

function gpt2(config, w) {
  const p = w.has('wte.weight') ? '' : 'transformer.';
  const nEmbd = need(config, ['n_embd'], 'embedding size');
  const nFf = config.n_inner ?? 4 * nEmbd;
  if ((config.activation_function ?? 'gelu_new') !== 'gelu_new')
    process.stderr.write(
      `write_gguf: llama.cpp's gpt2 uses the tanh GELU; this model's activation is ${config.activation_function}\n`,
    );
  const meta = [
    u32('gpt2.context_length', need(config, ['n_positions', 'n_ctx'], 'context length')),
    u32('gpt2.embedding_length', nEmbd),
    u32('gpt2.feed_forward_length', nFf),
    u32('gpt2.block_count', need(config, ['n_layer'], 'layer count')),
    u32('gpt2.attention.head_count', need(config, ['n_head'], 'head count')),
    f32('gpt2.attention.layer_norm_epsilon', config.layer_norm_epsilon ?? 1e-5),
  ];
  const conv = (src) => ({
    src,
    map: (x, [rows, cols]) => transpose(x, rows, cols),
    dims: ([rows, cols]) => [rows, cols],
  });
  const tensors = [
    { name: 'token_embd.weight', src: `${p}wte.weight` },
    { name: 'position_embd.weight', src: `${p}wpe.weight`, keepF32: true },
    { name: 'output_norm.weight', src: `${p}ln_f.weight` },
    { name: 'output_norm.bias', src: `${p}ln_f.bias` },
  ];
  for (let i = 0; i < config.n_layer; i++) {
    const h = `${p}h.${i}.`,
      b = `blk.${i}.`;
    tensors.push(
      { name: `${b}attn_norm.weight`, src: `${h}ln_1.weight` },
      { name: `${b}attn_norm.bias`, src: `${h}ln_1.bias` },
      { name: `${b}attn_qkv.weight`, ...conv(`${h}attn.c_attn.weight`) },
      { name: `${b}attn_qkv.bias`, src: `${h}attn.c_attn.bias` },
      { name: `${b}attn_output.weight`, ...conv(`${h}attn.c_proj.weight`) },
      { name: `${b}attn_output.bias`, src: `${h}attn.c_proj.bias` },
      { name: `${b}ffn_norm.weight`, src: `${h}ln_2.weight` },
      { name: `${b}ffn_norm.bias`, src: `${h}ln_2.bias` },
      { name: `${b}ffn_up.weight`, ...conv(`${h}mlp.c_fc.weight`) },
      { name: `${b}ffn_up.bias`, src: `${h}mlp.c_fc.bias` },
      { name: `${b}ffn_down.weight`, ...conv(`${h}mlp.c_proj.weight`) },
      { name: `${b}ffn_down.bias`, src: `${h}mlp.c_proj.bias` },
    );
  }
  return { arch: 'gpt2', meta, tensors, embedding: `${p}wte.weight` };
}

// llama, mistral, qwen2, qwen3: the same tensors, with q/k permuted for "llama" (rotary on adjacent
// pairs) and kept for qwen2/qwen3 (llama.cpp runs those with the NeoX rotary, as Hugging Face).
function llamaLike(config, w, arch) {
  const nHead = need(config, ['num_attention_heads'], 'head count');
  const nKv = config.num_key_value_heads ?? nHead;
  const hidden = need(config, ['hidden_size'], 'hidden size');
  const headDim = config.head_dim ?? hidden / nHead;
  const theta = config.rope_theta ?? 10000;
  const window = config.sliding_window;
  const sliding =
    config.model_type === 'mistral'
      ? window != null && window < config.max_position_embeddings
      : config.use_sliding_window === true;
  if (sliding)
    throw new Error(
      `sliding-window attention (sliding_window ${window}) has no counterpart in llama.cpp's ${arch} architecture`,
    );
  const meta = [
    u32(`${arch}.context_length`, need(config, ['max_position_embeddings'], 'context length')),
    u32(`${arch}.embedding_length`, hidden),
    u32(`${arch}.feed_forward_length`, need(config, ['intermediate_size'], 'MLP size')),
    u32(`${arch}.block_count`, need(config, ['num_hidden_layers'], 'layer count')),
    u32(`${arch}.attention.head_count`, nHead),
    u32(`${arch}.attention.head_count_kv`, nKv),
    f32(`${arch}.attention.layer_norm_rms_epsilon`, need(config, ['rms_norm_eps'], 'RMSNorm epsilon')),
    f32(`${arch}.rope.freq_base`, theta),
    u32(`${arch}.rope.dimension_count`, headDim),
  ];
  if (config.head_dim != null)
    meta.push(u32(`${arch}.attention.key_length`, headDim), u32(`${arch}.attention.value_length`, headDim));
  const scaling = config.rope_scaling;
  const ropeType = scaling && (scaling.rope_type ?? scaling.type);
  const tensors = [
    { name: 'token_embd.weight', src: 'model.embed_tokens.weight' },
    { name: 'output_norm.weight', src: 'model.norm.weight' },
  ];
  if (ropeType === 'linear')
    meta.push(
      { key: `${arch}.rope.scaling.type`, type: T.STRING, value: 'linear' },
      f32(`${arch}.rope.scaling.factor`, scaling.factor),
    );
  else if (ropeType === 'llama3' && arch === 'llama')
    tensors.push({
      name: 'rope_freqs.weight',
      make: () => llama3RopeFactors(scaling, theta, headDim),
      shape: [headDim / 2],
    });
  else if (ropeType && ropeType !== 'default')
    throw new Error(`rope_scaling type '${ropeType}' is not supported by this writer`);
  if (!config.tie_word_embeddings && w.has('lm_head.weight'))
    tensors.push({ name: 'output.weight', src: 'lm_head.weight' });
  const permute = arch === 'llama';
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const l = `model.layers.${i}.`,
      b = `blk.${i}.`;
    const rows = (n) => (permute ? { map: (x, shape) => permuteRotary(x, n, shape.length > 1 ? shape[1] : 1) } : {});
    tensors.push(
      { name: `${b}attn_norm.weight`, src: `${l}input_layernorm.weight` },
      { name: `${b}attn_q.weight`, src: `${l}self_attn.q_proj.weight`, ...rows(nHead) },
      { name: `${b}attn_k.weight`, src: `${l}self_attn.k_proj.weight`, ...rows(nKv) },
      { name: `${b}attn_v.weight`, src: `${l}self_attn.v_proj.weight` },
      { name: `${b}attn_output.weight`, src: `${l}self_attn.o_proj.weight` },
      { name: `${b}ffn_norm.weight`, src: `${l}post_attention_layernorm.weight` },
      { name: `${b}ffn_gate.weight`, src: `${l}mlp.gate_proj.weight` },
      { name: `${b}ffn_up.weight`, src: `${l}mlp.up_proj.weight` },
      { name: `${b}ffn_down.weight`, src: `${l}mlp.down_proj.weight` },
    );
    for (const [n, heads] of [
      ['q', nHead],
      ['k', nKv],
      ['v', 0],
      ['o', 0],
    ]) {
      const src = `${l}self_attn.${n}_proj.bias`;
      const name = `${b}attn_${n === 'o' ? 'output' : n}.bias`;
      if (w.has(src)) tensors.push({ name, src, ...(heads ? rows(heads) : {}) });
    }
    for (const n of ['gate', 'up', 'down'])
      if (w.has(`${l}mlp.${n}_proj.bias`)) tensors.push({ name: `${b}ffn_${n}.bias`, src: `${l}mlp.${n}_proj.bias` });
    if (arch === 'qwen3')
      tensors.push(
        { name: `${b}attn_q_norm.weight`, src: `${l}self_attn.q_norm.weight` },
        { name: `${b}attn_k_norm.weight`, src: `${l}self_attn.k_norm.weight` },
      );
  }
  return { arch, meta, tensors, embedding: 'model.embed_tokens.weight' };
}

function gptNeox(config, w) {
  const nHead = need(config, ['num_attention_heads'], 'head count');
  const hidden = need(config, ['hidden_size'], 'hidden size');
  const headDim = hidden / nHead;
  if (config.rope_scaling) throw new Error('rope_scaling on gpt_neox is not supported by this writer');
  const meta = [
    u32('gptneox.context_length', need(config, ['max_position_embeddings'], 'context length')),
    u32('gptneox.embedding_length', hidden),
    u32('gptneox.feed_forward_length', need(config, ['intermediate_size'], 'MLP size')),
    u32('gptneox.block_count', need(config, ['num_hidden_layers'], 'layer count')),
    u32('gptneox.attention.head_count', nHead),
    u32('gptneox.rope.dimension_count', Math.trunc((config.rotary_pct ?? 1) * headDim)),
    f32('gptneox.rope.freq_base', config.rotary_emb_base ?? 10000),
    { key: 'gptneox.use_parallel_residual', type: T.BOOL, value: config.use_parallel_residual ?? true },
    f32('gptneox.attention.layer_norm_epsilon', config.layer_norm_eps ?? 1e-5),
  ];
  const g = 'gpt_neox.';
  const tensors = [
    { name: 'token_embd.weight', src: `${g}embed_in.weight` },
    { name: 'output_norm.weight', src: `${g}final_layer_norm.weight` },
    { name: 'output_norm.bias', src: `${g}final_layer_norm.bias` },
    { name: 'output.weight', src: 'embed_out.weight' },
  ];
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const l = `${g}layers.${i}.`,
      b = `blk.${i}.`;
    const qkv = { map: (x, shape) => ungroupQkv(x, nHead, headDim, shape.length > 1 ? shape[1] : 1) };
    tensors.push(
      { name: `${b}attn_norm.weight`, src: `${l}input_layernorm.weight` },
      { name: `${b}attn_norm.bias`, src: `${l}input_layernorm.bias` },
      { name: `${b}attn_qkv.weight`, src: `${l}attention.query_key_value.weight`, ...qkv },
      { name: `${b}attn_qkv.bias`, src: `${l}attention.query_key_value.bias`, ...qkv },
      { name: `${b}attn_output.weight`, src: `${l}attention.dense.weight` },
      { name: `${b}attn_output.bias`, src: `${l}attention.dense.bias` },
      { name: `${b}ffn_norm.weight`, src: `${l}post_attention_layernorm.weight` },
      { name: `${b}ffn_norm.bias`, src: `${l}post_attention_layernorm.bias` },
      { name: `${b}ffn_up.weight`, src: `${l}mlp.dense_h_to_4h.weight` },
      { name: `${b}ffn_up.bias`, src: `${l}mlp.dense_h_to_4h.bias` },
      { name: `${b}ffn_down.weight`, src: `${l}mlp.dense_4h_to_h.weight` },
      { name: `${b}ffn_down.bias`, src: `${l}mlp.dense_4h_to_h.bias` },
    );
  }
  return { arch: 'gptneox', meta, tensors, embedding: `${g}embed_in.weight` };
}

export const MODEL_TYPES = ['gpt2', 'llama', 'mistral', 'qwen2', 'qwen3', 'gpt_neox'];

// config.json + the weights' index -> { arch, meta, tensors, embedding }.
export function describe(config, weights) {
  switch (config.model_type) {
    case 'gpt2':
      return gpt2(config, weights);
    case 'llama':
    case 'mistral':
      return llamaLike(config, weights, 'llama');
    case 'qwen2':
      return llamaLike(config, weights, 'qwen2');
    case 'qwen3':
      return llamaLike(config, weights, 'qwen3');
    case 'gpt_neox':
      return gptNeox(config, weights);
    default:
      throw new Error(
        `model_type '${config.model_type}' cannot be written as GGUF (supported: ${MODEL_TYPES.join(', ')})`,
      );
  }
}
