// The oracle of scripts/make_tokenizer_json_fixtures.mjs: npm @huggingface/tokenizers (the
// JavaScript port of Hugging Face's tokenizers library), corrected where it is known to differ
// from the library, and run in the modes glassbox names (ordinary, allow_special, add_special).

import { Tokenizer } from '@huggingface/tokenizers';

function check(condition, message) {
  if (!condition) throw new Error(`tokenizer_json_oracle: ${message}`);
}

// The oracle with corrections where the JS port is known to differ from the tokenizers library
// (each read from the library's Rust source; the first is also checked against tiktoken below):
// 1. ByteLevel's pre-tokenizer writes GPT-2's regex as a JavaScript literal, whose \s adds U+FEFF
//    and misses U+0085; the library compiles it with Oniguruma, whose \s is Unicode White_Space
//    (as the port's own translation of Split patterns has it).
// 2. The Metaspace pre-tokenizer ignores "split"; the library (split true, its default) cuts the
//    text with SplitDelimiterBehavior::MergedWithNext on the replacement character
//    (tokenizers/src/tokenizer/normalizer.rs: a run of delimiters gives each its own piece but
//    the last, which joins the text after it).
// 3. The Metaspace decoder drops only a leading replacement of the first token; the library
//    drops every replacement character of the first token unless prepend_scheme is "never", and
//    turns the others into spaces.
// 4. The ByteFallback decoder decodes a run of byte tokens with a default TextDecoder, which drops
//    a leading U+FEFF (BOM) and replaces each ill-formed subsequence; the library
//    (tokenizers/src/decoders/byte_fallback.rs) keeps U+FEFF (String::from_utf8) and, when the
//    run is not UTF-8, gives one U+FFFD per byte token.
const CORRECTIONS = [
  "ByteLevel pre-tokenizer: GPT-2's regex with \\s as \\p{White_Space} (Oniguruma's \\s), not JavaScript's \\s",
  'Metaspace pre-tokenizer: split (default true) cuts with MergedWithNext on the replacement',
  'Metaspace decoder: every replacement in the first token dropped unless prepend_scheme is "never"',
  'ByteFallback decoder: U+FEFF kept; a run of byte tokens that is not UTF-8 is one U+FFFD per token',
];
const JS_BYTE_LEVEL_REGEX = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
const BYTE_LEVEL_REGEX =
  /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu;

// SplitDelimiterBehavior::MergedWithNext on one character, as normalizer.rs folds its matches.
function splitMergedWithNext(text, delimiter) {
  const pieces = []; // [start, end, isMatch] in code units
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== delimiter) continue;
    if (i > start) pieces.push([start, i, false]);
    pieces.push([i, i + 1, true]);
    start = i + 1;
  }
  if (start < text.length) pieces.push([start, text.length, false]);
  const out = [];
  let previousMatch = false;
  for (const [s, e, isMatch] of pieces.reverse()) {
    if (isMatch && !previousMatch && out.length > 0) out[out.length - 1][0] = s;
    else out.push([s, e]);
    previousMatch = isMatch;
  }
  return out.reverse().map(([s, e]) => text.slice(s, e));
}

// Configs of one component type anywhere in a pipeline's JSON, in document order.
function configsOfType(json, type) {
  if (json === null || typeof json !== 'object') return [];
  const own = json.type === type ? [json] : [];
  return [...own, ...Object.values(json).flatMap((v) => configsOfType(v, type))];
}
// Component objects of the port (callables, so functions too) whose class has this name.
function instancesOf(root, className) {
  const seen = new Set();
  const found = [];
  const visit = (obj) => {
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function') || seen.has(obj)) return;
    seen.add(obj);
    if (obj.constructor?.name === className) found.push(obj);
    for (const v of Object.values(obj)) visit(v);
  };
  visit(root);
  return found;
}

