// The page's Experiments region in headless Chromium, by accessible names, on the shipped model
// against the native CLI's JSON (patch, attribute, forward --saliency/--neurons/--neuron,
// generate --steer): the example's patching grids fill in layer by layer as the progress bar
// advances and equal the CLI's; Stop patching ends a run between layers; attribution's bars,
// saliency's tints, the neurons of the last token and a neuron over the prompt equal the CLI's;
// steering with coefficient 0 writes the plain text and with the example's coefficient the CLI's
// steered text; Copy JSON copies the CLI's keys and numbers. A llama (no tokenizer, no backward
// pass) patches from token ids and shows the library's saliency error in the region.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/experiments.test.mjs
//
// Screenshots: build/page-experiments-1280.png, build/page-experiments-390.png (the patching grids).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { arm, pageSuite, root, waitReady } from './harness.mjs';

const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
// The page's results are compared with the CLI's, bit for bit: the CLI's portable arithmetic gives
// the WebAssembly build's bits (its default, fused multiply-adds, does not).
process.env.GLASSBOX_ARITHMETIC = 'portable';
const shipped = join(root, 'web/models/brown-small');
const run = (...args) =>
  JSON.parse(execFileSync(cli, [...args, '-m', shipped], { encoding: 'utf8', maxBuffer: 1 << 28 }));

const CLEAN = 'When Mary and John went to the store, John gave a drink to';
const CORRUPTED = 'When Mary and John went to the store, Mary gave a drink to';
const SITES = ['resid_pre', 'attn_out', 'mlp_out', 'head'];

const suite = pageSuite();
before(() => suite.start());
after(() => suite.stop());

let page, region;

// Waits for the visible tab panel's run to end (its status done, or its error shown).
async function ran(panel) {
  await page.waitForFunction(
    (id) => {
      const p = document.getElementById(id);
      return p.querySelector('.exp-status').dataset.kind === 'done' || !p.querySelector('.exp-error').hidden;
    },
    await panel.getAttribute('id'),
    { timeout: 60_000 },
  );
  const error = panel.locator('.exp-error');
  return (await error.isVisible())
    ? { error: await error.textContent() }
    : { status: await panel.getByRole('status').textContent() };
}

async function openTab(name) {
  await region.getByRole('tab', { name, exact: true }).click();
  const panel = region.getByRole('tabpanel', { name, exact: true });
  await panel.waitFor();
  return panel;
}

// A grid's cells' values ([row][col]) from their data-value.
const gridValues = (panel, name) =>
  panel
    .getByRole('grid', { name, exact: true })
    .evaluate((t) =>
      [...t.tBodies[0].rows].map((r) =>
        [...r.querySelectorAll('td')].map((td) => (td.dataset.value === undefined ? null : Number(td.dataset.value))),
      ),
    );

function near(actual, expected, tolerance, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  expected.forEach((e, i) => {
    if (Array.isArray(e)) return near(actual[i], e, tolerance, `${what}[${i}]`);
    worst = Math.max(worst, Math.abs(actual[i] - e));
    assert.ok(Math.abs(actual[i] - e) <= tolerance, `${what}[${i}]: ${actual[i]} vs ${e}`);
  });
  return worst;
}

const copied = () => page.evaluate(() => navigator.clipboard.readText()).then(JSON.parse);

