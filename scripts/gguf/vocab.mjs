// A model directory's tokenizer as llama.cpp's "gpt2" (byte-level BPE) vocabulary: the tokens by
// id, their types, the merges as "left right" strings, the pre-tokenizer's name, and the special
// ids. From vocab.json + merges.txt (GPT-2) or tokenizer.json (byte-level BPE); a directory with
// neither gets a placeholder vocabulary: the 256 byte tokens of GPT-2's byte-level alphabet, then
// named placeholders, no merges. llama.cpp's "none" vocabulary would be the plain statement of
// "no tokenizer", but its library still tokenizes when a context is made and aborts on it; the
// placeholder lets it run the model on token ids.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { T } from './container.mjs';

// llama.cpp's token types (llama_token_type).
const NORMAL = 1,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5;

// The pre-tokenizer names llama.cpp knows (llama-vocab.cpp), chosen by the split regex the file carries.
function preTokenizerName(modelType, tokenizerJson) {
  if (!tokenizerJson) return 'gpt-2';
  const text = JSON.stringify(tokenizerJson.pre_tokenizer ?? null);
  if (text.includes('\\\\p{N}{1,3}')) return 'llama-bpe';
  if (modelType === 'qwen2' || modelType === 'qwen3') return 'qwen2';
  if (text.includes("'s|'t|'re|'ve|'m|'ll|'d")) return 'gpt-2';
  return 'default';
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
}

// -> { tokens, types, merges, pre } or null when the directory has no tokenizer files.
function readTokenizer(dir, modelType) {
  const tj = join(dir, 'tokenizer.json');
  const vj = join(dir, 'vocab.json');
  const mt = join(dir, 'merges.txt');
  let vocab,
    merges,
    added = [],
    json = null;
  if (existsSync(vj) && existsSync(mt)) {
    vocab = readJson(vj);
    merges = readFileSync(mt, 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#version'));
    // GPT-2's only special token: its end of text, a control token.
    if ('<|endoftext|>' in vocab) added.push({ content: '<|endoftext|>', id: vocab['<|endoftext|>'], special: true });
  } else if (existsSync(tj)) {
    json = readJson(tj);
    const model = json.model ?? {};
    if (model.type !== 'BPE' || !JSON.stringify(json.pre_tokenizer ?? json.decoder ?? '').includes('ByteLevel')) {
      throw new Error(
        `${tj}: only byte-level BPE tokenizers can be written (this one is ${model.type ?? 'unknown'}); use --no-tokenizer to write the model without one`,
      );
    }
    vocab = model.vocab;
    merges = (model.merges ?? []).map((m) => (Array.isArray(m) ? m.join(' ') : m));
    added = json.added_tokens ?? [];
  } else return null;
  const byId = new Map();
  for (const [text, id] of Object.entries(vocab)) byId.set(id, { text, type: NORMAL });
  for (const a of added) byId.set(a.id, { text: a.content, type: a.special ? CONTROL : USER_DEFINED });
  return { byId, merges, pre: preTokenizerName(modelType, json) };
}

// GPT-2's byte-level alphabet: bytes that print as themselves keep their character, the others map
// to U+0100 and up, in byte order.
function byteAlphabet() {
  const printable = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(printable(b) ? b : next++));
  return out;
}

function placeholder(nVocab) {
  const byId = new Map();
  const bytes = byteAlphabet();
  for (let i = 0; i < nVocab; i++) byId.set(i, { text: i < 256 ? bytes[i] : `<|placeholder_${i}|>`, type: NORMAL });
  return { byId, merges: [], pre: 'gpt-2' };
}

function specialId(config, key) {
  const v = config[key];
  if (Array.isArray(v)) return v.length ? v[0] : undefined;
  return typeof v === 'number' ? v : undefined;
}

// Metadata entries for the vocabulary; nVocab is the embedding's row count (the token list is
// padded to it with unused tokens, as llama.cpp's converter does).
export function vocabMetadata(dir, config, arch, nVocab, { noTokenizer = false } = {}) {
  const meta = [{ key: `${arch}.vocab_size`, type: T.UINT32, value: nVocab }];
  const tok = (!noTokenizer && readTokenizer(dir, config.model_type)) || placeholder(nVocab);
  const tokens = [],
    types = [];
  for (let i = 0; i < nVocab; i++) {
    const t = tok.byId.get(i);
    tokens.push(t ? t.text : `[PAD${i}]`);
    types.push(t ? t.type : UNUSED);
  }
  const beyond = [...tok.byId.keys()].filter((id) => id >= nVocab);
  if (beyond.length)
    throw new Error(`the tokenizer has ids up to ${Math.max(...beyond)} but the embedding has ${nVocab} rows`);
  meta.push(
    { key: 'tokenizer.ggml.model', type: T.STRING, value: 'gpt2' },
    { key: 'tokenizer.ggml.pre', type: T.STRING, value: tok.pre },
    { key: 'tokenizer.ggml.tokens', type: T.ARRAY, elem: T.STRING, value: tokens },
    { key: 'tokenizer.ggml.token_type', type: T.ARRAY, elem: T.INT32, value: types },
    { key: 'tokenizer.ggml.merges', type: T.ARRAY, elem: T.STRING, value: tok.merges },
  );
  const bos = specialId(config, 'bos_token_id');
  const eos = specialId(config, 'eos_token_id');
  if (bos !== undefined) meta.push({ key: 'tokenizer.ggml.bos_token_id', type: T.UINT32, value: bos });
  if (eos !== undefined) meta.push({ key: 'tokenizer.ggml.eos_token_id', type: T.UINT32, value: eos });
  // GPT-2 adds no BOS; Llama 3's post-processor does.
  meta.push({ key: 'tokenizer.ggml.add_bos_token', type: T.BOOL, value: tok.pre === 'llama-bpe' });
  return meta;
}
