// The page's probability charts and the non-GPT kinds of model, in headless Chromium: every bar
// (Next token, the heads-off comparison, Fill mask, Classification) is as long as its probability
// of its track's full width, measured on the rendered page against the percentage it shows; the
// heads-off comparison is one row per token with both probabilities, as the CLI computes them;
// a masked LM brings a prompt with a mask (from the Model select, or from local files with no
// example of its own), offers an example in one click when the prompt has none, and shows its
// filled-in text as plain text.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/probabilities.test.mjs
//
// Screenshots: build/page-probabilities-*.png (the comparison, the classifier with a head off,
// the masked LM; at 1280×800 and 390×844).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { arm, generate, pageSuite, root, setSampling, settled, waitReady } from './harness.mjs';

const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
// The page's results are compared with the CLI's, bit for bit: the CLI's portable arithmetic gives
// the WebAssembly build's bits (its default, fused multiply-adds, does not).
process.env.GLASSBOX_ARITHMETIC = 'portable';
const models = join(root, 'web/models');
const suite = pageSuite();
before(async () => {
  await suite.start();
  await mkdir(join(root, 'build'), { recursive: true });
});
after(() => suite.stop());

const cliJson = (args, input) => JSON.parse(execFileSync(cli, args, { input, maxBuffer: 1 << 28 }).toString());

// Every row of a list of bars as rendered: its data, spoken text, and each bar's fill and track
// widths (pixels) with the percentage shown beside it.
const rendered = (page, selector) =>
  page.locator(selector).evaluateAll((rows) =>
    rows.map((li) => {
      const values = [...li.querySelectorAll('.bar-value')].map((v) => v.textContent);
      return {
        data: { ...li.dataset },
        spoken: li.getAttribute('aria-label'),
        label: li.querySelector('.bar-label').textContent,
        bars: [...li.querySelectorAll('.bar-fill')].map((fill, i) => ({
          kind: fill.classList.contains('masked') ? 'masked' : fill.classList.contains('all') ? 'all' : '',
          fill: fill.getBoundingClientRect().width,
          track: fill.parentElement.getBoundingClientRect().width,
          shown: values[i],
        })),
      };
    }),
  );

// One absolute scale: each fill is its shown percentage of its track (within a pixel and a half:
// the percentage is rounded, and a fill is at least 1 px), and every track of the list is as wide
// as every other. probability(row, bar index) -> the probability the row carries for that bar.
function assertAbsoluteScale(rows, probability, what) {
  assert.ok(rows.length > 0, `${what}: bars`);
  const tracks = rows.flatMap((r) => r.bars.map((b) => b.track));
  assert.ok(Math.max(...tracks) - Math.min(...tracks) < 0.5, `${what}: tracks of one width, ${tracks}`);
  assert.ok(tracks[0] > 50, `${what}: tracks ${tracks[0]} px wide`);
  for (const [i, r] of rows.entries())
    for (const [j, b] of r.bars.entries()) {
      const shown = Number(/^([\d.]+)%/.exec(b.shown)?.[1]);
      const p = probability(r, j);
      assert.ok(Math.abs(shown - 100 * p) <= 0.05 + 1e-9, `${what} row ${i}: shows ${b.shown} for ${p}`);
      assert.ok(
        Math.abs(b.fill - (shown / 100) * b.track) <= 1.5,
        `${what} row ${i} bar ${j}: ${b.fill.toFixed(1)} px of ${b.track.toFixed(1)} for ${b.shown}`,
      );
    }
}

// softmax of the CLI's last row of logits for ids (with those heads off): id -> probability.
function cliNext(model, ids, mask = null) {
  const args = ['forward', '-m', model, '--tokens', ids.join(','), ...(mask ? ['--head-mask', mask] : [])];
  const last = cliJson(args).logits.at(-1);
  const max = Math.max(...last),
    sum = last.reduce((s, x) => s + Math.exp(x - max), 0);
  return last.map((x) => Math.exp(x - max) / sum);
}
const top10 = (p) =>
  p
    .map((x, id) => ({ id, x }))
    .sort((a, b) => b.x - a.x || a.id - b.id)
    .slice(0, 10)
    .map((t) => t.id);

async function openShipped(value, viewport) {
  const opened = await suite.openPage({ viewport });
  await opened.page.goto(suite.pageUrl());
  await waitReady(opened.page);
  if (value === 'shipped') return opened;
  await arm(opened.page);
  await opened.page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(value);
  await waitReady(opened.page);
  return opened;
}

