// The page as a newcomer meets it: Generate in the first view (at 1280×800 and on a phone), the
// rarer settings behind "Advanced", focus that follows Generate and Stop, every label whole, and
// generated text that survives a head switched off (or is continued with the new heads when the
// switch comes during the generation).
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/first-view.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { generate, openAdvanced, pageSuite, setSampling, settled, waitReady } from './harness.mjs';

const suite = pageSuite();
before(() => suite.start());
after(() => suite.stop());

async function openReady(viewport) {
  const { page, context } = await suite.openPage({ viewport });
  await page.goto(suite.pageUrl());
  await waitReady(page);
  return { page, context };
}

// The prompt's and generated tokens' ids, from the token chips (all of them are in the list: it
// is short).
async function chipIds(page) {
  const ids = await page.locator('#tokens .chip').evaluateAll((chips) => chips.map((c) => Number(c.dataset.id)));
  assert.equal(String(ids.length), await page.locator('#tokens').getAttribute('data-count'), 'every chip is there');
  return ids;
}

// What the engine generates greedily after `prompt` (text or ids) with these heads off, in a model
// of its own (the page's JS API, in the page's origin): {prompt (ids), ids, text}.
const greedy = (page, prompt, headMask, maxTokens) =>
  page.evaluate(
    async ({ prompt, headMask, maxTokens }) => {
      const { loadModel } = await import(new URL('dist/glassbox.mjs', location.href).href);
      const model = await loadModel(new URL('models/brown-small/', location.href).href, { worker: true });
      const ids = [],
        promptIds = typeof prompt === 'string' ? await model.tokenize(prompt) : prompt;
      let text = '';
      for await (const step of model.generate(prompt, { maxTokens, temperature: 0, headMask })) {
        ids.push(step.id);
        text += step.text;
      }
      await model.dispose();
      return { prompt: promptIds, ids, text };
    },
    { prompt, headMask, maxTokens },
  );

// The Output's generated text of the token positions in [from, to).
const outputText = (page, from, to = Infinity) =>
  page.locator('#output .generated-text').evaluateAll(
    (spans, [from, to]) =>
      spans
        .filter((s) => s.dataset.positions.split(' ').some((p) => Number(p) >= from && Number(p) < to))
        .map((s) => s.textContent)
        .join(''),
    [from, to ?? 1e9],
  );

const headSwitch = (page, layer, head) => page.getByRole('button', { name: `Layer ${layer} head ${head} off` });

test('Generate and Stop are in the first view at 1280×800 and 390×844 as the shipped model is ready', async () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    const { page, context } = await openReady(viewport);
    assert.equal(await page.evaluate(() => scrollY), 0, 'the page is at its top');
    for (const name of ['Generate', 'Stop']) {
      const box = await page.getByRole('button', { name, exact: true }).boundingBox();
      assert.ok(
        box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height,
        `${name} within ${viewport.width}×${viewport.height}: ${JSON.stringify(box)}`,
      );
    }
    assert.ok(await page.getByRole('button', { name: 'Generate', exact: true }).isEnabled(), 'Generate is enabled');
    await context.close();
  }
});

test('while generating on a phone, Stop stays on the screen and the Output is in view', async () => {
  const viewport = { width: 390, height: 844 };
  const { page, context } = await openReady(viewport);
  // Greedy, and long enough (past the context, which slides) to be still running when measured.
  await setSampling(page, { 'Max tokens': 4000, Temperature: 0 });
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => Number(document.getElementById('tokens').dataset.count) >= 3 + 4);
  // Where Stop and the Output are, read in one go with whether the generation still runs.
  const seen = await page.evaluate(() => ({
    running: !document.getElementById('stop').disabled,
    stop: document.getElementById('stop').getBoundingClientRect().toJSON(),
    output: document.getElementById('output-region').getBoundingClientRect().toJSON(),
  }));
  assert.ok(seen.running, 'measured while generating');
  const inView = (box) => box.y >= 0 && box.y + Math.min(box.height, 100) <= viewport.height;
  const { stop, output } = seen;
  assert.ok(inView(stop) && stop.y + stop.height <= viewport.height, `Stop on the screen: ${JSON.stringify(stop)}`);
  assert.ok(inView(output), `the Output in view: ${JSON.stringify(output)}`);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'done');
  await context.close();
});

