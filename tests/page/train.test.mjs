// The page's Train panel in headless Chromium, by accessible names: a text (the bundled Brown
// sample) trains a small GPT, the Loss chart gains points, the status says which step the run is
// at, Stop then Train goes on from where it stopped; the model is offered ("Use the trained
// model", the focus on it after Stop) and joins the Model select only when used, the output kept
// until then; it generates; Download model gives one .zip whose four files the CLI loads and that
// equal, bit for bit, what train() in Node makes from the same text and settings. The samples and
// attention maps come from the training worker: the page's thread instantiates no WebAssembly
// while a model trains. "Compare one head and many" after a Stop says why it starts afresh, trains
// both and draws both models' attention; bad input (no text, too little, a shape that does not
// divide, a model too large for the heap, a field out of range) is a message in the panel; the
// training worker's heap stays flat over hundreds of steps with a look at the model every few.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/train.test.mjs
//
// Screenshot: build/page-train.png (the comparison, done).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { pageSuite, root, settled, waitReady } from './harness.mjs';
import { brownDocument } from '../../scripts/brown_text.mjs';
import { train } from '../../web/dist/glassbox.mjs';
import { trainOptions } from '../../web/app/train-settings.mjs';

const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
// The page's results are compared with the CLI's, bit for bit: the CLI's portable arithmetic gives
// the WebAssembly build's bits (its default, fused multiply-adds, does not).
process.env.GLASSBOX_ARITHMETIC = 'portable';
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

