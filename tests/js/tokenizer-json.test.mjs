// tokenizer.json in the JS API: the tokenizer entry and a model read from a directory, a files
// object or a worker give the ids of tests/fixtures/tokenizer-json/*/expected.json (made by
// scripts/make_tokenizer_json_fixtures.mjs from @huggingface/tokenizers), plain, with special
// tokens matched (allowSpecial), with the post-processor's tokens (addSpecial) and both; detokenize
// gives each text back, special tokens included. tokenizer.json is read where vocab.json and
// merges.txt are there too.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';
import {
  byteVocabFiles,
  chainModel,
  idCount,
  modelDirectory,
  tokenizerFixture,
  tokenizerFixtures,
} from './instruct-models.mjs';

// Every fixture: byte-level (GPT-2, Llama 3, Qwen3, GPT-NeoX), SentencePiece-style (Llama 2 /
// Mistral, Prepend+Replace, Metaspace) and the normalizer / pre-tokenizer ones.
const FIXTURES = readdirSync(tokenizerFixtures, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
assert.ok(FIXTURES.length >= 12, `${FIXTURES.length} fixtures`);

// Every case of a fixture through tokenize(text, options) (sync or async): the failures, as
// "case: got ... want ...", and how many cases were checked.
async function check(tokenize, detokenize, expected) {
  const bad = [];
  let checked = 0;
  const same = async (c, ids, got) => {
    checked++;
    if (JSON.stringify(await got) !== JSON.stringify(ids))
      bad.push(`${c.name}: ${JSON.stringify(await got).slice(0, 80)} want ${JSON.stringify(ids).slice(0, 80)}`);
  };
  for (const c of expected.ordinary) {
    await same(c, c.ids, tokenize(c.text));
    if (c.decode !== undefined && (await detokenize(c.ids)) !== c.decode) bad.push(`${c.name}: decode`);
  }
  for (const c of expected.add_special ?? []) await same(c, c.ids, tokenize(c.text, { addSpecial: true }));
  for (const c of expected.allow_special) {
    await same(c, c.ids, tokenize(c.text, { allowSpecial: true }));
    if (c.ids_add_special) await same(c, c.ids_add_special, tokenize(c.text, { allowSpecial: true, addSpecial: true }));
    if (c.decode !== undefined && (await detokenize(c.ids)) !== c.decode) bad.push(`${c.name}: decode`);
  }
  return { bad, checked };
}

for (const name of FIXTURES) {
  test(`the tokenizer entry reads ${name}'s tokenizer.json and gives the oracle's ids`, async () => {
    const { expected, tokenizerJson } = tokenizerFixture(name);
    const tokenizer = await loadTokenizer({ tokenizerJson });
    assert.equal(tokenizer.vocabSize, idCount(tokenizerJson));
    const { bad, checked } = await check(
      (text, options) => tokenizer.tokenize(text, options),
      (ids) => tokenizer.detokenize(ids),
      expected,
    );
    assert.ok(checked > 600, `${checked} cases`);
    assert.deepEqual(bad, []);
    tokenizer.dispose();
  });
}

test('a model directory with tokenizer.json tokenizes with it (this thread, a worker, the early tokenizer)', async () => {
  for (const name of ['bytelevel-template-tiny', 'qwen3', 'llama2']) {
    const { expected, tokenizerJson } = tokenizerFixture(name);
    const { config, weights } = chainModel(idCount(tokenizerJson), []);
    // vocab.json and merges.txt beside it give other ids: tokenizer.json must be the one read.
    const files = { 'config.json': config, 'model.safetensors': weights, 'tokenizer.json': tokenizerJson };
    const { dir, remove } = modelDirectory({ ...files, ...byteVocabFiles() });
    try {
      for (const worker of [false, true]) {
        let early = null;
        const model = await loadModel(dir, { worker, onTokenizer: (t) => (early = t) });
        assert.equal(model.hasTokenizer, true);
        assert.ok(early, 'onTokenizer was called');
        const { bad, checked } = await check(
          (text, options) => model.tokenize(text, options),
          (ids) => model.detokenize(ids),
          expected,
        );
        assert.ok(checked > 600, `${checked} cases`);
        assert.deepEqual(bad, [], `${name}, worker: ${worker}`);
        const text = expected.allow_special.at(-1).text;
        assert.deepEqual(await early.tokenize(text, { allowSpecial: true }), expected.allow_special.at(-1).ids);
        await model.dispose();
      }
      // The files themselves, tokenizer.json as "tokenizerJson".
      const model = await loadModel({ config, weights, tokenizerJson, ...byteVocabFiles() });
      assert.equal(model.hasTokenizer, true);
      const c = expected.allow_special[0];
      assert.deepEqual(await model.tokenize(c.text, { allowSpecial: true }), c.ids);
      await model.dispose();
    } finally {
      remove();
    }
  }
});

test('tokenize options are checked: addSpecial must be a boolean', async () => {
  const { tokenizerJson } = tokenizerFixture('bytelevel-template-tiny');
  const { config, weights } = chainModel(idCount(tokenizerJson), []);
  for (const worker of [false, true]) {
    const model = await loadModel({ config, weights, tokenizerJson }, { worker });
    await assert.rejects(model.tokenize('a', { addSpecial: 1 }), (e) => {
      assert.equal(e.name, 'InvalidArgumentError');
      assert.match(e.message, /addSpecial/);
      return true;
    });
    await model.dispose();
  }
});

test('a bad tokenizer.json is a ModelFormatError naming the file and the problem, in both threads', async () => {
  const { tokenizerJson } = tokenizerFixture('bytelevel-template-tiny');
  const { config, weights } = chainModel(idCount(tokenizerJson), []);
  const good = JSON.parse(tokenizerJson);
  const rows = [
    [
      'a merge naming an unknown token',
      { ...good, model: { ...good.model, merges: ['Ġ zzzq'] } },
      /names "zzzq", which is not in model\.vocab/,
    ],
    [
      'an unknown normalizer type',
      { ...good, normalizer: { type: 'Frobnicate' } },
      /unknown normalizer type "Frobnicate"/,
    ],
    [
      'an unknown pre-tokenizer type',
      { ...good, pre_tokenizer: { type: 'Frobnicate' } },
      /unknown pre_tokenizer type "Frobnicate"/,
    ],
    ['a model that is not BPE', { ...good, model: { ...good.model, type: 'WordPiece' } }, /model type "WordPiece"/],
  ];
  for (const worker of [false, true])
    for (const [what, json, message] of rows) {
      const files = { config, weights, tokenizerJson: JSON.stringify(json) };
      await assert.rejects(loadModel(files, { worker }), (e) => {
        assert.equal(e.name, 'ModelFormatError', `${what}: ${e.message}`);
        assert.match(e.message, /^tokenizer\.json: /, what);
        assert.match(e.message, message, what);
        return true;
      });
    }
});

test('a tokenizer.json that is not one is a ModelFormatError naming the file', async () => {
  const { config, weights } = chainModel(300, []);
  for (const worker of [false, true])
    await assert.rejects(
      loadModel({ config, weights, tokenizerJson: '{"model": {"type": "WordPiece"}}' }, { worker }),
      (e) => {
        assert.equal(e.name, 'ModelFormatError');
        assert.match(e.message, /tokenizer\.json/);
        return true;
      },
    );
  await assert.rejects(loadTokenizer({ tokenizerJson: 'not json' }), (e) => {
    assert.equal(e.name, 'ModelFormatError');
    assert.match(e.message, /tokenizer\.json/);
    return true;
  });
});

test('a directory URL: tokenizer.json downloads with the rest; the optional files a server refuses or drops are absent', async () => {
  const { createServer } = await import('node:http');
  const { expected, tokenizerJson } = tokenizerFixture('bytelevel-template-tiny');
  const { config, weights } = chainModel(idCount(tokenizerJson), []);
  const files = { 'config.json': config, 'model.safetensors': weights, 'tokenizer.json': tokenizerJson };
  // /refusing/: tokenizer_config.json 403, chat_template.jinja a dropped connection,
  // generation_config.json 401; /plain/: 404 for every file it lacks.
  const server = createServer((req, res) => {
    const [mode, name] = req.url.split('/').slice(-2);
    if (mode === 'refusing' && name === 'tokenizer_config.json') return res.writeHead(403).end();
    if (mode === 'refusing' && name === 'generation_config.json') return res.writeHead(401).end();
    if (mode === 'refusing' && name === 'chat_template.jinja') return res.socket.destroy();
    if (!Object.hasOwn(files, name)) return res.writeHead(404).end();
    res.writeHead(200).end(files[name]);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const c = expected.allow_special.at(-1);
    for (const mode of ['plain', 'refusing'])
      for (const worker of [false, true]) {
        const model = await loadModel(`${base}/${mode}/`, { worker });
        assert.equal(model.hasTokenizer, true);
        assert.equal(model.hasChatTemplate, false);
        assert.deepEqual(await model.tokenize(c.text, { allowSpecial: true }), c.ids, `${mode}, worker: ${worker}`);
        await model.dispose();
        const tokenizer = await loadTokenizer(`${base}/${mode}/`);
        assert.deepEqual(tokenizer.tokenize(c.text, { allowSpecial: true }), c.ids);
        tokenizer.dispose();
      }
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
