// A model too large for a WebAssembly heap, given as its config.json and the header of its
// model.safetensors alone (no data): GPT-2 with a 4,000,000-token vocabulary 256 wide, in F16.
// Loading it would take three F32 copies of the embedding (its rows, the LM head's packed copy,
// and one on the way), 3 x 4.1 GB: it must be refused from the header, before anything is
// allocated. Shared by the Node tests (tests/js) and the page test; plain JS.
export function hugeModel() {
  const V = 4_000_000, C = 256, P = 16;
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_embd: C, n_layer: 1, n_head: 1 };
  const shapes = [
    ['wte.weight', [V, C]], ['wpe.weight', [P, C]],
    ['h.0.ln_1.weight', [C]], ['h.0.ln_1.bias', [C]],
    ['h.0.attn.c_attn.weight', [C, 3 * C]], ['h.0.attn.c_attn.bias', [3 * C]],
    ['h.0.attn.c_proj.weight', [C, C]], ['h.0.attn.c_proj.bias', [C]],
    ['h.0.ln_2.weight', [C]], ['h.0.ln_2.bias', [C]],
    ['h.0.mlp.c_fc.weight', [C, 4 * C]], ['h.0.mlp.c_fc.bias', [4 * C]],
    ['h.0.mlp.c_proj.weight', [4 * C, C]], ['h.0.mlp.c_proj.bias', [C]],
    ['ln_f.weight', [C]], ['ln_f.bias', [C]],
  ];
  const header = {};
  let offset = 0;
  for (const [name, shape] of shapes) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F16', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const weights = new Uint8Array(8 + json.length);
  new DataView(weights.buffer).setBigUint64(0, BigInt(json.length), true);
  weights.set(json, 8);
  return { config: JSON.stringify(config), weights };
}