const suite = pageSuite();
let tmp;
before(async () => {
  await suite.start();
  tmp = await mkdtemp(join(tmpdir(), 'glassbox-train-page-'));
});
after(async () => {
  await suite.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// Every WebAssembly module the page's thread compiles or instantiates, counted by a script that
// runs before the page's own (workers have their own WebAssembly: theirs are not counted).
function countWebAssembly() {
  window.pageWasm = []; // what was called, in order
  for (const name of ['instantiate', 'instantiateStreaming', 'compile', 'compileStreaming']) {
    const f = WebAssembly[name];
    WebAssembly[name] = function (...args) {
      window.pageWasm.push(name);
      return f.apply(this, args);
    };
  }
  for (const name of ['Instance', 'Module'])
    WebAssembly[name] = new Proxy(WebAssembly[name], {
      construct: (T, args) => (window.pageWasm.push(name), new T(...args)),
    });
}

async function openPage({ viewport = { width: 1280, height: 900 } } = {}) {
  const context = await suite.browser.newContext({ viewport, acceptDownloads: true });
  const { page } = await suite.openPage({ context });
  await page.addInitScript(countWebAssembly);
  const requests = []; // every URL the page and its workers asked for
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(suite.pageUrl());
  await waitReady(page, 60_000);
  const region = page.getByRole('region', { name: 'Train', exact: true });
  return { page, context, region, requests };
}

// The trainer's module (glassbox-training.mjs/.wasm), which only training fetches.
const trainingModule = (url) => /\/glassbox-training\.(mjs|wasm)$/.test(new URL(url).pathname);

// Fills the panel's fields by their labels (opening "More settings" for those inside it).
async function setFields(region, fields) {
  const more = region.locator('#train-more');
  if ((await more.getAttribute('open')) === null) await more.getByText('More settings').click();
  for (const [label, value] of Object.entries(fields))
    await region.getByLabel(label, { exact: true }).fill(String(value));
}

const points = (region, i = 0) =>
  region.getByRole('region', { name: 'Loss' }).locator('polyline').nth(i).getAttribute('data-points').then(Number);
const trainStatus = (region) => region.getByRole('status').textContent();
// Waits until the panel's status line matches re (a timeout says what the panel said instead).
const statusMatches = (page, re, timeout = 120_000) =>
  page
    .waitForFunction(
      (source) => new RegExp(source).test(document.getElementById('train-status').textContent),
      re.source,
      {
        timeout,
      },
    )
    .catch(async (e) => {
      const [status, error, progress] = await Promise.all(
        ['#train-status', '#train-error', '#train-progress'].map((s) => page.locator(s).textContent()),
      );
      throw new Error(`${e.message}: waiting for ${re}, the panel says "${status}" "${error}" "${progress}"`);
    });
// Every text the status line has had, from now on (window.trainStatuses).
const recordStatus = (page) =>
  page.evaluate(() => {
    const status = document.getElementById('train-status');
    window.trainStatuses = [];
    new MutationObserver(() => window.trainStatuses.push(status.textContent)).observe(status, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
const statuses = (page) => page.evaluate(() => window.trainStatuses);
const focused = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
// Presses Stop (focused first, as from the keyboard) from the page itself, the moment the panel
// shows what `when` names: {looks: n} n samples listed, {lookAt: n} a sample of step n or later,
// {} the status's first step. (Steps of these small models take milliseconds: a click from here,
// or a poll, could come after the last.)
const stopWhen = (page, when) =>
  page.evaluate(
    (when) =>
      new Promise((resolve) => {
        const ready = () => {
          const looks = document.querySelectorAll('#train-samples li');
          if (when.looks) return looks.length >= when.looks;
          if (when.lookAt) return Number(/^Step (\d+)/.exec(looks[0]?.textContent ?? '')?.[1] ?? 0) >= when.lookAt;
          return /^Training in a worker: step/.test(document.getElementById('train-status').textContent);
        };
        const observer = new MutationObserver(() => press());
        const press = () => {
          if (!ready()) return false;
          observer.disconnect();
          const stop = document.getElementById('train-stop');
          stop.focus();
          stop.click();
          resolve();
          return true;
        };
        if (!press())
          observer.observe(document.getElementById('train-region'), {
            childList: true,
            characterData: true,
            subtree: true,
          });
      }),
    when,
  );

test(
  'Train: the Brown sample trains with the step in the status, Stop offers the model (the focus on it, the Model select and the output as they were), Use loads it, Train goes on, one .zip downloads',
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
    // Some output of the shipped model, which training and Stop leave as it is.
    await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury');
    await page.getByLabel('Max tokens').fill('6');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent));
    const output = page.getByRole('region', { name: 'Output' });
    const outputBefore = await output.textContent();
    assert.match(outputBefore, /The jury/);
    const select = page.getByRole('combobox', { name: 'Model', exact: true });
    const modelBefore = { value: await select.inputValue(), options: await select.locator('option').allTextContents() };

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
    assert.equal(await region.getByLabel('Vocabulary', { exact: true }).isVisible(), false, 'More settings is closed');
    await setFields(region, SMALL);
    assert.equal(await region.getByLabel('Size').inputValue(), 'custom', 'edited numbers are a custom size');
    assert.equal(await region.getByRole('button', { name: 'Use the trained model' }).count(), 0, 'nothing to use yet');

    const wasmBefore = await page.evaluate(() => window.pageWasm.length);
    await recordStatus(page);
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    // The vocabulary is learned in the first step (seconds on the Brown sample): the status says so,
    // and the focus went from Train (disabled now) to Stop.
    assert.match(await trainStatus(region), /^Learning the text's vocabulary/);
    assert.equal(await focused(page), 'train-stop', 'the focus moved to Stop');
    await stopWhen(page, { looks: 1 });
    await statusMatches(page, /^Stopped after \d+ of 40 steps/);
    // Once steps came, the status said which: never the vocabulary again.
    const during = await statuses(page);
    const first = during.findIndex((t) => /^Training in a worker: step \d+ of 40\.$/.test(t));
    assert.ok(first >= 0, during.join(' | '));
    assert.ok(!during.slice(first).some((t) => /vocabulary/.test(t)), during.join(' | '));
    assert.ok(
      requests.some((url) => /\/glassbox-training\.wasm$/.test(url)),
      'Train fetched the training module',
    );
    const stoppedAt = Number(/after (\d+)/.exec(await trainStatus(region))[1]);
    assert.ok(stoppedAt >= 10 && stoppedAt < 40, `stopped at step ${stoppedAt}`);
    assert.equal(await points(region), stoppedAt, 'a point for every step');
    // The model is offered, not loaded: the focus is on the offer, the Model select and the output
    // are as they were.
    const use = region.getByRole('button', { name: 'Use the trained model', exact: true });
    await page.waitForFunction(() => document.activeElement?.id === 'train-use', null, { timeout: 5_000 });
    assert.equal(await use.isEnabled(), true);
    await page.waitForTimeout(500); // (anything the page would do with the model by itself, done)
    assert.deepEqual(
      { value: await select.inputValue(), options: await select.locator('option').allTextContents() },
      modelBefore,
      'the Model select is as it was',
    );
    assert.equal(await output.textContent(), outputBefore, 'the output is as it was');
    assert.match(await page.locator('#status').textContent(), /^Done/, "the page's status is the generation's");

    // Use the trained model: it joins the Model select and is loaded; every view has it.
    await use.press('Enter');
    await page.waitForFunction(() => /^Ready: Trained here/.test(document.getElementById('status').textContent), null, {
      timeout: 30_000,
    });
    assert.match(await select.locator('option:checked').textContent(), /^Trained here \(2 × 32, 4 heads\)$/);
    assert.match(
      await page.locator('#model-info').textContent(),
      /2 layers × 4 heads, 32 wide, 32 positions, 300-token vocabulary/,
    );
    await settled(page);
    await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury');
    await page.getByLabel('Max tokens').fill('8');
    await page.getByLabel('Temperature').fill('0');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.waitForFunction(() => /^(Done|Nothing generated)/.test(document.getElementById('status').textContent));
    assert.match(await page.locator('#status').textContent(), /^Done: .*8 tokens/, 'the trained model generated');
    assert.equal(await page.locator('#thumbs canvas').count(), 8, 'the Attention panel shows its 2 x 4 heads');
    // The Experiments region runs on it too: the two texts differ in their last token alone (rare
    // bytes, which no merge of the run's vocabulary joins), so patching the stream entering layer 0
    // there gives the clean answer back (1), and the positions before it change nothing (0).
    const experiments = page.getByRole('region', { name: 'Experiments' });
    const box = (name) => experiments.getByRole('textbox', { name, exact: true });
    await box('Clean text').fill('The jury said ~');
    await box('Corrupted text').fill('The jury said ^');
    await box('Answer').fill('#5');
    await box('Wrong answer').fill('#6');
    const patching = experiments.getByRole('tabpanel', { name: 'Patching' });
    await patching.getByRole('button', { name: 'Run patching' }).click();
    await page.waitForFunction(
      () => {
        const panel = document.getElementById('exp-patching');
        return panel.querySelector('.exp-status').dataset.kind === 'done' || !panel.querySelector('.exp-error').hidden;
      },
      null,
      { timeout: 60_000 },
    );
    assert.equal(
      await patching.locator('.exp-error').isVisible(),
      false,
      await patching.locator('.exp-error').textContent(),
    );
    const residPre = await patching
      .getByRole('grid', { name: 'resid_pre', exact: true })
      .evaluate((t) =>
        [...t.tBodies[0].rows].map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.value))),
      );
    assert.equal(residPre.length, 2, 'a row per layer');
    assert.ok(Math.abs(residPre[0].at(-1) - 1) < 1e-4, `layer 0, the last position: ${residPre[0].at(-1)}`);
    assert.deepEqual(residPre[0].slice(0, -1), Array(residPre[0].length - 1).fill(0), 'layer 0 before it');

    // Train again, nothing changed: it goes on from the step it stopped at, to the end.
    await recordStatus(page);
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await statusMatches(page, /^Trained 40 of 40 steps/);
    const said = await statuses(page);
    assert.equal(said[0], `Going on from step ${stoppedAt} of 40.`, said.join(' | '));
    assert.ok(!said.some((t) => /changed|afresh/.test(t)), said.join(' | '));
    assert.equal(await points(region), 40, 'the chart went on from where it stopped');
    assert.ok((await points(region, 1)) >= 4, 'held-out losses (every 10 steps)');
    const samples = region.getByRole('region', { name: 'Samples' }).getByRole('listitem');
    assert.ok((await samples.count()) >= 4, 'a sample every 10 steps');
    assert.match(await samples.first().textContent(), /^Step 40: \S+/);
    const maps = region.getByRole('group', { name: 'Attention of 2 × 32, 4 heads' }).getByRole('img');
    assert.equal(await maps.count(), 8);
    assert.match(await maps.first().getAttribute('aria-label'), /layer 0 head 0, step 40/);
    // The samples and maps came from the training worker: the page's thread made no WebAssembly
    // module while it trained (an engine there would have been instantiated for them).
    assert.deepEqual(
      await page.evaluate((n) => window.pageWasm.slice(n), wasmBefore),
      [],
      "no WebAssembly compiled or instantiated in the page's thread during training",
    );

    // Download model: one .zip with a folder of four files; the CLI loads them, and they are what
    // train() in Node makes.
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await region.getByRole('button', { name: 'Download model' }).click();
    await page.waitForTimeout(2_000); // (any other download would have started by now)
    assert.deepEqual(
      downloads.map((d) => d.suggestedFilename()),
      ['trained-here-2x32-4-heads.zip'],
      'one download',
    );
    const zip = join(tmp, 'model.zip');
    await downloads[0].saveAs(zip);
    execFileSync('unzip', ['-q', zip, '-d', join(tmp, 'unzipped')]); // (unzip checks every CRC-32)
    const dir = join(tmp, 'unzipped', 'trained-here-2x32-4-heads');
    assert.deepEqual((await readdir(dir)).sort(), ['config.json', 'merges.txt', 'model.safetensors', 'vocab.json']);
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
    assert.equal(await readFile(join(dir, 'config.json'), 'utf8'), want.config);
    assert.equal(await readFile(join(dir, 'vocab.json'), 'utf8'), want.vocab);
    assert.equal(await readFile(join(dir, 'merges.txt'), 'utf8'), want.merges);
    await context.close();
  },
);

