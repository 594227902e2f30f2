// Models made up in code for tests, as the files loadModel takes ({config, weights, vocab,
// merges}), so that a test knows what they must do without a reference run. Shared by the Node
// tests (tests/js), the browser tests and the page test; plain JS, no Node APIs.

// The tensors of a GPT-2 with L blocks (default one): [name, shape].
function gpt2Shapes({ V, C, P, L = 1 }) {
  const blocks = [];
  for (let l = 0; l < L; ++l)
    blocks.push(
      [`h.${l}.ln_1.weight`, [C]],
      [`h.${l}.ln_1.bias`, [C]],
      [`h.${l}.attn.c_attn.weight`, [C, 3 * C]],
      [`h.${l}.attn.c_attn.bias`, [3 * C]],
      [`h.${l}.attn.c_proj.weight`, [C, C]],
      [`h.${l}.attn.c_proj.bias`, [C]],
      [`h.${l}.ln_2.weight`, [C]],
      [`h.${l}.ln_2.bias`, [C]],
      [`h.${l}.mlp.c_fc.weight`, [C, 4 * C]],
      [`h.${l}.mlp.c_fc.bias`, [4 * C]],
      [`h.${l}.mlp.c_proj.weight`, [4 * C, C]],
      [`h.${l}.mlp.c_proj.bias`, [C]],
    );
  return [['wte.weight', [V, C]], ['wpe.weight', [P, C]], ...blocks, ['ln_f.weight', [C]], ['ln_f.bias', [C]]];
}

// An openai-gpt with one block, its weights all zero, whose config.json leaves n_positions out
// and gives n_ctx: 1024, which neither Hugging Face's OpenAIGPTConfig nor the engine reads: its
// context is OpenAIGPTConfig's default, 512 positions, the rows of its position table. Its
// vocabulary is the 256 byte tokens, without merges.
export function openaiGptDefaultContext() {
  const C = 4,
    V = 256,
    P = 512;
  const config = {
    model_type: 'openai-gpt',
    vocab_size: V,
    n_ctx: 1024,
    n_embd: C,
    n_layer: 1,
    n_head: 1,
    afn: 'gelu',
  };
  const names = { 'wte.weight': 'tokens_embed.weight', 'wpe.weight': 'positions_embed.weight' };
  const shapes = gpt2Shapes({ V, C, P })
    .filter(([name]) => !name.startsWith('ln_f.'))
    .map(([name, shape]) => [names[name] ?? name, shape]);
  const vocab = Object.fromEntries(byteChars().map((c, b) => [c, b]));
  return {
    config: JSON.stringify(config),
    weights: safetensors(shapes, 'F32').bytes,
    vocab: JSON.stringify(vocab),
    merges: '#version: 0.2\n',
  };
}

// A safetensors file of these tensors in `dtype` (F32: 4 bytes, F16: 2), its data all zero, or
// only its header (withData false). -> {bytes, header: the parsed header, dataStart}
function safetensors(shapes, dtype, withData = true) {
  const width = dtype === 'F32' ? 4 : 2;
  const header = {};
  let offset = 0;
  for (const [name, shape] of shapes) {
    const bytes = width * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const bytes = new Uint8Array(8 + json.length + (withData ? offset : 0));
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  return { bytes, header, dataStart: 8 + json.length };
}

// GPT-2's byte-level alphabet (OpenAI's bytes_to_unicode): byte b is this character in vocab.json.
function byteChars() {
  const printable = [];
  for (const [lo, hi] of [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ])
    for (let b = lo; b <= hi; ++b) printable.push(b);
  const chars = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; ++b) chars[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return chars;
}

// The text of the one token a made-up model always predicts: a BOM, then more than 16 bytes.
export const BOM_TOKEN_TEXT = '\ufeffstart of a long token';

// A model that greedily predicts token 256 (BOM_TOKEN_TEXT) after any prompt: GPT-2 with one
// block whose weights are all zero (the block adds nothing to the residual), a final LayerNorm
// whose output is its bias e0 whatever its input, and an embedding whose row 256 alone is e0, so
// the logits (tied to the embedding) are 1 for token 256 and 0 for the rest. The vocabulary is the
// 256 byte tokens plus that token; no merges.
export function bomModelFiles() {
  const C = 4,
    V = 257,
    P = 16;
  const config = {
    model_type: 'gpt2',
    vocab_size: V,
    n_positions: P,
    n_embd: C,
    n_layer: 1,
    n_head: 1,
    activation_function: 'gelu_new',
    layer_norm_epsilon: 1e-5,
  };
  const { bytes: weights, header, dataStart } = safetensors(gpt2Shapes({ V, C, P }), 'F32');
  const set = (name, index, value) =>
    // (the data need not be 4-byte aligned: a DataView, not a Float32Array)
    new DataView(weights.buffer).setFloat32(dataStart + header[name].data_offsets[0] + 4 * index, value, true);
  set('wte.weight', 256 * C, 1); // row 256 = e0
  set('ln_f.bias', 0, 1); // the final norm's output = e0

  const chars = byteChars();
  const vocab = {};
  for (let b = 0; b < 256; ++b) vocab[chars[b]] = b;
  vocab[Array.from(new TextEncoder().encode(BOM_TOKEN_TEXT), (b) => chars[b]).join('')] = 256;
  return { config: JSON.stringify(config), weights, vocab: JSON.stringify(vocab), merges: '#version: 0.2\n' };
}

// A model too large for a WebAssembly heap, given as its config.json and the header of its
// model.safetensors alone (no data): GPT-2 with a 4,000,000-token vocabulary 256 wide, in F16.
// Loading it would take the embedding's rows as they are (2 GB of F16) and the LM head's packed F32
// copy (4.1 GB): it must be refused from the header, before anything is allocated.
export function hugeModel() {
  const V = 4_000_000,
    C = 256,
    P = 16;
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_embd: C, n_layer: 1, n_head: 1 };
  return { config: JSON.stringify(config), weights: safetensors(gpt2Shapes({ V, C, P }), 'F16', false).bytes };
}

// A model that is its matrices, given as its config.json and the header of its model.safetensors
// alone (no data): GPT-2 4,096 wide with `layers` blocks, a 16-token vocabulary and 16 positions, in
// F16. Each block's matrices are 805 MB as F32 (4 bytes a weight), 226 MB as int8 (36 bytes per 32)
// and 126 MB as int4 (20 bytes per 32), so the form decides whether it fits in a WebAssembly heap:
// with 8 blocks int8 fits and F32 does not; with 20 only int4 fits.
export function matricesModel(layers) {
  const V = 16,
    C = 4096,
    P = 16;
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_embd: C, n_layer: layers, n_head: 32 };
  return {
    config: JSON.stringify(config),
    weights: safetensors(gpt2Shapes({ V, C, P, L: layers }), 'F16', false).bytes,
  };
}

// A model whose weights fit in a WebAssembly heap but whose KV cache at its full context does not:
// GPT-2 with one block 512 wide and 1,000,000 positions (the most config.json may give), in F16,
// given as its config.json and the header of its model.safetensors alone. Loaded, its position
// table is 2 GB of F32; a generation's keys and values at the full context are 2 x 2 GB, and half
// that again while the cache grows to it (KVCache::peak_bytes): 5,860 MB.
export function kvHeavyModel() {
  const V = 16,
    C = 512,
    P = 1_000_000;
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_embd: C, n_layer: 1, n_head: 1 };
  return { config: JSON.stringify(config), weights: safetensors(gpt2Shapes({ V, C, P }), 'F16', false).bytes };
}
