// The page on the modern decoders (tests/fixtures: llama, qwen2, ... with random weights and no
// tokenizer), in headless Chromium by accessible names: a decoder opened from files (one
// model.safetensors, or a sharded checkpoint) reads token ids in the Prompt box, shows its tokens as
// #id, its attention per query head naming the KV head it shares, the Layers grid as PyTorch's logit
// lens, and generates PyTorch's greedy tokens, with every head and with a head off, F32, int8 and int4;
// bad ids are explained under the prompt. The Model picker's hub models fill the URL form, show
// the memory estimate and download (the hub's addresses answered here from a fixture).
//
//   node --test tests/page/decoders.test.mjs
//
// Screenshots: build/page-decoder-1280.png (a GQA model's ids, attention and greedy tokens),
// build/page-decoder-hub.png (the Model panel with a hub model's memory estimate).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { arm, generate, openAdvanced, pageSuite, root, settled, setSampling, waitReady } from './harness.mjs';

const suite = pageSuite();
before(() => suite.start());
after(() => suite.stop());

const fixture = (name) => join(root, 'tests/fixtures', name);
const expected = (name) => JSON.parse(readFileSync(join(fixture(name), 'expected.json'), 'utf8'));
const chips = (page, selector = '#tokens .chip') =>
  page.locator(selector).evaluateAll((cs) => cs.map((c) => ({ id: Number(c.dataset.id), text: c.textContent })));

// Opens a model's files with the "Open the four files…" input (whatever the files are).
async function openFiles(page, paths) {
  await page
    .getByRole('combobox', { name: 'Model', exact: true })
    .selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles(paths);
  await waitReady(page);
}

// The generated tokens' ids, once a generation has ended.
const generatedIds = async (page) => (await chips(page, '#tokens .chip.generated')).map((c) => c.id);

let page; // the scenarios' page, at 1280×800

