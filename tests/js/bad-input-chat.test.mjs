// The bad-input table (docs/bad-input.md), JS API column, rows of chat templates, messages and
// generation_config.json (C1-C10): each bad input rejects with the row's error class and message,
// in this thread and in a worker. The models: a one-block Llama (instruct-models.mjs) with the
// byte-level tokenizer.json fixture and the row's tokenizer_config.json.
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { expectReject } from './bad-input-table.mjs';
import { chainModel, idCount, repo, tokenizerFixture } from './instruct-models.mjs';

const { tokenizerJson } = tokenizerFixture('bytelevel-template-tiny');
const weights = chainModel(idCount(tokenizerJson), []);
const mistral = JSON.parse(
  readFileSync(new URL('tests/fixtures/chat/mistral-7b-instruct-v0.1.json', repo), 'utf8'),
).template;

// A model's files with this tokenizer_config.json (and more files).
const files = (tokenizerConfig, more = {}) => ({
  config: weights.config,
  weights: weights.weights,
  tokenizerJson,
  tokenizerConfig: JSON.stringify(tokenizerConfig),
  ...more,
});
const twoUserTurns = [
  { role: 'user', content: 'a' },
  { role: 'user', content: 'b' },
];
const toolTurn = [
  { role: 'user', content: 'a' },
  { role: 'tool', content: 'b' },
];

async function drain(generation) {
  for await (const _ of generation);
}

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';

  test(`${where}: C1, C3, C4, C7, C8, C9: what a template refuses, malformed messages and options`, async () => {
    const model = await loadModel(files({ chat_template: mistral, bos_token: '<s>' }), { worker });
    await expectReject('C1', model.applyChatTemplate(twoUserTurns));
    await expectReject('C1', drain(model.chat(twoUserTurns)));
    await expectReject('C3', model.applyChatTemplate(toolTurn));
    await expectReject('C4', model.applyChatTemplate({ role: 'user', content: 'a' }));
    await expectReject('C7', model.applyChatTemplate(toolTurn, { templateVars: [1, 2] }));
    await expectReject('C8', model.applyChatTemplate(toolTurn, { date: '2025-02-30' }));
    await expectReject('C9', drain(model.generate([1, 2], { repetitionPenalty: 0 })));
    await expectReject('C9', drain(model.chat([{ role: 'user', content: 'a' }], { repetitionPenalty: 0 })));
    await model.dispose();
  });

  test(`${where}: C2, C5, C10: a template with a syntax error, none, a list without "default"`, async () => {
    // A template that cannot be used does not stop the load: the model runs, its template says why.
    let model = await loadModel(files({ chat_template: '{% for m in messages %}\n{{ m.content + }}\n{% endfor %}' }), {
      worker,
    });
    await expectReject('C2', model.applyChatTemplate(twoUserTurns));
    await model.dispose();
    model = await loadModel(files({ bos_token: '<s>' }), { worker });
    await expectReject('C5', model.applyChatTemplate(twoUserTurns));
    await expectReject('C5', drain(model.chat(twoUserTurns)));
    await model.dispose();
    model = await loadModel(files({ chat_template: [{ name: 'tool_use', template: 'x' }] }), { worker });
    await expectReject('C10', model.applyChatTemplate(twoUserTurns));
    await model.dispose();
  });

  test(`${where}: C6: generation_config.json with a value of the wrong type`, async () => {
    await expectReject(
      'C6',
      loadModel(files({}, { generationConfig: JSON.stringify({ temperature: 'hot' }) }), { worker }),
    );
  });
}
