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
// 5. The Lowercase normalizer calls String.toLowerCase on the whole text (final sigma: a word-final
//    Σ becomes ς); the library lowercases each character alone (normalizer.rs lowercase:
//    char::to_lowercase), so Σ is always σ.
// 6. The Strip normalizer trims JavaScript whitespace (U+FEFF yes, U+0085 no); the library strips
//    char::is_whitespace, Unicode White_Space (normalizers/strip.rs).
// 7. WhitespaceSplit matches \S+ (JavaScript \s); the library splits on char::is_whitespace
//    (pre_tokenizers/whitespace.rs).
// 8. Digits matches \d, ASCII digits only under the u flag; the library's is char::is_numeric,
//    General_Category N (pre_tokenizers/digits.rs), isolated or in runs.
// 9. Punctuation always keeps runs together; the library splits each punctuation character as
//    its `behavior` says, Isolated by default (pre_tokenizers/punctuation.rs).
// 10. Split implements only Isolated and Removed, and with invert keeps the matches alone; the
//    library runs every behavior over the pattern's matches (or, inverted, over the text between
//    them): NormalizedString::split in tokenizer/normalizer.rs.
// 11. After splitting out added tokens, the port also takes any whole section equal to an added
//    token's text as that token, so a normalizer that turns "<|ENDOFTEXT|>" into "<|endoftext|>"
//    makes a non-normalized special token appear; the library matches non-normalized tokens on
//    the raw text and normalized ones on the normalized text only (tokenizer/added_vocabulary.rs,
//    its two tries). Only a file with a normalizer can tell the two apart.
// 12. Whitespace matches /\w+|[^\w\s]+/g, JavaScript's ASCII \w; the library uses the Rust regex
//    crate's \w+|[^\w\s]+ (pre_tokenizers/whitespace.rs, matches kept, the rest removed), whose
//    Unicode \w is UTS #18's word class: Alphabetic, M, Nd, Pc, Join_Control (regex-syntax's
//    perl_word table), and \s is White_Space.
const CORRECTIONS = [
  "ByteLevel pre-tokenizer: GPT-2's regex with \\s as \\p{White_Space} (Oniguruma's \\s), not JavaScript's \\s",
  'Metaspace pre-tokenizer: split (default true) cuts with MergedWithNext on the replacement',
  'Metaspace decoder: every replacement in the first token dropped unless prepend_scheme is "never"',
  'ByteFallback decoder: U+FEFF kept; a run of byte tokens that is not UTF-8 is one U+FFFD per token',
  'Lowercase normalizer: each character lowercased alone (no final sigma)',
  'Strip normalizer: Unicode White_Space, not JavaScript trim',
  'WhitespaceSplit pre-tokenizer: split on Unicode White_Space, not JavaScript \\s',
  'Digits pre-tokenizer: \\p{N} (char::is_numeric), not ASCII \\d',
  'Punctuation pre-tokenizer: each punctuation character split by the behavior (default Isolated)',
  'Split pre-tokenizer: every behavior and invert as NormalizedString::split',
  'added tokens: only what the added-token matchers matched is an added token',
  "Whitespace pre-tokenizer: \\w+|[^\\w\\s]+ with the regex crate's Unicode \\w and \\s, not JavaScript's ASCII \\w",
];
const WORD = String.raw`\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}`;
const WHITESPACE_REGEX = new RegExp(`[${WORD}]+|[^${WORD}\\p{White_Space}]+`, 'gu');
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
  const corrected = CORRECTIONS.map(() => false);
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
  // Components replaced by the library's semantics, each paired with its config in file order.
  const replace = (root, jsonRoot, className, type, index, method, make) => {
    const configs = configsOfType(jsonRoot, type);
    const instances = instancesOf(root, className);
    check(instances.length === configs.length, `the ${type} components of the port and of the file do not pair up`);
    instances.forEach((x, i) => {
      x[method] = make(configs[i], x);
      corrected[index] = true;
    });
  };
  replace(
    tok.normalizer,
    json.normalizer,
    'Lowercase',
    'Lowercase',
    4,
    'normalize',
    () => (t) => [...t].map((c) => c.toLowerCase()).join(''),
  );
  replace(tok.normalizer, json.normalizer, 'Strip', 'Strip', 5, 'normalize', (c) => (t) => {
    if (c.strip_left ?? true) t = t.replace(/^\p{White_Space}+/u, '');
    if (c.strip_right ?? true) t = t.replace(/\p{White_Space}+$/u, '');
    return t;
  });
  replace(
    tok.pre_tokenizer,
    json.pre_tokenizer,
    'WhitespaceSplit',
    'WhitespaceSplit',
    6,
    'pre_tokenize_text',
    () => (t) => splitBy(t, charMatches(t, /\p{White_Space}/u), 'Removed'),
  );
  replace(
    tok.pre_tokenizer,
    json.pre_tokenizer,
    'Digits',
    'Digits',
    7,
    'pre_tokenize_text',
    (c) => (t) => splitBy(t, charMatches(t, /\p{N}/u), c.individual_digits ? 'Isolated' : 'Contiguous'),
  );
  replace(
    tok.pre_tokenizer,
    json.pre_tokenizer,
    'Punctuation',
    'Punctuation',
    8,
    'pre_tokenize_text',
    (c) => (t) => splitBy(t, charMatches(t, PUNCTUATION), c.behavior ?? 'Isolated'),
  );
  replace(tok.pre_tokenizer, json.pre_tokenizer, 'Split', 'Split', 9, 'pre_tokenize_text', (c, x) => {
    const pattern =
      c.pattern.String !== undefined
        ? new RegExp(c.pattern.String.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu')
        : x.pattern;
    return (t) => splitBy(t, regexMatches(t, pattern), c.behavior, c.invert ?? false);
  });
  replace(
    tok.pre_tokenizer,
    json.pre_tokenizer,
    'Whitespace',
    'Whitespace',
    11,
    'pre_tokenize_text',
    () => (t) => t.match(WHITESPACE_REGEX) ?? [],
  );
  markAddedTokenMatches(tok);
  corrected[10] = json.normalizer !== null && json.normalizer !== undefined;
  return CORRECTIONS.filter((_, i) => corrected[i]);
}