test('a GQA decoder from files: ids in the Prompt box, #id tokens, query heads with their KV head, greedy as PyTorch', async () => {
  ({ page } = await suite.openPage());
  await page.goto(suite.pageUrl());
  await waitReady(page);
  const name = 'qwen2-bf16'; // 2 layers, 4 query heads sharing 2 KV heads, BF16 weights
  const want = expected(name);
  await openFiles(
    page,
    ['config.json', 'model.safetensors'].map((f) => join(fixture(name), f)),
  );
  assert.match(
    await page.locator('#model-info').textContent(),
    /^local files: qwen2, 2 layers × 4 heads \(2 KV heads\), 32 wide, 64 positions, 128-token vocabulary, no tokenizer \(it reads token ids\); F32 weights/,
  );
  // The prompt box asks for ids (its name is still "Prompt"), with an example of them.
  const prompt = page.getByRole('textbox', { name: 'Prompt', exact: true });
  assert.equal(await prompt.inputValue(), '1, 2, 3, 4, 5', 'the unedited example became ids');
  const hint = page.locator('#prompt-ids');
  assert.equal(await hint.isVisible(), true);
  assert.match(await hint.textContent(), /no tokenizer: type token ids \(0 to 127\) separated by commas/);
  assert.match(await prompt.getAttribute('aria-describedby'), /prompt-hint/);
  assert.equal(await page.getByRole('checkbox', { name: /Read special tokens/ }).isDisabled(), true);

  // The fixture's tokens: chips named by id, the attention of each query head.
  await prompt.fill(want.tokens.join(', '));
  await settled(page);
  const shown = await chips(page);
  assert.deepEqual(
    shown.map((c) => c.id),
    want.tokens,
  );
  assert.deepEqual(
    shown.map((c) => c.text),
    want.tokens.map((id) => `#${id}`),
  );
  assert.equal(await page.locator('#token-count').textContent(), '20 tokens of 64.');
  const attention = page.getByRole('region', { name: 'Attention' });
  const head = attention.getByRole('combobox', { name: 'Head', exact: true });
  assert.deepEqual(await head.locator('option').allTextContents(), ['0 · KV 0', '1 · KV 0', '2 · KV 1', '3 · KV 1']);
  await attention.getByRole('combobox', { name: 'Layer', exact: true }).selectOption('1');
  await head.selectOption('3');
  await page.waitForFunction(() =>
    /layer 1, head 3 · KV head 1 over 20 tokens/.test(document.getElementById('heatmap').getAttribute('aria-label')),
  );
  for (const label of ['Layer 0, head 0 · KV head 0', 'Layer 1, head 2 · KV head 1'])
    assert.equal(await attention.getByRole('button', { name: label, exact: true }).count(), 1, label);
  // The heatmap's readout at a cell: PyTorch's probability for layer 1, query head 3.
  await page.locator('#heatmap').focus();
  await page.keyboard.press('ArrowRight'); // (the cursor starts at the last query, key 0: now key 1)
  const readout = await page.locator('#heatmap-readout').textContent();
  const p = want.attention[1][3][19][1];
  assert.ok(
    readout.startsWith(`Layer 1, head 3 · KV head 1: #19 “#${want.tokens[19]}” → #1 “#${want.tokens[1]}”: `),
    readout,
  );
  const shownValue = Number(/: ([\d.]+) \(/.exec(readout)?.[1]);
  assert.ok(Math.abs(shownValue - p) < 1e-4, `${readout} (PyTorch: ${p})`);

  // Layers: each layer's likeliest token after each prompt token, PyTorch's logit lens (near-ties aside).
  await page.getByRole('region', { name: 'Layers' }).scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll('#layers-grid .lg-cell').length === 40);
  const grid = await page
    .locator('#layers-grid .lg-cell')
    .evaluateAll((cells) => cells.map((c) => ({ id: Number(c.dataset.id), text: c.textContent })));
  let compared = 0;
  want.lens.layers.forEach((rows, l) =>
    rows.forEach((ranks, t) => {
      const cell = grid[l * want.tokens.length + t];
      assert.equal(cell.text, `#${cell.id}`);
      if (ranks[0].p - ranks[1].p < 1e-4) return;
      assert.equal(cell.id, ranks[0].id, `lens layer ${l} after token ${t}`);
      ++compared;
    }),
  );
  assert.ok(compared >= 30, `${compared} lens cells compared`);

  // Greedy generation from the fixture's prompt: PyTorch's tokens, written as ids in the Output.
  const g = want.greedy;
  await prompt.fill(g.prompt.join(','));
  await settled(page);
  await setSampling(page, { 'Max tokens': g.max_tokens, Temperature: 0 });
  assert.match(await generate(page), new RegExp(`^Done: reached Max tokens\\. ${g.max_tokens} tokens`));
  assert.deepEqual(await generatedIds(page), g.tokens);
  assert.equal(await page.locator('#output').textContent(), [...g.prompt, ...g.tokens].map((id) => `#${id}`).join(' '));
  assert.match(await page.locator('#next-bars').textContent(), /#\d+/);
  mkdirSync(join(root, 'build'), { recursive: true });
  await page.locator('#attention-region').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(root, 'build/page-decoder-1280.png'), fullPage: true });

  // A query head switched off: PyTorch's greedy tokens without it.
  const m = want.head_masks[0];
  assert.deepEqual(m.silenced, [[0, 3]]);
  await page.getByRole('button', { name: 'Layer 0 head 3 off', exact: true }).click();
  await prompt.fill(m.greedy.prompt.join(', '));
  await settled(page);
  assert.match(await generate(page), /^Done: reached Max tokens/);
  assert.deepEqual(await generatedIds(page), m.greedy.tokens);
  await page.getByRole('button', { name: 'Reset heads', exact: true }).click();
});

test('ids that are not ids of the vocabulary are explained under the prompt, and nothing is generated', async () => {
  const prompt = page.getByRole('textbox', { name: 'Prompt', exact: true });
  const error = page.locator('#prompt-error');
  await prompt.fill('5, six, 7');
  await settled(page);
  assert.match(await error.textContent(), /^“six” is not a token id\. This model has no tokenizer: type token ids/);
  assert.equal(await prompt.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#tokens .chip').count(), 0);
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'error');
  assert.match(await error.textContent(), /“six” is not a token id/);
  assert.equal(await page.locator('#tokens .chip.generated').count(), 0);
  await prompt.fill('#5 128');
  await settled(page);
  assert.equal(await error.textContent(), "There is no token 128: this model's ids go from 0 to 127.");
  await prompt.fill('#5 127');
  await settled(page);
  assert.equal(await error.isHidden(), true);
  assert.deepEqual(
    (await chips(page)).map((c) => c.id),
    [5, 127],
  );
});

