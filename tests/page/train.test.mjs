// The page's Train panel in headless Chromium, by accessible names: a text (the bundled Brown
// sample) trains a small GPT, the Loss chart gains points, Stop then Train goes on from where it
// stopped, the model joins the Model select as "Trained here" and generates, Download model gives
// four files that the CLI loads and that equal, bit for bit, what train() in Node makes from the
// same text and settings; "Compare one head and many" trains both and draws both models'
// attention; bad input (no text, too little, a shape that does not divide, a model too large for
// the heap, a field out of range) is a message in the panel; the page thread's heap stays flat over hundreds
// of steps with a look at the model every few.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/train.test.mjs
//
// Screenshot: build/page-train.png (the comparison, done).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { brownDocument } from '../../scripts/brown_text.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { train } from '../../web/dist/glassbox.mjs';
import { trainOptions } from '../../web/app/train-settings.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
const SAMPLE_IDS = Array.from({ length: 24 }, (_, i) => `ca${String(i + 1).padStart(2, '0')}`);
// The panel's numbers for a model that trains in seconds (fields by their labels).
const SMALL = {
  Layers: 2,
  Width: 32,
  Heads: 4,
  Context: 32,
  Vocabulary: 300,
  Batch: 4,
  Steps: 40,
  'Learning rate': 0.003,
  'Training seed': 1,
  'Sample every': 10,
};
const FIELD_NAMES = {
  Layers: 'layers',
  Width: 'width',
  Heads: 'heads',
  Context: 'context',
  Vocabulary: 'vocab',
  Batch: 'batch',
  Steps: 'steps',
  'Learning rate': 'rate',
  'Training seed': 'seed',
  'Sample every': 'every',
};

let server, browser, tmp;
const problems = [];

before(async () => {
  ({ server } = await startServer(root, 0));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  tmp = await mkdtemp(join(tmpdir(), 'glassbox-train-page-'));
});

after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
});

async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  const requests = []; // every URL the page and its workers asked for
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`http://127.0.0.1:${server.address().port}/web/`);
  await page.waitForFunction(() => /^Ready/.test(document.getElementById('status').textContent), null, {
    timeout: 60_000,
  });
  const region = page.getByRole('region', { name: 'Train', exact: true });
  return { page, context, region, requests };
}

// The trainer's module (glassbox-training.mjs/.wasm), which only training fetches.
const trainingModule = (url) => /\/glassbox-training\.(mjs|wasm)$/.test(new URL(url).pathname);

async function setFields(region, fields) {
  for (const [label, value] of Object.entries(fields))
    await region.getByLabel(label, { exact: true }).fill(String(value));
}

const points = (region, i = 0) =>
  region.getByRole('region', { name: 'Loss' }).locator('polyline').nth(i).getAttribute('data-points').then(Number);
const trainStatus = (region) => region.getByRole('status').textContent();
// Waits until the panel's status line matches re.
const statusMatches = (page, re, timeout = 120_000) =>
  page.waitForFunction(
    (source) => new RegExp(source).test(document.getElementById('train-status').textContent),
    re.source,
    { timeout },
  );

