// The bad-input table (docs/bad-input.md), JS API column of the tokenizer files' rows: vocab.json
// and merges.txt that are present but empty, cut short or inconsistent reach the same C++ checks
// the CLI's do, through loadModel (this thread and a worker) and the tokenizer entry.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';
import { expectReject } from './bad-input-table.mjs';

const shipped = new URL('../../web/models/brown-small/', import.meta.url);
const read = (file) => readFileSync(new URL(file, shipped));
const files = {
  config: read('config.json').toString(),
  weights: read('model.safetensors'),
  vocab: read('vocab.json').toString(),
  merges: read('merges.txt').toString(),
};
const vocab = JSON.parse(files.vocab);

// Each row's tokenizer files, as the C++ tests make them (tests/bad_input_cli_test.cpp).
const cases = [
  ['B35', { merges: '' }],
  ['B35', { merges: '#version: 0.2\n' }],
  // Cut at a line: every line is a good merge, and the second half's are missing.
  ['B36', { merges: files.merges.slice(0, files.merges.lastIndexOf('\n', files.merges.length >> 1) + 1) }],
  ['B37', { merges: `#version: 0.2\nq z\n${files.merges.slice(14)}` }],
  [
    'B38',
    (() => {
      const v = { ...vocab };
      const last = Object.keys(v).find((k) => v[k] === Object.keys(vocab).length - 1);
      v[last] = v.A;
      delete v.A;
      return { vocab: JSON.stringify(v), merges: '#version: 0.2\n' };
    })(),
  ],
  ['B39', { vocab: JSON.stringify({ ...vocab, A: vocab.B }) }],
  ['B40', { merges: `\u00e9\u0000${'a'.repeat(5_000_000)} b\n` }],
];

test('the tokenizer entry refuses each row as the CLI does', async () => {
  for (const [id, change] of cases)
    await expectReject(
      id,
      loadTokenizer({ vocab: change.vocab ?? files.vocab, merges: change.merges ?? files.merges }),
    );
});

for (const worker of [false, true]) {
  test(`loadModel refuses each row as the CLI does (${worker ? 'worker' : 'main thread'}), then loads the files`, async () => {
    for (const [id, change] of cases) await expectReject(id, loadModel({ ...files, ...change }, { worker }));
    const model = await loadModel(files, { worker });
    assert.deepEqual(await model.tokenize('The jury'), (await loadTokenizer(files)).tokenize('The jury'));
    await model.dispose();
  });
}

test('a 5 MB merges line is quoted in part: a short message of valid text without the NUL', async () => {
  await assert.rejects(loadTokenizer({ vocab: files.vocab, merges: cases.at(-1)[1].merges }), (e) => {
    assert.ok(e.message.length < 400, e.message.slice(0, 400));
    assert.ok(e.message.includes('(5000005 bytes)'), e.message);
    assert.ok(!e.message.includes('\u0000') && !e.message.includes('\ufffd'), e.message);
    return true;
  });
});
