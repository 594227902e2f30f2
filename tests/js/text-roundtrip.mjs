// Text that comes back from the engine keeps every character, a leading U+FEFF (byte order mark)
// included: detokenize(tokenize(text)) === text over the tokenizer cases (the ids are tiktoken's),
// and a streamed step's text equals its token's bytes. Shared by the Node tests (tests/js) and the
// browser tests (tests/browser/page.mjs), which run it in Chromium; plain JS, no Node APIs.

// GPT-2's byte-level alphabet (OpenAI's bytes_to_unicode): byte b is this character in vocab.json.
function byteChars() {
  const printable = [];
  for (const [lo, hi] of [[0x21, 0x7e], [0xa1, 0xac], [0xae, 0xff]]) for (let b = lo; b <= hi; ++b) printable.push(b);
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
  const C = 4, V = 257, P = 16;
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_embd: C, n_layer: 1, n_head: 1,
                   activation_function: 'gelu_new', layer_norm_epsilon: 1e-5 };
  const tensors = [
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
  for (const [name, shape] of tensors) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const weights = new Uint8Array(8 + json.length + offset);
  new DataView(weights.buffer).setBigUint64(0, BigInt(json.length), true);
  weights.set(json, 8);
  const set = (name, index, value) =>   // (the data need not be 4-byte aligned: a DataView, not a Float32Array)
    new DataView(weights.buffer).setFloat32(8 + json.length + header[name].data_offsets[0] + 4 * index, value, true);
  set('wte.weight', 256 * C, 1);   // row 256 = e0
  set('ln_f.bias', 0, 1);          // the final norm's output = e0

  const chars = byteChars();
  const vocab = {};
  for (let b = 0; b < 256; ++b) vocab[chars[b]] = b;
  vocab[Array.from(new TextEncoder().encode(BOM_TOKEN_TEXT), (b) => chars[b]).join('')] = 256;
  return { config: JSON.stringify(config), weights, vocab: JSON.stringify(vocab), merges: '#version: 0.2\n' };
}

// loadModel: the API's; tokenizerFiles: a model with GPT-2's tokenizer; cases: cases.json's
// `ordinary` list. Returns {mismatches: [...], streamed, bomDetokenized} for the caller to assert on.
export async function textRoundTrip(loadModel, tokenizerFiles, cases, { worker }) {
  const out = { worker, mismatches: [] };
  const model = await loadModel(tokenizerFiles, { worker });
  for (const c of cases) {
    const back = await model.detokenize(c.ids);
    if (back !== c.text) out.mismatches.push({ name: c.name, text: c.text, back });
  }
  await model.dispose();

  const bom = await loadModel(bomModelFiles(), { worker });
  out.bomDetokenized = await bom.detokenize([256, 256]);
  out.streamed = [];
  for await (const step of bom.generate([65, 66], { maxTokens: 3, temperature: 0 })) out.streamed.push(step.text);
  await bom.dispose();
  return out;
}