const shot = (locator, name) => locator.screenshot({ path: join(root, `build/page-probabilities-${name}.png`) });

test('Next token: bars as long as their probabilities; with heads off, one row per token with both', async () => {
  const { page, context } = await openShipped('shipped');
  const model = join(models, 'brown-small');
  await setSampling(page, { Temperature: 0, 'Max tokens': 3 });
  await generate(page);
  const bars = await rendered(page, '#next-bars li');
  assert.equal(bars.length, 10);
  assertAbsoluteScale(bars, (r) => Number(r.data.probability), 'next token');
  assert.ok(Number(bars[0].data.probability) < 0.9, 'the top token is not near 100%, so a scaled bar would show');
  assert.match(bars[0].spoken, /, id \d+: [\d.]+%, sampled$/, "the row's token and percentage as text");

  // Heads off: the comparison after the last token shown (the caption names it; the text is
  // short, so every chip is in view). These two heads move the last position's distribution by
  // up to 4 points (`glassbox forward --head-mask 1:4,3:3`).
  await page.getByRole('button', { name: 'Layer 1 head 4 off' }).click();
  await page.getByRole('button', { name: 'Layer 3 head 3 off' }).click();
  await page.waitForFunction(() => !document.getElementById('next-compare').hidden);
  await settled(page);
  await page.waitForFunction(() => /L1 H4, L3 H3 off/.test(document.getElementById('next-caption').textContent));
  const position = Number(/^After token #(\d+)/.exec(await page.locator('#next-caption').textContent())[1]);
  const chips = await page
    .locator('#tokens .chip')
    .evaluateAll((c) => c.map((x) => [Number(x.dataset.index), Number(x.dataset.id)]));
  const ids = chips
    .sort((a, b) => a[0] - b[0])
    .map(([, id]) => id)
    .slice(0, position + 1);
  assert.equal(ids.length, position + 1, 'the tokens up to the one compared after');
  const all = cliNext(model, ids),
    masked = cliNext(model, ids, '1:4,3:3');
  const rows = await rendered(page, '#next-compare-bars li');
  const want = [...new Set([...top10(all), ...top10(masked)])];
  assert.deepEqual(
    rows.map((r) => Number(r.data.id)).sort((a, b) => a - b),
    want.sort((a, b) => a - b),
    "one row per token among either distribution's ten likeliest",
  );
  for (const r of rows) {
    const id = Number(r.data.id);
    assert.deepEqual(
      r.bars.map((b) => b.kind),
      ['all', 'masked'],
      `token ${id}: both bars on its row`,
    );
    assert.ok(Math.abs(Number(r.data.all) - all[id]) < 1e-5, `token ${id} with every head`);
    assert.ok(Math.abs(Number(r.data.masked) - masked[id]) < 1e-5, `token ${id} with the heads off`);
    assert.match(r.spoken, /: [\d.]+% with every head, [\d.]+% with heads L1 H4, L3 H3 off$/, `token ${id} as text`);
  }
  assertAbsoluteScale(rows, (r, j) => Number(j === 0 ? r.data.all : r.data.masked), 'heads-off comparison');
  assert.ok(
    rows.some((r) => Math.abs(Number(r.data.all) - Number(r.data.masked)) > 0.01),
    'the heads change some probability (so equal lengths would be wrong)',
  );
  await shot(page.locator('#next-region'), 'compare-1280');
  await context.close();
});

test("Classification: every label's bar as long as its probability; with a head off, both bars per label", async () => {
  const { page, context } = await openShipped('shipped:brown-genre');
  const model = join(models, 'brown-genre');
  const text = await page.getByRole('textbox', { name: 'Prompt' }).inputValue();
  const every = cliJson(['classify', '-m', model, '-p', text]).probabilities;
  const rows = await rendered(page, '#classify-bars li');
  assert.deepEqual(
    rows.map((r) => r.data.label),
    ['fiction', 'news', 'nonfiction'],
  );
  for (const r of rows) assert.ok(Math.abs(Number(r.data.probability) - every[r.data.label]) < 1e-6, r.data.label);
  assertAbsoluteScale(rows, (r) => Number(r.data.probability), 'classification');

  await page.getByRole('button', { name: 'Layer 0 head 1 off' }).click();
  await settled(page);
  await page.waitForFunction(() => /with every head/.test(document.getElementById('classify-verdict').textContent));
  const off = cliJson(['classify', '-m', model, '-p', text, '--head-mask', '0:1']).probabilities;
  const pairs = await rendered(page, '#classify-bars li');
  for (const r of pairs) {
    assert.deepEqual(
      r.bars.map((b) => b.kind),
      ['all', 'masked'],
      `${r.data.label}: both bars`,
    );
    assert.ok(Math.abs(Number(r.data.all) - every[r.data.label]) < 1e-6, `${r.data.label} with every head`);
    assert.ok(Math.abs(Number(r.data.probability) - off[r.data.label]) < 1e-6, `${r.data.label} with the head off`);
    assert.match(r.spoken, /^\w+: [\d.]+% with head L0 H1 off \(every head: [\d.]+%\)/);
  }
  assertAbsoluteScale(pairs, (r, j) => Number(j === 0 ? r.data.all : r.data.probability), 'classification, head off');
  assert.match(await page.locator('#classify-region .pair-legend').textContent(), /Every head.*Head L0 H1 off/);
  await shot(page.locator('#classify-region'), 'classify-1280');
  await context.close();
});

test('Fill mask: a masked LM brings a prompt with a mask, its bars are absolute, its filled-in text is plain', async () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    // The GPT's example, unedited, is replaced by the masked LM's.
    const { page, context } = await openShipped('shipped:brown-mlm', viewport);
    const model = join(models, 'brown-mlm');
    const prompt = page.getByRole('textbox', { name: 'Prompt' });
    const text = await prompt.inputValue();
    assert.match(text, /<\|mask\|>/, 'the prompt has a mask');
    const want = cliJson(['fill-mask', '-m', model, '-p', text, '--top', '5']);
    const items = await page.locator('#fill-mask-list > li').count();
    assert.equal(items, want.length);
    for (let i = 0; i < items; ++i) {
      const rows = await rendered(page, `#fill-mask-list > li:nth-child(${i + 1}) li.bar`);
      assert.deepEqual(
        rows.map((r) => Number(r.data.id)),
        want[i].candidates.map((c) => c.id),
      );
      assertAbsoluteScale(rows, (r) => Number(r.data.probability), `mask ${i + 1}`);
    }
    // The filled-in text reads as a sentence: each mask (with the space before it, which is the
    // mask's) replaced by its first guess (with its own space), the guesses' words marked.
    const marks = await page.locator('#fill-mask-caption mark').allTextContents();
    assert.deepEqual(
      marks,
      want.map((w) => w.candidates[0].token.trimStart() || w.candidates[0].token),
    );
    let sentence = text;
    for (const w of want) sentence = sentence.replace(/ ?<\|mask\|>/, w.candidates[0].token);
    assert.match(sentence, /^The President of the United \S+ said/);
    assert.equal(await page.locator('#fill-mask-caption .filled').textContent(), sentence);
    await shot(page.locator('#fill-mask-region'), `mlm-${viewport.width}`);

    // No mask: the message, and an example in one click.
    await prompt.fill('The jury said the city was well run.');
    await settled(page);
    assert.match(await page.locator('#fill-mask-caption').textContent(), /^The prompt has no mask/);
    await page.getByRole('button', { name: 'Use an example' }).click();
    await settled(page);
    assert.match(await prompt.inputValue(), /<\|mask\|>/);
    assert.equal(await page.locator('#fill-mask-list > li').count(), 2, 'the example has two masks, both guessed');
    await context.close();
  }
});

test('a masked LM from local files, with no example of its own, gets a prompt with a mask', async () => {
  const { page, context } = await openShipped('shipped');
  const select = page.getByRole('combobox', { name: 'Model', exact: true });
  await select.selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page
    .getByLabel('The four files')
    .setInputFiles(
      ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((f) => join(models, 'brown-mlm', f)),
    );
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /a masked language model/);
  assert.match(await page.getByRole('textbox', { name: 'Prompt' }).inputValue(), /<\|mask\|>/);
  assert.ok((await page.locator('#fill-mask-list > li').count()) > 0, 'its guesses');
  await context.close();
});

test('no console errors, page errors, failed requests or dialogs', () => {
  assert.deepEqual(suite.problems, []);
});