export function correctOracle(tok, json) {
  let corrected = [false, false, false, false];
  const byteLevel = instancesOf(tok.pre_tokenizer, 'ByteLevel');
  check(
    byteLevel.length === configsOfType(json.pre_tokenizer, 'ByteLevel').length,
    'the ByteLevel pre-tokenizers of the port and of the file do not pair up',
  );
  for (const b of byteLevel) {
    check(
      b.pattern instanceof RegExp && b.pattern.source === JS_BYTE_LEVEL_REGEX,
      `the port's ByteLevel regex changed`,
    );
    if (b.use_regex) {
      b.pattern = BYTE_LEVEL_REGEX;
      corrected[0] = true;
    }
  }
  const metaspaceConfigs = configsOfType(json.pre_tokenizer, 'Metaspace');
  const metaspace = instancesOf(tok.pre_tokenizer, 'Metaspace');
  check(metaspace.length === metaspaceConfigs.length, 'the Metaspace pre-tokenizers do not pair up');
  metaspace.forEach((m, i) => {
    if (metaspaceConfigs[i].split === false) return;
    const original = m.pre_tokenize_text;
    m.pre_tokenize_text = function (text, options) {
      return original.call(this, text, options).flatMap((t) => splitMergedWithNext(t, this.replacement));
    };
    corrected[1] = true;
  });
  const decoderConfigs = configsOfType(json.decoder, 'Metaspace');
  const decoders = instancesOf(tok.decoder, 'Metaspace2');
  check(decoders.length === decoderConfigs.length, 'the Metaspace decoders do not pair up');
  decoders.forEach((d, i) => {
    const dropFirst = (decoderConfigs[i].prepend_scheme ?? 'always') !== 'never';
    d.decode_chain = function (tokens) {
      return tokens.map((t, k) =>
        [...t].map((c) => (c !== this.replacement ? c : k === 0 && dropFirst ? '' : ' ')).join(''),
      );
    };
    corrected[2] = true;
  });
  for (const d of instancesOf(tok.decoder, 'ByteFallback')) {
    d.decode_chain = byteFallbackDecodeChain;
    corrected[3] = true;
  }
  return CORRECTIONS.filter((_, i) => corrected[i]);
}

// byte_fallback.rs's decode_chain.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function byteFallbackDecodeChain(tokens) {
  const out = [];
  let bytes = [];
  const flush = () => {
    if (bytes.length === 0) return;
    try {
      out.push(STRICT_UTF8.decode(Uint8Array.from(bytes)));
    } catch {
      for (let i = 0; i < bytes.length; i++) out.push('\uFFFD');
    }
    bytes = [];
  };
  for (const t of tokens) {
    const byte = t.length === 6 && t.startsWith('<0x') && t.endsWith('>') ? parseInt(t.slice(3, 5), 16) : NaN;
    if (!Number.isNaN(byte)) {
      bytes.push(byte);
      continue;
    }
    flush();
    out.push(t);
  }
  flush();
  return out;
}

// The same tokenizer with special added tokens left unmatched (encode_special_tokens = true in
// the Rust library: its AddedVocabulary skips special tokens when it splits the text; non-special
// added tokens are still matched). The JS port keeps the matchers in two splitters and a map.
export function ordinaryTokenizer(json, config) {
  const tok = new Tokenizer(json, config);
  for (const field of [
    'splitter_unnormalized',
    'splitter_normalized',
    'added_tokens_map',
    'added_tokens',
    'normalizer',
  ]) {
    check(field in tok, `the port has no Tokenizer.${field}: review ordinaryTokenizer()`);
  }
  const Splitter = tok.splitter_unnormalized.constructor;
  const unnormalized = [];
  const normalized = [];
  for (const t of tok.added_tokens) {
    if (t.special) continue;
    if (t.normalized && tok.normalizer !== null) normalized.push(tok.normalizer(t.content));
    else unnormalized.push(t.content);
  }
  correctOracle(tok, json);
  tok.splitter_unnormalized = new Splitter(unnormalized);
  tok.splitter_normalized = new Splitter(normalized);
  for (const [key, t] of [...tok.added_tokens_map]) if (t.special) tok.added_tokens_map.delete(key);
  return tok;
}

export function encode(tok, text, addSpecial, what) {
  let e;
  try {
    e = tok.encode(text, { add_special_tokens: addSpecial });
  } catch (err) {
    throw new Error(`${what}: the oracle threw ${err}`);
  }
  check(
    e.ids.every((id) => Number.isInteger(id)),
    `${what}: the oracle gave a token with no id: ${JSON.stringify(e.tokens)}`,
  );
  return { ids: e.ids, pieces: e.tokens };
}
export function decode(tok, ids) {
  // The JS port refuses an empty list; the library decodes it to "".
  return ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
}