test('int8 and int4 weights and a sharded checkpoint from files', async () => {
  // Int8, then int4 (which unticks Int8): the same model again, quantized; still on ids.
  await openAdvanced(page);
  const prompt = page.getByRole('textbox', { name: 'Prompt', exact: true });
  for (const form of ['int8', 'int4']) {
    await arm(page);
    await page.getByRole('checkbox', { name: `${form === 'int8' ? 'Int8' : 'Int4'} weights`, exact: true }).check();
    await waitReady(page);
    assert.match(
      await page.locator('#model-info').textContent(),
      new RegExp(`qwen2, .*no tokenizer.*; ${form} weights`),
    );
    await prompt.fill('1, 2, 3');
    await settled(page);
    await setSampling(page, { 'Max tokens': 4 });
    assert.match(await generate(page), /^Done: reached Max tokens\. 4 tokens/);
  }
  assert.equal(await page.getByRole('checkbox', { name: 'Int8 weights', exact: true }).isChecked(), false);
  await arm(page);
  await page.getByRole('checkbox', { name: 'Int4 weights', exact: true }).uncheck();
  await waitReady(page);

  // A sharded checkpoint: its index and the shards it names (any order), no tokenizer; MQA-free
  // llama with its own greedy tokens.
  const name = 'llama-linear-sharded';
  const index = JSON.parse(readFileSync(join(fixture(name), 'model.safetensors.index.json'), 'utf8'));
  const shards = [...new Set(Object.values(index.weight_map))].reverse();
  await openFiles(
    page,
    ['config.json', 'model.safetensors.index.json', ...shards].map((f) => join(fixture(name), f)),
  );
  assert.match(await page.locator('#model-info').textContent(), /^local files: llama, 2 layers × 4 heads, /);
  assert.deepEqual(
    await page.getByRole('combobox', { name: 'Head', exact: true }).locator('option').allTextContents(),
    ['0', '1', '2', '3'],
  );
  const g = expected(name).greedy;
  await prompt.fill(g.prompt.join(', '));
  await settled(page);
  await setSampling(page, { 'Max tokens': g.max_tokens, Temperature: 0 });
  assert.match(await generate(page), /^Done: reached Max tokens/);
  assert.deepEqual(await generatedIds(page), g.tokens);

  // A shard left out, or vocab.json without merges.txt: the error names what is missing.
  await page
    .getByRole('combobox', { name: 'Model', exact: true })
    .selectOption({ label: 'Open files on this device…' });
  await page
    .getByLabel('Open the four files…')
    .setInputFiles(['config.json', 'model.safetensors.index.json', shards[0]].map((f) => join(fixture(name), f)));
  await page.locator('#model-error:not([hidden])').waitFor();
  assert.match(await page.locator('#model-error').textContent(), new RegExp(`names 2 shards; ${shards[1]} is missing`));
  await page
    .getByLabel('Open the four files…')
    .setInputFiles([
      join(fixture(name), 'config.json'),
      ...shards.map((f) => join(fixture(name), f)),
      join(fixture(name), 'model.safetensors.index.json'),
      join(root, 'tests/fixtures/gpt2-bytes/vocab.json'),
    ]);
  await page.waitForFunction(() => /merges\.txt is missing/.test(document.getElementById('model-error').textContent));
});