test(
  'Train: the Brown sample trains, the Loss chart gains points, Stop then Train goes on, the model generates and downloads',
  { timeout: 300_000 },
  async () => {
    const { page, context, region, requests } = await openPage();
    // The first load, done with everything it fetches, took nothing of the trainer's.
    await page.waitForLoadState('networkidle');
    assert.deepEqual(requests.filter(trainingModule), [], 'the first load fetches no training module');
    assert.ok(
      requests.some((url) => /\/glassbox-core(-mt)?\.wasm$/.test(url)),
      'the first load fetched the engine',
    );
    await region.getByRole('button', { name: 'Use a Brown corpus sample' }).click();
    const text = region.getByRole('textbox', { name: 'Training text' });
    await page.waitForFunction(() => document.getElementById('train-text').value.length > 100_000);
    const sample = await text.inputValue();
    assert.equal(
      sample,
      SAMPLE_IDS.map(brownDocument).join('\n'),
      "the bundled sample is scripts/brown_text.mjs's text of ca01-ca24",
    );
    assert.equal(await region.getByLabel('Size').inputValue(), 'tiny');
    assert.equal(await region.getByLabel('Layers', { exact: true }).inputValue(), '2');
    assert.equal(await region.getByLabel('Width', { exact: true }).inputValue(), '64');
    await setFields(region, SMALL);
    assert.equal(await region.getByLabel('Size').inputValue(), 'custom', 'edited numbers are a custom size');

    await region.getByRole('button', { name: 'Train', exact: true }).click();
    // Stop, pressed from the page itself once the chart has 15 points (a click from here could come
    // after the last of these fast steps).
    assert.equal(await region.getByRole('button', { name: 'Stop training' }).isEnabled(), true);
    await page.waitForFunction(
      () => {
        if (Number(document.querySelector('#loss-chart polyline')?.dataset.points) < 15) return false;
        document.getElementById('train-stop').click();
        return true;
      },
      null,
      { timeout: 120_000 },
    );
    await statusMatches(page, /^Stopped after \d+ of 40 steps/);
    assert.ok(
      requests.some((url) => /\/glassbox-training\.wasm$/.test(url)),
      'Train fetched the training module',
    );
    const stoppedAt = Number(/after (\d+)/.exec(await trainStatus(region))[1]);
    assert.ok(stoppedAt >= 15 && stoppedAt < 40, `stopped at step ${stoppedAt}`);
    assert.equal(await points(region), stoppedAt, 'a point for every step');
    // The model is in the Model select and loaded: every view has it.
    const select = page.getByRole('combobox', { name: 'Model', exact: true });
    await page.waitForFunction(() => /^Ready: Trained here/.test(document.getElementById('status').textContent), null, {
      timeout: 30_000,
    });
    assert.match(await select.locator('option:checked').textContent(), /^Trained here \(2 × 32, 4 heads\)$/);
    assert.match(
      await page.locator('#model-info').textContent(),
      /2 layers × 4 heads, 32 wide, 32 positions, 300-token vocabulary/,
    );
    await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury');
    await page.getByLabel('Max tokens').fill('8');
    await page.getByLabel('Temperature').fill('0');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.waitForFunction(() => /^(Done|Nothing generated)/.test(document.getElementById('status').textContent));
    assert.match(await page.locator('#status').textContent(), /^Done: .*8 tokens/, 'the trained model generated');
    assert.equal(await page.locator('#thumbs canvas').count(), 8, 'the Attention panel shows its 2 x 4 heads');

    // Train again: it goes on from the step it stopped at, to the end.
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await statusMatches(page, /^Trained 40 of 40 steps/);
    assert.equal(await points(region), 40, 'the chart went on from where it stopped');
    assert.ok((await points(region, 1)) >= 4, 'held-out losses (every 10 steps)');
    assert.ok(
      (await region.getByRole('region', { name: 'Samples' }).getByRole('listitem').count()) >= 4,
      'a sample every 10 steps',
    );
    const maps = region.getByRole('group', { name: 'Attention of 2 × 32, 4 heads' }).getByRole('img');
    assert.equal(await maps.count(), 8);
    assert.match(await maps.first().getAttribute('aria-label'), /layer 0 head 0, step 40/);

    // Download model: four files; the CLI loads them, and they are what train() in Node makes.
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await region.getByRole('button', { name: 'Download model' }).click();
    for (let i = 0; i < 50 && downloads.length < 4; ++i) await page.waitForTimeout(100);
    const names = downloads.map((d) => d.suggestedFilename()).sort();
    assert.deepEqual(names, ['config.json', 'merges.txt', 'model.safetensors', 'vocab.json']);
    const dir = join(tmp, 'downloaded');
    for (const d of downloads) await d.saveAs(join(dir, d.suggestedFilename()));
    execFileSync(cli, ['generate', '--model', dir, '--prompt', 'The jury', '--max-tokens', '4', '--temperature', '0'], {
      stdio: 'pipe',
    });
    const fields = Object.fromEntries(Object.entries(SMALL).map(([label, v]) => [FIELD_NAMES[label], v]));
    const run = train([sample], trainOptions(fields));
    for await (const step of run) void step;
    const want = await run.files();
    await run.dispose();
    assert.ok(
      Buffer.from(want.weights).equals(await readFile(join(dir, 'model.safetensors'))),
      "model.safetensors: Node's train(), bit for bit",
    );
    assert.equal(await readFile(join(dir, 'vocab.json'), 'utf8'), want.vocab);
    assert.equal(await readFile(join(dir, 'merges.txt'), 'utf8'), want.merges);
    await context.close();
  },
);