test('the region is there once the model is, with the example ready, and nothing of it loads at start', async () => {
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  ({ page } = await suite.openPage({ context }));
  // When the status line first says Ready (the page's clock), and when the region's code is asked
  // for (this process's: the same computer's clock).
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      const status = document.getElementById('status');
      if (status && /^Ready/.test(status.textContent)) {
        window.readyAt = Date.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  let askedAt = null;
  await page.route('**/app/experiments-panel.mjs', (route) => {
    askedAt ??= Date.now();
    return route.continue();
  });
  await page.goto(suite.pageUrl());
  await waitReady(page);
  region = page.getByRole('region', { name: 'Experiments' });
  await region.waitFor();
  // The region's code is fetched once the model is ready, not with the page.
  const readyAt = await page.evaluate(() => window.readyAt);
  assert.ok(
    askedAt !== null && readyAt !== undefined && askedAt >= readyAt,
    `asked at ${askedAt}, ready at ${readyAt}`,
  );
  const box = (name) => region.getByRole('textbox', { name, exact: true });
  assert.equal(await box('Clean text').inputValue(), CLEAN);
  assert.equal(await box('Corrupted text').inputValue(), CORRUPTED);
  assert.equal(await box('Answer').inputValue(), ' Mary');
  assert.equal(await box('Wrong answer').inputValue(), ' John');
  assert.deepEqual(
    await region
      .getByRole('tab')
      .allTextContents()
      .then((t) => t.map((s) => s.trim())),
    ['Patching', 'Attribution', 'Saliency', 'Steering', 'Neurons'],
  );
  assert.equal(await region.getByRole('button', { name: 'Stop patching' }).isDisabled(), true);
  assert.equal(await region.getByRole('button', { name: 'Copy JSON' }).isDisabled(), true, 'nothing to copy yet');
});

test("patching: the grids fill in layer by layer with the progress bar, and equal the CLI's patch", async () => {
  const want = run('patch', '--clean', CLEAN, '--corrupted', CORRUPTED, '--answer', ' Mary', '--wrong', ' John');
  const panel = region.getByRole('tabpanel', { name: 'Patching' });
  // Each change of the progress bar's value, with how many cells were computed then.
  await page.evaluate(() => {
    window.patchSteps = [];
    const bar = document.getElementById('exp-patch-progress');
    new MutationObserver(() =>
      window.patchSteps.push({
        value: bar.value,
        max: bar.max,
        cells: document.querySelectorAll('#exp-patch-grids td.computed').length,
      }),
    ).observe(bar, { attributes: true, attributeFilter: ['value'] });
  });
  await panel.getByRole('button', { name: 'Run patching' }).click();
  const { status, error } = await ran(panel);
  assert.equal(error, undefined);
  assert.match(
    status,
    /^Done in [\d.]+ s: logit\(“ Mary”\) − logit\(“ John”\) is -1\.761 on the clean text, -1\.405 on the corrupted one\.$/,
  );
  const layers = want.resid_pre.length,
    T = want.resid_pre[0].length,
    heads = want.head[0].length;
  const steps = await page.evaluate(() => window.patchSteps.filter((s) => s.max > 1));
  assert.deepEqual(
    steps.map((s) => s.value),
    Array.from({ length: 4 * layers }, (_, i) => i + 1),
    'the bar moved one layer at a time',
  );
  // The grid filled as the run went: after layer k of a site, k rows of it more.
  const perRow = (i) => (i < 3 * layers ? T : heads);
  let cells = 0;
  steps.forEach((s, i) => {
    cells += perRow(i);
    assert.equal(s.cells, cells, `cells computed at step ${i + 1}`);
  });
  const progress = panel.getByRole('progressbar', { name: 'Patching progress' });
  assert.equal(await progress.getAttribute('value'), '1');

  for (const site of SITES) {
    const shown = await gridValues(panel, site);
    const worst = near(shown, want[site], 1e-4, site);
    console.log(
      `${site}: ${shown.length} × ${shown[0].length}, largest difference from the CLI ${worst.toExponential(2)}`,
    );
  }
  // A cell's accessible name and the readout under the pointer say its value.
  const cell = panel
    .getByRole('grid', { name: 'resid_pre' })
    .getByRole('gridcell', { name: /^layer 0, position 9 “ John” \(corrupted: “ Mary”\): / });
  assert.match(await cell.getAttribute('aria-label'), /: 1\.000$/);
  await cell.hover();
  assert.match(
    await panel.locator('.vg-readout').first().textContent(),
    /^resid_pre: layer 0, position 9 “ John” .*: 1\.000$/,
  );
  // The keyboard: the grid's one tab stop, arrow keys move the cursor.
  const first = panel.getByRole('grid', { name: 'head' }).getByRole('gridcell').first();
  await first.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), /^layer 1, head 1: /);

  await panel.getByRole('button', { name: 'Copy JSON' }).click();
  const json = await copied();
  near([json.clean, json.corrupted], [want.clean, want.corrupted], 1e-5, 'metrics');
  for (const site of SITES) near(json[site], want[site], 1e-4, `copied ${site}`);
  assert.equal(json.tokens.clean.length, T);
});

