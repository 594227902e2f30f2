// The page with an instruct model (its files carry a chat template), in headless Chromium by
// accessible names: the Prompt box becomes the next message of a conversation with a System prompt,
// the tokens are the conversation as the template renders it (python3-jinja2's bytes, read by
// @huggingface/tokenizers with its special tokens), Generate streams the reply, which joins the
// list "Conversation", and the next message is read after it; a template that refuses the
// conversation says why under the prompt. The model: a llama fixture of tests/fixtures (random
// weights) with its vocabulary widened to the byte-level tokenizer.json fixture's, which the page
// opens from files with a Llama 3 chat template.
//
//   node --test tests/page/chat.test.mjs
//
// Screenshot: build/page-chat-1280.png.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Tokenizer } from '@huggingface/tokenizers';

import { readTensors, safetensors } from '../js/safetensors-files.mjs';
import { arm, generate, pageSuite, root, settled, setSampling, waitReady } from './harness.mjs';

const suite = pageSuite();
const dir = mkdtempSync(join(tmpdir(), 'glassbox-page-chat-'));
before(() => suite.start());
after(() => {
  rmSync(dir, { recursive: true, force: true });
  return suite.stop();
});

const fixtures = join(root, 'tests/fixtures');
const tokenizerJson = readFileSync(join(fixtures, 'tokenizer-json/bytelevel-template-tiny/tokenizer.json'), 'utf8');
const chat = JSON.parse(readFileSync(join(fixtures, 'chat/llama3.json'), 'utf8')); // cases rendered by python3-jinja2
// A template that refuses one system prompt, before Llama 3's own (which renders as before: the
// refusal's block leaves no text behind).
const REFUSAL =
  "{% if messages[0]['content'] == 'forbidden' %}{{ raise_exception('No forbidden system prompts.') }}{% endif %}";
const tokenizerConfig = {
  bos_token: chat.bos_token,
  eos_token: chat.eos_token,
  chat_template: REFUSAL + chat.template,
};

// The oracle's ids of a rendered conversation: special tokens in it read as such, nothing added
// (transformers' apply_chat_template(tokenize=True)).
const oracle = new Tokenizer(JSON.parse(tokenizerJson), tokenizerConfig);
const oracleIds = (text) => oracle.encode(text, { add_special_tokens: false }).ids;

// The model's sampling settings, which the page's inputs take.
const GENERATION_CONFIG = { do_sample: true, temperature: 0.6, top_k: 20, top_p: 0.9 };

// llama-gqa with as many embedding (and output) rows as the tokenizer has tokens: the rows past
// the fixture's repeat its rows.
function instructModel() {
  const vocabulary =
    Object.keys(JSON.parse(tokenizerJson).model.vocab).length + JSON.parse(tokenizerJson).added_tokens.length;
  const source = join(fixtures, 'llama-gqa');
  const config = JSON.parse(readFileSync(join(source, 'config.json'), 'utf8'));
  const tensors = readTensors(join(source, 'model.safetensors')).map((t) => {
    if (t.shape[0] !== config.vocab_size) return t;
    const row = t.bytes.length / t.shape[0];
    const bytes = Buffer.alloc(vocabulary * row);
    for (let i = 0; i < vocabulary; ++i)
      t.bytes.copy(bytes, i * row, (i % t.shape[0]) * row, ((i % t.shape[0]) + 1) * row);
    return { ...t, shape: [vocabulary, ...t.shape.slice(1)], bytes };
  });
  const ids = (content) => JSON.parse(tokenizerJson).added_tokens.find((t) => t.content === content).id;
  // (rotary positions: any context length; the conversation needs more than the fixture's 64)
  Object.assign(config, {
    max_position_embeddings: 512,
    vocab_size: vocabulary,
    bos_token_id: ids('<|begin_of_text|>'),
    eos_token_id: ids('<|eot_id|>'),
  });
  const files = {
    'config.json': JSON.stringify(config),
    'model.safetensors': safetensors(tensors),
    'tokenizer.json': tokenizerJson,
    'tokenizer_config.json': JSON.stringify(tokenizerConfig),
    'generation_config.json': JSON.stringify(GENERATION_CONFIG),
  };
  for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, name), data);
  return Object.keys(files).map((name) => join(dir, name));
}

const chipIds = (page, selector = '#tokens .chip') =>
  page.locator(selector).evaluateAll((cs) => cs.map((c) => Number(c.dataset.id)));
const caseNamed = (name, generationPrompt) =>
  chat.cases.find((c) => c.name === name && c.add_generation_prompt === generationPrompt);

let page;

