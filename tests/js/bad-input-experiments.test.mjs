// The bad-input table (docs/bad-input.md), JS API column, rows of the interpretability experiments
// (E1-E9): each bad input rejects with the row's error class and message, in this thread and in a
// worker, and the model goes on working. gpt2-bytes: a tokenizer of one token per byte, 2 layers,
// an MLP 128 wide; llama-gqa: a model type without a backward pass; openai-gpt: a post-norm model.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { expectReject } from './bad-input-table.mjs';

const fixture = (name) => new URL(`../fixtures/${name}/`, import.meta.url);

async function drain(generation) {
  for await (const _ of generation);
}

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';

  test(`${where}: E1-E7: patching, steering and neurons refuse what the model cannot do`, async () => {
    const model = await loadModel(fixture('gpt2-bytes'), { worker });
    const ok = { clean: 'abcab', corrupted: 'abdab', answer: 'a', wrong: 'b' };
    const steer = (s) =>
      drain(model.generate('ab', { maxTokens: 2, steer: { layer: 0, coefficient: 1, plus: 'a', minus: 'b', ...s } }));
    await expectReject('E1', model.patch({ ...ok, corrupted: 'abdabx' }));
    await expectReject('E2', model.patch({ ...ok, answer: ' Mary' }));
    await expectReject('E2', model.attribute({ prompt: 'abc', answer: ' Mary' }));
    await expectReject('E3', steer({ layer: 2 }));
    await expectReject('E4', steer({ coefficient: 'strong' }));
    await expectReject('E5', model.forward([1, 2], { neuron: { layer: 1, index: 128 } }));
    await expectReject('E6', model.patch({ ...ok, what: ['resid_pre', 'heads'] }));
    await expectReject('E7', model.patch({ ...ok, corrupted: ok.clean }));
    // Nothing was left behind: patching runs, and generation steers.
    const { residPre } = await model.patch({ ...ok, what: ['resid_pre'] });
    assert.equal(residPre.length, 2);
    await steer({});
    await model.dispose();
  });

  test(`${where}: E8: saliency of a model without a backward pass`, async () => {
    const model = await loadModel(fixture('llama-gqa'), { worker });
    await expectReject('E8', model.forward([1, 2, 3], { saliency: true }));
    await model.dispose();
  });

  test(`${where}: E9: attribution of a post-norm model`, async () => {
    const model = await loadModel(fixture('openai-gpt'), { worker });
    await expectReject('E9', model.attribute({ prompt: [1, 2, 3], answer: 1, wrong: 2 }));
    await model.dispose();
  });
}
