// The tokenizer entry (glassbox/tokenizer, its own module) gives the ids the engine gives: on
// tiktoken's GPT-2 cases (tests/fixtures/tokenizer/cases.json) and, against model.tokenize of the
// shipped model (its own vocabulary), on a long text of every kind of piece: the two modules
// compile the same C++ with the same flags, and must stay byte-exact with each other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';

const fixtures = new URL('../fixtures/', import.meta.url);
const shipped = fileURLToPath(new URL('../../web/models/brown-small/', import.meta.url));

test("the entry's ids are tiktoken's on every GPT-2 case, plain and with special tokens", async () => {
  const cases = JSON.parse(readFileSync(new URL('tokenizer/cases.json', fixtures), 'utf8'));
  const tokenizer = await loadTokenizer(fileURLToPath(new URL('tokenizer/gpt2/', fixtures)));
  assert.ok(cases.ordinary.length > 500 && cases.allow_special.length > 10, 'the cases were read');
  for (const c of cases.ordinary) assert.deepEqual(tokenizer.tokenize(c.text), c.ids, c.name);
  for (const c of cases.allow_special)
    assert.deepEqual(tokenizer.tokenize(c.text, { allowSpecial: true }), c.ids, c.name);
  tokenizer.dispose();
});

test("the entry's ids are model.tokenize's on 2 MB of mixed text (this thread and a worker)", async () => {
  const brown = readFileSync(new URL('../../web/samples/brown-news.txt', import.meta.url), 'utf8');
  // English, then pieces the pre-tokenizer splits in every way: runs of spaces and newlines,
  // digits, contractions, accents, CJK, emoji (4-byte UTF-8), a 300-letter word (the heap merge).
  const mixed = [
    brown,
    "  they'll   won't\n\n\t  12345 67 ",
    'naïve café Ünïcödé ',
    '漢字かな交じり文 ',
    '👩‍👩‍👧‍👦🎉 ',
    'a'.repeat(300),
    ' <|endoftext|> ',
  ].join('');
  let text = '';
  while (text.length < 2e6) text += mixed;
  const tokenizer = await loadTokenizer(shipped);
  const ids = tokenizer.tokenize(text);
  assert.ok(ids.length > 1e5, `${ids.length} ids`);
  for (const worker of [false, true]) {
    const model = await loadModel(shipped, { worker });
    assert.deepEqual(ids, await model.tokenize(text), `worker: ${worker}`);
    assert.deepEqual(
      tokenizer.tokenize(mixed, { allowSpecial: true }),
      await model.tokenize(mixed, { allowSpecial: true }),
      `worker: ${worker}, allowSpecial`,
    );
    assert.equal(tokenizer.detokenize(ids.slice(0, 5000)), await model.detokenize(ids.slice(0, 5000)));
    await model.dispose();
  }
  tokenizer.dispose();
});