test('Advanced holds Int8 and Int4 weights, the cached models, Top-k and Top-p; Max tokens, Temperature and Seed stay in view', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  const advanced = page.locator('details#advanced');
  assert.equal(await advanced.locator(':scope > summary').textContent(), 'Advanced');
  assert.equal(await advanced.evaluate((d) => d.open), false, 'closed at first');
  // (hidden controls are not in the accessibility tree: found by id, then by name once shown)
  const inside = ['#quantize-int8', '#quantize-int4', '#cache-details', '#top-k', '#top-p'].map((id) =>
    page.locator(id),
  );
  for (const control of inside) {
    assert.equal(await control.count(), 1);
    assert.ok(await control.evaluate((e) => !!e.closest('details#advanced')), 'inside Advanced');
    assert.ok(!(await control.isVisible()), 'hidden while Advanced is closed');
  }
  for (const name of ['Max tokens', 'Temperature', 'Seed'])
    assert.ok(await page.getByRole('spinbutton', { name, exact: true }).isVisible(), `${name} in view`);
  assert.ok(await page.getByRole('combobox', { name: 'Model', exact: true }).isVisible());
  const modelWords = await page.evaluate(() =>
    [...document.querySelectorAll('.model-panel *')]
      .filter(
        (e) =>
          e.checkVisibility() && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() === 'Model'),
      )
      .map((e) => e.tagName),
  );
  assert.deepEqual(modelWords, ['H2'], '"Model" written once: the heading, which names the combobox');
  await openAdvanced(page);
  for (const control of [
    page.getByRole('checkbox', { name: 'Int8 weights' }),
    page.getByRole('checkbox', { name: 'Int4 weights' }),
    page.getByText(/^Cached models/),
    page.getByRole('spinbutton', { name: 'Top-k', exact: true }),
    page.getByRole('spinbutton', { name: 'Top-p', exact: true }),
  ])
    assert.ok(await control.isVisible(), 'shown once Advanced is open');
  await context.close();
});

test('keyboard Generate moves the focus to Stop, and back to Generate when done; typing keeps it', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  await setSampling(page, { 'Max tokens': 120, Seed: 1 });
  await page.getByRole('textbox', { name: 'Prompt' }).focus();
  await page.keyboard.press('Tab');
  assert.equal(
    await page.evaluate(() => document.activeElement.id),
    'generate',
    'Tab from the prompt reaches Generate',
  );
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'busy');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'stop', 'focus on Stop while it runs');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'done');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'generate', 'focus back on Generate');
  // Ctrl+Enter in the prompt: the focus stays where the person types.
  await page.getByRole('textbox', { name: 'Prompt' }).focus();
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'busy');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'prompt');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'done');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'prompt');
  await context.close();
});

test('a head switched off after a generation keeps its text and tokens, labelled, and offers to generate again without it', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  await setSampling(page, { 'Max tokens': 40, Temperature: 0 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 40 tokens/);
  const text = await page.locator('#output').textContent(),
    ids = await chipIds(page);
  assert.equal(ids.length, 3 + 40);
  assert.ok(
    await page.locator('#output-heads').isHidden(),
    'nothing to say while the heads are those it was made with',
  );
  const nextChart = () =>
    page.evaluate(() => ({
      caption: document.getElementById('next-caption').textContent,
      bars: [...document.querySelectorAll('#next-bars li')].map((li) => li.textContent),
    }));
  const lastStep = await nextChart();
  assert.match(lastStep.caption, /^For token #42;/);
  assert.equal(lastStep.bars.length, 10);

  await headSwitch(page, 2, 1).click();
  await settled(page);
  assert.equal(await page.locator('#output').textContent(), text, 'the text stays');
  assert.deepEqual(await chipIds(page), ids, 'the tokens stay');
  assert.match(await page.locator('#status').textContent(), /^Done: reached Max tokens\. 40 tokens/);
  assert.equal(await page.locator('#output-note').textContent(), 'Made with every head. Head L2 H1 off now.');
  const again = page.getByRole('button', { name: 'Generate again without L2 H1' });
  assert.ok(await again.isVisible());
  // Switched on again: the text is what these heads make; nothing to offer, and Next token shows
  // the last step's distribution again, not the comparison.
  await headSwitch(page, 2, 1).click();
  await settled(page);
  assert.ok(await page.locator('#output-heads').isHidden());
  assert.deepEqual(await nextChart(), lastStep, "Next token: the last step's chart again");
  assert.ok(await page.locator('#next-compare').isHidden());
  await headSwitch(page, 2, 1).click();
  await settled(page);

  await again.click();
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'done');
  await settled(page);
  const masked = await chipIds(page);
  assert.deepEqual(masked, [...ids.slice(0, 3), ...(await greedy(page, ids.slice(0, 3), [[2, 1]], 40)).ids]);
  assert.equal(await page.locator('#output-note').textContent(), 'Made without L2 H1.');
  assert.ok(await again.isHidden());
  await context.close();
});