test('Stop patching ends the run between layers: the layers done stay, the rest stays empty', async () => {
  const panel = region.getByRole('tabpanel', { name: 'Patching' });
  // Stop as the second layer is reported (as a person would, mid-run).
  await page.evaluate(() => {
    const bar = document.getElementById('exp-patch-progress');
    const observer = new MutationObserver(() => {
      if (bar.max > 1 && bar.value >= 2) {
        observer.disconnect();
        document.getElementById('exp-patch-stop').click();
      }
    });
    observer.observe(bar, { attributes: true, attributeFilter: ['value'] });
  });
  await panel.getByRole('button', { name: 'Run patching' }).click();
  const { status } = await ran(panel);
  assert.match(status, /^Stopped/);
  const progress = panel.getByRole('progressbar', { name: 'Patching progress' });
  const [value, max] = [Number(await progress.getAttribute('value')), Number(await progress.getAttribute('max'))];
  assert.ok(value >= 2 && value < max, `stopped between layers (${value} of ${max})`);
  const empty = await panel.locator('td.vg-cell:not(.computed)').count();
  assert.ok(empty > 0, 'the layers after Stop are not computed');
  assert.equal(await panel.getByRole('button', { name: 'Run patching' }).isEnabled(), true);
  assert.equal(await panel.getByRole('button', { name: 'Stop patching' }).isDisabled(), true);
  assert.equal(await panel.getByRole('button', { name: 'Copy JSON' }).isDisabled(), true, 'no result to copy');
});

test("the library's errors show in the tab: prompts of different lengths, an answer of several tokens", async () => {
  const panel = region.getByRole('tabpanel', { name: 'Patching' });
  const corrupted = region.getByRole('textbox', { name: 'Corrupted text' });
  await corrupted.fill(`${CORRUPTED} the`);
  await panel.getByRole('button', { name: 'Run patching' }).click();
  const { error } = await ran(panel);
  assert.match(error, /^Patching failed: .*\b14\b.*\b15\b/, 'both lengths named');
  await corrupted.fill(CORRUPTED);
  const answer = region.getByRole('textbox', { name: 'Answer', exact: true });
  await answer.fill(' Mary Jane');
  await panel.getByRole('button', { name: 'Run patching' }).click();
  assert.match((await ran(panel)).error, /^Patching failed: answer " Mary Jane" is 2 tokens/);
  await answer.fill(' Mary');
  assert.equal(await panel.getByRole('button', { name: 'Copy JSON' }).isDisabled(), true, 'no result to copy');
});

test("attribution: a bar per head and per MLP, equal to the CLI's attribute", async () => {
  const want = run('attribute', '-p', CLEAN, '--answer', ' Mary', '--wrong', ' John');
  const panel = await openTab('Attribution');
  await panel.getByRole('button', { name: 'Run attribution' }).click();
  assert.equal((await ran(panel)).error, undefined);
  near(await gridValues(panel, 'Heads'), want.heads, 1e-5, 'heads');
  const mlp = await panel
    .getByRole('list', { name: 'MLPs' })
    .getByRole('listitem')
    .evaluateAll((li) => li.map((l) => Number(l.dataset.value)));
  near(mlp, want.mlp, 1e-5, 'mlp');
  const parts = await panel
    .getByRole('list', { name: 'Other parts' })
    .getByRole('listitem')
    .evaluateAll((li) => Object.fromEntries(li.map((l) => [l.dataset.part, Number(l.dataset.value)])));
  near([parts.embed, parts.pos_embed, parts.bias], [want.embed, want.pos_embed, want.bias], 1e-5, 'parts');
  assert.match(await panel.locator('.exp-total').textContent(), /^logit\(“ Mary”\) − logit\(“ John”\) = −1\.761/);
  // A bar's direction is its sign: MLP 0 pulls toward " John".
  const bar = panel.getByRole('listitem', { name: /^MLP 0: / });
  assert.equal(await bar.locator('.signed-fill').evaluate((f) => f.classList.contains('negative')), want.mlp[0] < 0);
  await panel.getByRole('button', { name: 'Copy JSON' }).click();
  const json = await copied();
  for (const key of ['embed', 'pos_embed', 'bias', 'total', 'residual']) near([json[key]], [want[key]], 1e-5, key);
  near(json.heads, want.heads, 1e-5, 'copied heads');
});