test(
  "Compare one head and many: both train on the same text, two curves, both models' attention",
  { timeout: 300_000 },
  async () => {
    const { page, context, region } = await openPage();
    await region
      .getByRole('textbox', { name: 'Training text' })
      .fill(['ca01', 'ca02', 'ca03'].map(brownDocument).join('\n'));
    await setFields(region, { ...SMALL, Steps: 30 });
    await region.getByRole('button', { name: 'Compare one head and many' }).click();
    await statusMatches(page, /^Trained 30 of 30 steps/);
    const status = await trainStatus(region);
    assert.match(status, /Held-out loss: \d\.\d{3} with 1 head, \d\.\d{3} with 4/);
    const loss = region.getByRole('region', { name: 'Loss' });
    assert.equal(await loss.locator('polyline').count(), 4, 'training and held-out curves of both');
    for (const i of [0, 2]) assert.equal(await points(region, i), 30);
    assert.match(
      await loss.getByRole('img').getAttribute('aria-label'),
      /1 head: training [\d.]+ at step 30; 1 head: held-out .*4 heads: training/,
    );
    for (const [name, count] of [
      ['Attention of 2 × 32, 1 head', 2],
      ['Attention of 2 × 32, 4 heads', 8],
    ]) {
      const maps = region.getByRole('group', { name }).getByRole('img');
      assert.equal(await maps.count(), count, name);
      assert.match(await maps.last().getAttribute('aria-label'), /step 30, over the first 32 tokens/);
    }
    await page.waitForFunction(() =>
      /^Ready: Trained here \(2 × 32, 4 heads\)/.test(document.getElementById('status').textContent),
    );
    const options = await page
      .getByRole('combobox', { name: 'Model', exact: true })
      .locator('option')
      .allTextContents();
    assert.ok(
      options.includes('Trained here (2 × 32, 1 head)') && options.includes('Trained here (2 × 32, 4 heads)'),
      options.join(' | '),
    );
    await region.screenshot({ path: join(root, 'build/page-train.png') });
    await context.close();
  },
);