test('an instruct model talks: the conversation as its template renders it, the reply streamed into it', async () => {
  ({ page } = await suite.openPage());
  await page.goto(suite.pageUrl());
  await waitReady(page);
  await page
    .getByRole('combobox', { name: 'Model', exact: true })
    .selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles(instructModel());
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /^local files: llama, .*a chat template \(it talks\);/);

  const system = page.getByRole('textbox', { name: 'System prompt', exact: true });
  const prompt = page.getByRole('textbox', { name: 'Prompt', exact: true });
  const turns = page.getByRole('list', { name: 'Conversation', exact: true });
  assert.equal(await system.isVisible(), true);
  assert.equal(await page.getByRole('checkbox', { name: /Read special tokens/ }).isDisabled(), true);
  // generation_config.json's sampling settings are in the inputs, and the page says whose they are.
  // (Top-k and Top-p are under the closed Advanced)
  const value = (id) => page.locator(`#${id}`).inputValue();
  assert.deepEqual([await value('temperature'), await value('top-k'), await value('top-p')], ['0.6', '20', '0.9']);
  assert.match(await page.locator('#sampling-source').textContent(), /the model's own \(its generation_config\.json\)/);
  assert.equal(await page.locator('#sampling-source').isVisible(), true);

  // One message: the tokens are python3-jinja2's rendering (with the assistant's header after it)
  // as the oracle reads it.
  const one = caseNamed('one turn', true);
  await prompt.fill(one.messages[0].content);
  await settled(page);
  const first = await chipIds(page);
  assert.deepEqual(first, oracleIds(one.expected));
  assert.equal(first[0], oracleIds('<|begin_of_text|>')[0], 'the template writes the BOS token');
  // Special tokens are shown, and named, as such: the BOS and each <|eot_id|>, nothing else.
  const specials = await page
    .locator('#tokens .chip.special')
    .evaluateAll((cs) => cs.map((c) => [Number(c.dataset.id), c.getAttribute('aria-label')]));
  const specialIds = new Set(
    JSON.parse(tokenizerJson)
      .added_tokens.filter((t) => t.special)
      .map((t) => t.id),
  );
  assert.deepEqual(
    specials.map(([id]) => id),
    first.filter((id) => specialIds.has(id)),
  );
  assert.ok(specials.length >= 2, `${specials.length} special tokens`);
  assert.match(specials[0][1], /^“<\|begin_of_text\|>”, id \d+, special token$/);

  // A system prompt and a message that hold text like other templates' special tokens.
  const withSystem = caseNamed('random 3', true);
  assert.deepEqual(
    withSystem.messages.map((m) => m.role),
    ['system', 'user'],
  );
  await system.fill(withSystem.messages[0].content);
  await prompt.fill(withSystem.messages[1].content);
  await settled(page);
  assert.deepEqual(await chipIds(page), oracleIds(withSystem.expected));

  // The reply streams (greedy, 6 tokens) and joins the conversation; the Prompt box is empty for
  // the next message.
  await system.fill('');
  await prompt.fill(one.messages[0].content);
  await settled(page);
  await setSampling(page, { 'Max tokens': 6, Temperature: 0 });
  assert.match(await generate(page), /^Done: /);
  const generated = await chipIds(page, '#tokens .chip.generated');
  assert.ok(generated.length >= 1 && generated.length <= 6, `${generated.length} tokens generated`);
  assert.deepEqual(await turns.getByRole('listitem').allTextContents(), [
    `You${one.messages[0].content}`,
    `Model${oracle.decode(generated, { clean_up_tokenization_spaces: false })}`,
  ]);
  assert.equal(await prompt.inputValue(), '');
  mkdirSync(join(root, 'build'), { recursive: true });
  await page.screenshot({ path: join(root, 'build/page-chat-1280.png'), fullPage: true });

  // The next message is read after the first exchange: the conversation so far, then the new turn.
  await prompt.fill('And another one?');
  await settled(page);
  const next = await chipIds(page);
  const before = oracleIds(one.expected);
  assert.deepEqual(next.slice(0, before.length), before, 'the first exchange as it was read');
  assert.ok(next.length > before.length + generated.length, 'the reply and the new message follow it');

  // Nothing is sent without a message.
  await prompt.fill('');
  await settled(page);
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'error');
  assert.equal(await page.locator('#prompt-error').textContent(), 'Write a message first: the model replies to it.');

  // New conversation: no turns left.
  await page.getByRole('button', { name: 'New conversation', exact: true }).click();
  assert.equal(await turns.isHidden(), true);
});

test('a template that refuses the conversation says why under the prompt', async () => {
  const system = page.getByRole('textbox', { name: 'System prompt', exact: true });
  const prompt = page.getByRole('textbox', { name: 'Prompt', exact: true });
  await system.fill('forbidden');
  await prompt.fill('Hello');
  await settled(page);
  // (the template's own words, after where it raised them)
  assert.equal(
    await page.locator('#prompt-error').textContent(),
    'The chat template cannot render this conversation: tokenizer_config.json: chat_template, line 1, column 50: ' +
      'No forbidden system prompts.',
  );
  assert.equal(await page.locator('#tokens .chip').count(), 0);
  await system.fill('');
  await settled(page);
  assert.equal(await page.locator('#prompt-error').isHidden(), true);
});

test('no problems on the page', () => {
  assert.deepEqual(suite.problems, []);
});