test("saliency: the prompt's chips tinted by the CLI's gradient × input of the answer", async () => {
  const want = run('forward', '-p', CLEAN, '--saliency', '--target', ' Mary');
  const panel = await openTab('Saliency');
  await panel.getByRole('button', { name: 'Run saliency' }).click();
  assert.equal((await ran(panel)).error, undefined);
  const chips = panel.getByRole('list', { name: 'Saliency' }).locator('.chip');
  const scores = await chips.evaluateAll((cs) => cs.map((c) => Number(c.dataset.score)));
  const scale = Math.max(...want.saliency.map(Math.abs));
  near(scores, want.saliency, 1e-4 * scale, 'saliency');
  // The strongest chip is at full colour, blue if it raises the answer, red if it lowers it.
  const top = want.saliency.findIndex((s) => Math.abs(s) === scale);
  assert.equal(
    await chips.nth(top).evaluate((c) => getComputedStyle(c).backgroundColor),
    want.saliency[top] > 0 ? 'rgb(33, 102, 172)' : 'rgb(178, 24, 43)',
  );
  assert.match(await chips.nth(top).getAttribute('aria-label'), new RegExp(`^#${top} “.*”: −?\\d`));
  assert.match(await panel.textContent(), /Saliency of log p\(“ Mary”\) after the prompt/);
  await panel.getByRole('button', { name: 'Copy JSON' }).click();
  assert.equal((await copied()).target, want.target);
});

test("steering: coefficient 0 writes the plain text; the example's coefficient the CLI's steered text", async () => {
  const panel = await openTab('Steering');
  const field = (name) => panel.getByRole('spinbutton', { name, exact: true });
  const text = (name) => panel.getByRole('region', { name }).locator('.generated-text').textContent();
  const layer = await field('Steering layer').inputValue();
  await field('Coefficient').fill('0');
  await panel.getByRole('button', { name: 'Run steering' }).click();
  assert.match((await ran(panel)).status, /the same text both ways/);
  const plain = await text('Plain generation');
  assert.ok(plain.length > 0);
  assert.equal(await text('Steered generation'), plain);

  await field('Coefficient').fill('3');
  await panel.getByRole('button', { name: 'Run steering' }).click();
  assert.match((await ran(panel)).status, /the steering changed the text/);
  const prompt = await panel.getByRole('textbox', { name: 'Text to continue' }).inputValue();
  const plus = await panel.getByRole('textbox', { name: 'Steer toward' }).inputValue(),
    minus = await panel.getByRole('textbox', { name: 'Steer away from' }).inputValue();
  const generate = (steer) =>
    execFileSync(cli, ['generate', '-m', shipped, '-p', prompt, '-n', '20', '--temperature', '0', ...steer], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).replace(/\n$/, '');
  assert.equal(await text('Plain generation'), generate([]));
  assert.equal(await text('Steered generation'), generate(['--steer', `${layer}:3:${plus}/${minus}`]));
  // A layer past the model's is refused under the inputs, before anything runs.
  await field('Steering layer').fill('99');
  await panel.getByRole('button', { name: 'Run steering' }).click();
  assert.match((await ran(panel)).error, /^Steering layer: write a whole number from 0 to 5\.$/);
  await field('Steering layer').fill(layer);
});

test("neurons: the last token's top neurons per layer, and one over the prompt, equal the CLI's", async () => {
  const want = run('forward', '-p', CLEAN, '--neurons', '5');
  const panel = await openTab('Neurons');
  await panel.getByRole('button', { name: 'Run neurons' }).click();
  assert.equal((await ran(panel)).error, undefined);
  const last = want.neurons[0].length - 1;
  const chips = panel.getByRole('list', { name: 'Prompt tokens' }).getByRole('button');
  assert.equal(await chips.count(), last + 1);
  assert.equal(await chips.nth(last).getAttribute('aria-pressed'), 'true', 'the last token is selected');
  const table = panel.getByRole('table', { name: 'Top neurons' });
  const shown = async () =>
    table.getByRole('button').evaluateAll((bs) =>
      bs.map((b) => ({
        layer: Number(b.dataset.layer),
        index: Number(b.dataset.index),
        value: Number(b.dataset.value),
      })),
    );
  const expect = (position) =>
    want.neurons.flatMap((layer, l) => layer[position].map((n) => ({ layer: l, index: n.index, value: n.value })));
  const check = (got, wanted) => {
    assert.deepEqual(
      got.map((n) => [n.layer, n.index]),
      wanted.map((n) => [n.layer, n.index]),
    );
    near(
      got.map((n) => n.value),
      wanted.map((n) => n.value),
      1e-5,
      'neuron values',
    );
  };
  check(await shown(), expect(last));
  // Another token: its own neurons.
  await chips.nth(3).click();
  check(await shown(), expect(3));
  // A neuron over the prompt.
  const { layer, index } = expect(3)[5];
  const over = run('forward', '-p', CLEAN, '--neuron', `${layer}:${index}`).neuron;
  await table.getByRole('button', { name: new RegExp(`^Layer ${layer} neuron ${index}: `) }).click();
  await page.waitForFunction(() => document.querySelector('#exp-neur-result .chip[data-score]'));
  const scores = await chips.evaluateAll((cs) => cs.map((c) => Number(c.dataset.score)));
  near(scores, over, 1e-5, 'the neuron over the prompt');
  assert.match(
    await panel.locator('.exp-neuron-caption').textContent(),
    new RegExp(`^Layer ${layer} neuron ${index} over the prompt: strongest at #`),
  );
  await panel.getByRole('button', { name: 'Copy JSON' }).click();
  const json = await copied();
  assert.deepEqual(json.neuron.layer, layer);
  near(json.neuron.values, over, 1e-5, 'copied neuron');
});