// Correction 11: the added-token matchers return their tokens as String objects, and the map the
// port consults knows only those, so a section that merely equals a token's text stays text.
// (The port trims a token's neighbours for lstrip/rstrip: a neighbouring token stays a token.)
class AddedMatch extends String {
  trimStart() {
    const t = super.trimStart();
    return t.length === this.length ? this : t;
  }
  trimEnd() {
    const t = super.trimEnd();
    return t.length === this.length ? this : t;
  }
}
class MatchedOnly extends Map {
  has(key) {
    return typeof key === 'object' && super.has(String(key));
  }
  get(key) {
    return typeof key === 'object' ? super.get(String(key)) : undefined;
  }
}
function markAddedTokenMatches(tok) {
  for (const key of ['splitter_unnormalized', 'splitter_normalized']) {
    const visit = (node) => {
      for (const k of Object.keys(node)) {
        if (k === 'end') node.end = typeof node.end === 'object' ? node.end : new AddedMatch(node.end);
        else visit(node[k]);
      }
    };
    check(tok[key]?.trie, `the port's ${key} has no trie: review markAddedTokenMatches()`);
    visit(tok[key].trie);
  }
  if (!(tok.added_tokens_map instanceof MatchedOnly)) tok.added_tokens_map = new MatchedOnly(tok.added_tokens_map);
}

// tokenizers' is_punc: char::is_ascii_punctuation or General_Category P.
const PUNCTUATION = /[\p{P}\u0021-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u007E]/u;
// Each code point `test` accepts, as a match of its own: [start, end) in UTF-16 code units.
function charMatches(text, test) {
  const out = [];
  let i = 0;
  for (const c of text) {
    if (test.test(c)) out.push([i, i + c.length]);
    i += c.length;
  }
  return out;
}
function regexMatches(text, pattern) {
  const global = pattern.flags.includes('g') ? pattern : new RegExp(pattern.source, pattern.flags + 'g');
  return [...text.matchAll(global)].filter((m) => m[0].length > 0).map((m) => [m.index, m.index + m[0].length]);
}
// NormalizedString::split (tokenizer/normalizer.rs): the text as alternating gaps and matches
// (inverted: the gaps are the matches), folded by the behavior, removed and empty pieces dropped.
function splitBy(text, matches, behavior, invert = false) {
  const spans = [];
  let prev = 0;
  for (const [s, e] of matches) {
    if (s > prev) spans.push([prev, s, false]);
    spans.push([s, e, true]);
    prev = e;
  }
  if (prev < text.length || text.length === 0) spans.push([prev, text.length, false]);
  if (invert) for (const span of spans) span[2] = !span[2];
  let pieces = []; // [start, end, removed]
  let previous = false;
  switch (behavior) {
    case 'Isolated':
      pieces = spans.map(([s, e]) => [s, e, false]);
      break;
    case 'Removed':
      pieces = spans;
      break;
    case 'Contiguous':
      for (const [s, e, m] of spans) {
        if (m === previous && pieces.length > 0) pieces[pieces.length - 1][1] = e;
        else pieces.push([s, e, false]);
        previous = m;
      }
      break;
    case 'MergedWithPrevious':
      for (const [s, e, m] of spans) {
        if (m && !previous && pieces.length > 0) pieces[pieces.length - 1][1] = e;
        else pieces.push([s, e, false]);
        previous = m;
      }
      break;
    case 'MergedWithNext':
      for (const [s, e, m] of [...spans].reverse()) {
        if (m && !previous && pieces.length > 0) pieces[pieces.length - 1][0] = s;
        else pieces.push([s, e, false]);
        previous = m;
      }
      pieces.reverse();
      break;
    default:
      throw new Error(`tokenizer_json_oracle: unknown Split behavior ${behavior}`);
  }
  return pieces.filter(([s, e, removed]) => !removed && e > s).map(([s, e]) => text.slice(s, e));
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
  markAddedTokenMatches(tok);
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
  return { ids: e.ids, pieces: e.tokens.map(String) }; // added tokens come as String objects (correction 11)
}
export function decode(tok, ids) {
  // The JS port refuses an empty list; the library decodes it to "".
  return ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
}