test(
  "Compare one head and many after a Stop: says why it starts afresh, trains both on the same text, two curves, both models' attention",
  { timeout: 300_000 },
  async () => {
    const { page, context, region } = await openPage();
    await region
      .getByRole('textbox', { name: 'Training text' })
      .fill(['ca01', 'ca02', 'ca03'].map(brownDocument).join('\n'));
    await setFields(region, { ...SMALL, Steps: 30 });
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await stopWhen(page, {});
    await statusMatches(page, /^Stopped after/);
    // Neither the text nor the settings changed: Compare says what it does instead.
    await recordStatus(page);
    await region.getByRole('button', { name: 'Compare one head and many' }).click();
    await statusMatches(page, /^Trained 30 of 30 steps/);
    const said = await statuses(page);
    assert.match(said[0], /^Compare trains two new models: starting afresh\. Learning/, said.join(' | '));
    assert.ok(!said.some((t) => /changed/.test(t)), said.join(' | '));
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
    const options = () =>
      page.getByRole('combobox', { name: 'Model', exact: true }).locator('option').allTextContents();
    assert.ok(!(await options()).some((o) => o.startsWith('Trained here')), 'nothing joined the Model select');
    await region.getByRole('button', { name: 'Use the trained models', exact: true }).click();
    await page.waitForFunction(() =>
      /^Ready: Trained here \(2 × 32, 4 heads\)/.test(document.getElementById('status').textContent),
    );
    const joined = await options();
    assert.ok(
      joined.includes('Trained here (2 × 32, 1 head)') && joined.includes('Trained here (2 × 32, 4 heads)'),
      joined.join(' | '),
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
  // A field under More settings that is wrong: the disclosure opens, the field has the focus.
  await region.locator('#train-more').evaluate((d) => {
    d.open = false;
  });
  await setFields(region, { Steps: 12, Batch: '' });
  await region.locator('#train-more').evaluate((d) => {
    d.open = false;
  });
  await train.click();
  assert.match(await alert.textContent(), /Batch must be a whole number above 0/);
  assert.equal(await focused(page), 'train-batch');
  await setFields(region, { Batch: 4, Steps: 3_000_000_000 });
  await train.click();
  await page.waitForFunction(() => /Training failed/.test(document.getElementById('train-error').textContent), null, {
    timeout: 30_000,
  });
  assert.match(
    await alert.textContent(),
    /Training failed: steps must be an integer from 0 to 2147483647, got 3000000000/,
  );
  await setFields(region, { Steps: 12, 'Sample every': 6 });
  await train.click();
  await statusMatches(page, /^Trained 12 of 12 steps/);
  assert.equal(await alert.isHidden(), true, 'the message went with the problem');
  // Stop while the first step learns its vocabulary (seconds on the whole Brown sample): the run
  // ends at once, and the focus goes to what comes next.
  await region.getByRole('button', { name: 'Use a Brown corpus sample' }).click();
  await page.waitForFunction(() => document.getElementById('train-text').value.length > 100_000);
  await setFields(region, { Vocabulary: 4096 });
  await train.click();
  await region.getByRole('button', { name: 'Stop training' }).click();
  await statusMatches(page, /^Stopped before the first step was done: nothing was trained/);
  assert.equal(await train.isEnabled(), true);
  assert.equal(await focused(page), 'train-use', 'the focus went to the model of the run before');
  await context.close();
});

test(
  "memory: the training worker's heap is flat over hundreds of steps with a look at the model every few",
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
    const samples = region.getByRole('region', { name: 'Samples' }).getByRole('listitem');
    // The engine's heap in the training worker (the page's one worker that imports training-worker.mjs).
    const heap = async () => {
      const worker = page.workers().find((w) => /\/training-worker\.mjs$/.test(w.url()));
      return worker.evaluate(async () => (await (await import('/web/dist/engine.mjs')).loadCore()).heapBytesInUse());
    };
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await stopWhen(page, { looks: 4 });
    await statusMatches(page, /^Stopped after/);
    const early = await heap();
    await region.getByRole('button', { name: 'Train', exact: true }).click();
    await stopWhen(page, { lookAt: 250 });
    await statusMatches(page, /^Stopped after/);
    assert.ok(Number(/after (\d+)/.exec(await trainStatus(region))[1]) >= 250);
    assert.equal(await samples.count(), 12);
    assert.equal(await heap(), early, 'heap bytes in use in the training worker: after 50 looks as after 4');
    await context.close();
  },
);

test('no console errors, page errors or failed requests', () => {
  assert.deepEqual(suite.problems, []);
});