test('axe-core finds no accessibility problem in any tab, its results shown', async () => {
  const axe = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice'];
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe);
  for (const name of ['Patching', 'Attribution', 'Saliency', 'Steering', 'Neurons']) {
    await openTab(name);
    const found = await page.evaluate(async (values) => {
      const r = await window.axe.run('#experiments-region', {
        runOnly: { type: 'tag', values },
        resultTypes: ['violations'],
      });
      return r.violations.map(
        (v) =>
          `${v.id} (${v.impact}): ${v.nodes
            .slice(0, 5)
            .map((n) => n.target.join(' '))
            .join(', ')}`,
      );
    }, tags);
    assert.deepEqual(found, [], `axe-core violations in ${name}`);
  }
});

test('screenshots: the patching grids at 1280×800 and 390×844', async () => {
  mkdirSync(join(root, 'build'), { recursive: true });
  let panel = await openTab('Patching');
  await panel.getByRole('button', { name: 'Run patching' }).click();
  await ran(panel);
  await region.screenshot({ path: join(root, 'build/page-experiments-1280.png') });
  const phone = await suite.browser.newContext({ viewport: { width: 390, height: 844 } });
  const { page: small } = await suite.openPage({ context: phone });
  await small.goto(suite.pageUrl());
  await waitReady(small);
  const smallRegion = small.getByRole('region', { name: 'Experiments' });
  await smallRegion.getByRole('button', { name: 'Run patching' }).click();
  await small.waitForFunction(() => document.querySelector('#exp-patching .exp-status').dataset.kind === 'done');
  const width = await small.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the page does not scroll sideways on a phone (${width} px)`);
  await smallRegion.screenshot({ path: join(root, 'build/page-experiments-390.png') });
  await phone.close();
});

test("a llama without a tokenizer: patching from token ids, and saliency's error from the library", async () => {
  const fixture = join(root, 'tests/fixtures/llama-gqa');
  await page
    .getByRole('combobox', { name: 'Model', exact: true })
    .selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page
    .getByLabel('Open the four files…')
    .setInputFiles(['config.json', 'model.safetensors'].map((f) => join(fixture, f)));
  await waitReady(page);
  assert.equal(await region.getByRole('textbox', { name: 'Clean text' }).inputValue(), '5, 9, 12, 7, 3, 9');
  assert.equal(await region.getByRole('textbox', { name: 'Answer', exact: true }).inputValue(), '#12');
  let panel = await openTab('Patching');
  assert.equal(await panel.locator('.vg-cell').count(), 0, 'the shipped model’s grids went with it');
  await panel.getByRole('button', { name: 'Run patching' }).click();
  assert.equal((await ran(panel)).error, undefined);
  const grid = await gridValues(panel, 'resid_pre');
  assert.equal(grid.length, 2, 'two layers');
  assert.equal(grid[0].length, 6, 'six positions');
  assert.ok(grid.flat().every(Number.isFinite));
  panel = await openTab('Saliency');
  await panel.getByRole('button', { name: 'Run saliency' }).click();
  const { error } = await ran(panel);
  assert.equal(
    error,
    'Saliency failed: saliency needs a backward pass, which glassbox has for gpt2 and openai-gpt models; this one is llama',
  );
  // Text where ids are wanted is the page's own message.
  await region.getByRole('textbox', { name: 'Answer', exact: true }).fill(' Mary');
  await panel.getByRole('button', { name: 'Run saliency' }).click();
  assert.equal((await ran(panel)).error, 'Answer: this model has no tokenizer: write a token id, e.g. #12.');
  assert.equal(await region.getByRole('textbox', { name: 'Answer', exact: true }).getAttribute('aria-invalid'), 'true');
});

test('no page errors, console errors or failed requests', () => {
  assert.deepEqual(suite.problems, []);
});