test('a head switched off during a generation takes effect from the next token, within Max tokens', async () => {
  const { page, context } = await openReady({ width: 1280, height: 800 });
  const max = 240; // within the shipped model's context (256) with the prompt
  await setSampling(page, { 'Max tokens': max, Temperature: 0 });
  await generate(page);
  // (the token list shows only the chips in view: the texts are compared, by token position)
  const every = await greedy(page, 'The jury said', [], max),
    prompt = every.prompt;
  assert.equal(prompt.length, 3);
  assert.equal(every.ids.length, max, 'greedy text with every head, as long as asked');
  assert.equal(await outputText(page, 3), every.text, "the engine's greedy text, as the page shows it");

  // The switch is pressed in the page itself the moment this run's 8th token shows: greedy
  // decoding on a fast machine may end its 240 tokens before a click from here would land.
  await page.evaluate(() => {
    const list = document.getElementById('tokens');
    new MutationObserver((_, observer) => {
      if (/^Generating…/.test(document.getElementById('status').textContent) && Number(list.dataset.generated) >= 8) {
        observer.disconnect();
        document.querySelector('#thumbs .head-off[aria-label="Layer 3 head 4 off"]').click();
      }
    }).observe(list, { attributes: true, attributeFilter: ['data-generated'] });
  });
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'done', null, {
    timeout: 60_000,
  });
  await settled(page);
  const note = await page.locator('#output-note').textContent();
  const m = /^Made with every head, then without L3 H4 from generated token (\d+)\.$/.exec(note);
  assert.ok(m, `the note says from which token: ${note}`);
  const from = 3 + Number(m[1]) - 1; // the position of the first token made without the head
  assert.ok(from >= 3 + 8 && from < 3 + max, `switched while it ran (${from})`);
  assert.equal(await page.locator('#tokens').getAttribute('data-count'), String(3 + max), 'Max tokens in all');
  const before = every.ids.slice(0, from - 3);
  assert.equal(
    await outputText(page, 3, from),
    (await greedy(page, prompt, [], before.length)).text,
    'with every head up to the switch',
  );
  const rest = await greedy(page, [...prompt, ...before], [[3, 4]], 3 + max - from);
  assert.equal(
    await outputText(page, from),
    rest.text,
    'then what the model makes without the head, from the tokens shown',
  );
  assert.notEqual(
    rest.text,
    every.text.slice(-rest.text.length),
    'the head changes the text (else this test shows nothing)',
  );
  assert.match(await page.locator('#status').textContent(), new RegExp(`^Done: reached Max tokens\\. ${max} tokens`));
  assert.equal(await page.locator('#output .heads-mark').getAttribute('data-label'), 'without L3 H4');
  await context.close();
});

// Each label, button, legend and summary shows its whole text: not cut off (scrollWidth within
// clientWidth), within its panel, and not on top of another.
async function labelsWhole(page) {
  return page.evaluate(() => {
    const visible = (e) => {
      const r = e.getBoundingClientRect();
      // (checkVisibility: not inside a closed <details>, whose content still has boxes)
      return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden' && e.checkVisibility();
    };
    const texts = [...document.querySelectorAll('label, button, summary, legend, .hint, h2, h3')]
      .filter(visible)
      .filter((e) => !e.closest('.tokens, .thumbs, .visually-hidden, .skip-link'));
    const problems = [];
    for (const e of texts) {
      const name = `${e.tagName} "${e.textContent.trim().slice(0, 40)}"`;
      const style = getComputedStyle(e);
      if (style.display !== 'inline' && e.scrollWidth > e.clientWidth + 1)
        problems.push(`${name} cut off (${e.scrollWidth} > ${e.clientWidth})`);
      if (style.textOverflow === 'ellipsis') problems.push(`${name} may end in an ellipsis`);
      const r = e.getBoundingClientRect(),
        panel = e.closest('.panel')?.getBoundingClientRect();
      if (panel && (r.left < panel.left - 1 || r.right > panel.right + 1)) problems.push(`${name} outside its panel`);
    }
    for (let i = 0; i < texts.length; ++i)
      for (let j = i + 1; j < texts.length; ++j) {
        const a = texts[i],
          b = texts[j];
        if (a.contains(b) || b.contains(a)) continue;
        const p = a.getBoundingClientRect(),
          q = b.getBoundingClientRect();
        if (
          Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 &&
          Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1
        )
          problems.push(`"${a.textContent.trim().slice(0, 30)}" over "${b.textContent.trim().slice(0, 30)}"`);
      }
    return { problems, checked: texts.length };
  });
}

test('every control label is whole at 360 and 1,280 px wide, the model-file buttons too', async () => {
  for (const viewport of [
    { width: 360, height: 740 },
    { width: 1280, height: 800 },
  ]) {
    const { page, context } = await openReady(viewport);
    await openAdvanced(page);
    await page.locator('#cache-summary').click();
    await page.evaluate(() => {
      for (const d of document.querySelectorAll('#train-region details')) d.open = true; // the Train panel's too
    });
    // the model-file buttons show once "Open files on this device…" is chosen
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption('action:files');
    await page.locator('#files-panel').waitFor();
    for (const name of ['Open the four files…', 'Open their folder…', 'Open .txt files…']) {
      const input = page.getByLabel(name, { exact: true });
      assert.equal(await input.getAttribute('type'), 'file', `${name} labels a file input`);
      await input.focus();
      assert.ok(await input.evaluate((i) => i === document.activeElement), `${name}: keyboard reaches it`);
    }
    const { problems, checked } = await labelsWhole(page);
    assert.ok(checked > 30, `labels checked (${checked})`);
    assert.deepEqual(problems, [], `${viewport.width} px`);
    await context.close();
  }
});

test('no problems: no console errors, page errors, failed requests or dialogs', () => {
  assert.deepEqual(suite.problems, []);
});