test('bad input is a message in the panel, and Train works again after it', { timeout: 120_000 }, async () => {
  const { page, context, region } = await openPage();
  const alert = region.getByRole('alert');
  const train = region.getByRole('button', { name: 'Train', exact: true });
  await setFields(region, SMALL);
  await train.click();
  assert.match(await alert.textContent(), /There is no text to train on/);
  // .txt files dropped on the box become its text (not a model to open); other files are refused.
  const drop = (files) =>
    page.evaluate((list) => {
      const dt = new DataTransfer();
      for (const [name, text, type] of list) dt.items.add(new File([text], name, { type }));
      const box = document.getElementById('train-text');
      for (const type of ['dragenter', 'dragover', 'drop'])
        box.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
  await drop([
    ['a.txt', 'One text.', 'text/plain'],
    ['b.txt', 'Another.', 'text/plain'],
  ]);
  await page.waitForFunction(() => document.getElementById('train-text').value === 'One text.\n\nAnother.');
  assert.equal(await page.locator('#drop-overlay').isHidden(), true, 'the page did not take them for a model');
  await drop([['picture.png', 'not text', 'image/png']]);
  await page.waitForFunction(() =>
    /picture\.png is not a text file/.test(document.getElementById('train-error').textContent),
  );
  const text = region.getByRole('textbox', { name: 'Training text' });
  await text.fill('Too short to train on.');
  await train.click();
  await page.waitForFunction(() => /Training failed/.test(document.getElementById('train-error').textContent), null, {
    timeout: 30_000,
  });
  assert.match(
    await alert.textContent(),
    /Training failed: the training text is \d+ tokens, too few for sequences of 32 \(give more text or a smaller Context\)/,
  );
  await text.fill(brownDocument('ca01'));
  await setFields(region, { Heads: 3 });
  await train.click();
  await page.waitForFunction(
    () => /Width 32 is not divisible by Heads 3/.test(document.getElementById('train-error').textContent),
    null,
    { timeout: 30_000 },
  );
  await setFields(region, { Heads: 4, Layers: 48, Width: 4096 });
  await train.click();
  await page.waitForFunction(
    () =>
      /Training failed: training this model needs about \d+ MB, more than the \d+ MB this WebAssembly heap can still give/.test(
        document.getElementById('train-error').textContent,
      ),
    null,
    { timeout: 30_000 },
  );
  await setFields(region, { Layers: 2, Width: 32, Steps: 0 });
  await train.click();
  assert.match(await alert.textContent(), /Steps must be a whole number above 0/);
  assert.equal(await region.getByLabel('Steps', { exact: true }).getAttribute('aria-invalid'), 'true');
  await setFields(region, { Steps: 3_000_000_000 });
  await train.click();
  assert.match(
    await alert.textContent(),
    /Training failed: steps must be an integer from 0 to 2147483647, got 3000000000/,
  );
  await setFields(region, { Steps: 12, 'Sample every': 6 });
  await train.click();
  await statusMatches(page, /^Trained 12 of 12 steps/);
  assert.equal(await alert.isHidden(), true, 'the message went with the problem');
  // Stop while the first step learns its vocabulary (seconds on the whole Brown sample): the run
  // ends at once, and nothing joins the Model select.
  await region.getByRole('button', { name: 'Use a Brown corpus sample' }).click();
  await page.waitForFunction(() => document.getElementById('train-text').value.length > 100_000);
  await setFields(region, { Vocabulary: 4096 });
  await train.click();
  await region.getByRole('button', { name: 'Stop training' }).click();
  await statusMatches(page, /^Stopped before the first step was done: nothing was trained/);
  assert.equal(await train.isEnabled(), true);
  await context.close();
});

test(
  "memory: the page thread's heap is flat over hundreds of steps with a look at the model every few",
  { timeout: 300_000 },
  async () => {
    const { page, context, region } = await openPage();
    await region.getByRole('textbox', { name: 'Training text' }).fill(['ca01', 'ca02'].map(brownDocument).join('\n'));
    await setFields(region, {
      ...SMALL,
      Width: 16,
      Vocabulary: 260,
      Batch: 1,
      Context: 16,
      Steps: 300,
      'Sample every': 5,
    });
    const heap = () =>
      page.evaluate(async () => (await (await import('/web/dist/engine.mjs')).loadCore()).heapBytesInUse());
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await page.waitForFunction(
      () => {
        // Stop once 4 looks are shown (no look is under way once stopped)
        if (document.querySelectorAll('#train-samples li').length < 4) return false;
        document.getElementById('train-stop').click();
        return true;
      },
      null,
      { timeout: 60_000 },
    );
    await statusMatches(page, /^Stopped after/);
    const early = await heap();
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await statusMatches(page, /^Trained 300 of 300 steps/, 240_000);
    assert.ok((await region.getByRole('region', { name: 'Samples' }).getByRole('listitem').count()) >= 10);
    assert.equal(await heap(), early, 'heap bytes in use in the page thread: after 60 looks as after 4');
    await context.close();
  },
);
