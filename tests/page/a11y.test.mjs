// The page's accessibility, checked by axe-core (WCAG 2.0-2.2 A and AA and axe's best practices) in
// every view a person reaches: the first view, after a generation with a token chosen, with the
// disclosures open, a head switched off, the Mask comparison, the classifier, the masked LM, the
// Train panel after a run, and the phone width. Zero violations in each.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/a11y.test.mjs
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';

import { arm, generate, pageSuite, setSampling, settled, waitReady } from './harness.mjs';

const suite = pageSuite();
before(() => suite.start());
after(() => suite.stop());

const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice'];

// axe's violations on the page as it is now, one line each: rule, impact, and the elements.
async function violations(page) {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy (no inline scripts)
  // stays as it is.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const results = await page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }, TAGS);
  return results.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 5).join(', ')}`);
}

async function expectNone(page, view) {
  assert.deepEqual(await violations(page), [], `axe-core violations ${view}`);
}

async function openReady(viewport) {
  const { page, context } = await suite.openPage({ viewport });
  await page.goto(suite.pageUrl());
  await waitReady(page);
  return { page, context };
}

// Opens every disclosure on the page (details elements), so that what they hold is checked too.
const openDisclosures = (page) =>
  page.evaluate(() => {
    for (const d of document.querySelectorAll('details')) d.open = true;
  });

test('the GPT: first view, after a generation, disclosures open, a head off, the Mask comparison', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  await expectNone(page, 'on the first view');

  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  await setSampling(page, { 'Max tokens': 24, Seed: 3 });
  await generate(page);
  await page.locator('#tokens .chip[data-index="12"]').click();
  await expectNone(page, 'after a generation, a token chosen');

  await openDisclosures(page);
  await expectNone(page, 'with every disclosure open');

  // A head switched off from its thumbnail's switch.
  await page.locator('#thumbs .head-off').nth(1).click();
  await page.waitForFunction(() => !document.getElementById('next-compare').hidden, null, { timeout: 30_000 });
  await expectNone(page, 'with a head switched off');

  await page.getByRole('switch', { name: /^Mask/ }).click();
  await page.waitForFunction(() => !document.getElementById('mask-compare').hidden);
  await expectNone(page, 'with the Mask comparison');
  await context.close();
});

test('a classifier and a masked LM', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  for (const model of ['brown-genre', 'brown-mlm']) {
    const select = page.getByRole('combobox', { name: 'Model', exact: true });
    const value = await select.evaluate((s, m) => [...s.options].find((o) => o.text.startsWith(m))?.value, model);
    assert.ok(value, `the Model select offers ${model}`);
    await arm(page);
    await select.selectOption(value);
    await waitReady(page);
    await expectNone(page, `with ${model}`);
  }
  await context.close();
});

test('the Train panel after a short run', { timeout: 300_000 }, async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  const region = page.getByRole('region', { name: 'Train', exact: true });
  await region.getByRole('button', { name: 'Use a Brown corpus sample' }).click();
  await page.waitForFunction(() => document.getElementById('train-text').value.length > 100_000);
  await openDisclosures(page);
  const fields = { Layers: 1, Width: 16, Heads: 2, Context: 16, Vocabulary: 300, Batch: 2, Steps: 40 };
  fields['Sample every'] = 2; // enough samples to scroll their list
  for (const [label, value] of Object.entries(fields))
    await region.getByLabel(label, { exact: true }).fill(String(value));
  await region.getByRole('button', { name: 'Train', exact: true }).click();
  await page.waitForFunction(
    () => /^Trained \d+ of \d+ steps/.test(document.getElementById('train-status').textContent),
    null,
    {
      timeout: 240_000,
    },
  );
  await expectNone(page, 'in the Train panel after a run');
  await context.close();
});

test('the phone width: first view and after a generation', async () => {
  const { page, context } = await openReady({ width: 390, height: 844 });
  await expectNone(page, 'on the first view at 390×844');
  await setSampling(page, { 'Max tokens': 8, Seed: 3 });
  await generate(page);
  await expectNone(page, 'after a generation at 390×844');
  await context.close();
});

test('no console errors, page errors, failed requests or dialogs in any scenario', () => {
  assert.deepEqual(suite.problems, []);
});