test("the Model picker's hub models: the URL form with the memory estimate, then the download", async () => {
  // The hub is out of reach: its addresses for SmolLM2-135M are answered with a llama fixture
  // (multi-query attention), 404 for the files it does not have (as the hub answers).
  const served = fixture('llama-mqa-bias-v5');
  const { page: hubPage, context } = await suite.openPage({
    expectedFailures: [
      /^https:\/\/huggingface\.co\/HuggingFaceTB\/SmolLM2-135M\/resolve\/main\/(vocab\.json|merges\.txt)$/,
    ],
  });
  const asked = [];
  await context.route(/^https:\/\/huggingface\.co\//, async (route) => {
    const request = route.request();
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' };
    if (request.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
    const m = /^https:\/\/huggingface\.co\/HuggingFaceTB\/SmolLM2-135M\/resolve\/main\/([\w.-]+)$/.exec(request.url());
    asked.push(m?.[1] ?? request.url());
    let body = null;
    try {
      body = m && ['config.json', 'model.safetensors'].includes(m[1]) ? readFileSync(join(served, m[1])) : null;
    } catch {}
    if (!body) return route.fulfill({ status: 404, headers: cors, body: 'Entry not found' });
    const headers = { ...cors, 'content-type': 'application/octet-stream' };
    // Ranges, as the hub serves them: the memory estimate reads the start of model.safetensors.
    // (Without, it would cancel the whole file's response after its header: a request that failed.)
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers().range ?? '');
    if (range) {
      const [from, to] = [Number(range[1]), Math.min(Number(range[2]), body.length - 1)];
      headers['content-range'] = `bytes ${from}-${to}/${body.length}`;
      headers['access-control-expose-headers'] = 'content-range'; // (the hub's does: the file's size)
      return route.fulfill({ status: 206, headers, body: body.subarray(from, to + 1) });
    }
    route.fulfill({ status: 200, headers, body });
  });
  await hubPage.goto(suite.pageUrl());
  await waitReady(hubPage);
  const model = hubPage.getByRole('combobox', { name: 'Model', exact: true });
  const hubOptions = await model.locator('optgroup[label="From the Hugging Face hub"] option').allTextContents();
  assert.deepEqual(hubOptions, [
    'HuggingFaceTB/SmolLM2-135M-Instruct (llama, 135M parameters, chat)…',
    'HuggingFaceTB/SmolLM2-135M (llama, 135M parameters)…',
    'EleutherAI/pythia-160m (gpt_neox, 160M parameters)…',
    'Qwen/Qwen2.5-0.5B-Instruct (qwen2, 0.5B parameters, chat)…',
  ]);
  await model.selectOption({ label: 'HuggingFaceTB/SmolLM2-135M (llama, 135M parameters)…' });
  const url = hubPage.getByRole('textbox', { name: 'Model URL', exact: true });
  assert.equal(await url.inputValue(), 'HuggingFaceTB/SmolLM2-135M');
  await hubPage.waitForFunction(() => /It needs about/.test(document.getElementById('model-url-estimate').textContent));
  assert.match(
    await hubPage.locator('#model-url-estimate').textContent(),
    /^model\.safetensors is [\d.]+ KB\. It needs about [\d.]+ (KB|MB) of memory \(.* for the F32 weights, .* for a full context\): it fits/,
  );
  await hubPage.locator('.model-panel').screenshot({ path: join(root, 'build/page-decoder-hub.png') });
  await arm(hubPage);
  await hubPage.getByRole('button', { name: 'Download', exact: true }).click();
  await waitReady(hubPage);
  assert.match(
    await hubPage.locator('#model-info').textContent(),
    /^HuggingFaceTB\/SmolLM2-135M: llama, 2 layers × 4 heads \(1 KV head\), .*no tokenizer/,
  );
  assert.deepEqual(
    await hubPage.getByRole('combobox', { name: 'Head', exact: true }).locator('option').allTextContents(),
    ['0 · KV 0', '1 · KV 0', '2 · KV 0', '3 · KV 0'],
  );
  const g = expected('llama-mqa-bias-v5').greedy;
  await hubPage.getByRole('textbox', { name: 'Prompt', exact: true }).fill(g.prompt.join(', '));
  await settled(hubPage);
  await setSampling(hubPage, { 'Max tokens': g.max_tokens, Temperature: 0 });
  assert.match(await generate(hubPage), /^Done: reached Max tokens/);
  assert.deepEqual(await generatedIds(hubPage), g.tokens);
  await context.close();
});

test('no console errors, page errors, failed requests or dialogs in any scenario', () => {
  assert.deepEqual(suite.problems, []);
});
