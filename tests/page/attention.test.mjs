// The Attention panel in headless Chromium, by accessible names: after a long generation the large
// heatmap shows the latest token's row and column (the end of the diagonal), unless the person
// scrolled it; its readout describes the same cell under a new layer, head, head mask or text (the
// CLI's values); layers are numbered from 0 in every panel; the heads' × switches are targets of
// 24 px or more that cover no thumbnail (1280×800 and 390×844); the Mask switch's maps have token
// labels and show a head that is switched off as off.
//
//   GLASSBOX_CLI=build/native/glassbox node --test tests/page/attention.test.mjs
//
// Screenshots: build/page-attention-1280.png, build/page-attention-390.png (after a long
// generation), build/page-attention-mask.png (the Mask switch with a head off).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { generate, pageSuite, root, settled, setSampling, waitReady } from './harness.mjs';

const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
// The page's results are compared with the CLI's, bit for bit: the CLI's portable arithmetic gives
// the WebAssembly build's bits (its default, fused multiply-adds, does not).
process.env.GLASSBOX_ARITHMETIC = 'portable';
const suite = pageSuite();
before(() => suite.start());
after(() => suite.stop());

// The CLI's attention [layer][head][query][key] for ids, with heads off ("L:H" strings).
function cliAttention(ids, off = []) {
  const args = ['forward', '--tokens', ids.join(','), '--attention'];
  if (off.length) args.push('--head-mask', off.join(','));
  return JSON.parse(execFileSync(cli, args, { maxBuffer: 1 << 28 }).toString()).attention;
}

const frames = (page) =>
  page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

const promptIds = (page) =>
  page.locator('#tokens .chip').evaluateAll((chips) => chips.map((c) => Number(c.dataset.id)));

async function openReady(viewport) {
  const { page } = await suite.openPage({ viewport });
  await page.goto(suite.pageUrl());
  await waitReady(page);
  return page;
}

// Where the latest token's row and column are, against the part of the map in view (inside the
// scroller, past the sticky label strips), in CSS pixels.
const latestCell = (page) =>
  page.evaluate(() => {
    const s = document.getElementById('heatmap-scroll'),
      overlay = document.getElementById('heatmap-overlay');
    const cell = parseFloat(overlay.style.getPropertyValue('--cell')),
      T = Math.round(parseFloat(overlay.style.width) / cell),
      label = parseFloat(document.getElementById('heatmap-corner').style.width);
    const box = s.getBoundingClientRect(),
      map = document.getElementById('heatmap').getBoundingClientRect();
    const view = {
      left: box.left + s.clientLeft + label,
      right: box.left + s.clientLeft + s.clientWidth,
      top: box.top + s.clientTop + label,
      bottom: box.top + s.clientTop + s.clientHeight,
    };
    const at = (T - 1) * cell;
    return {
      T,
      larger: label + T * cell > s.clientWidth && label + T * cell > s.clientHeight,
      column: map.left + at >= view.left - 1 && map.left + at + cell <= view.right + 1,
      row: map.top + at >= view.top - 1 && map.top + at + cell <= view.bottom + 1,
      scroll: [s.scrollLeft, s.scrollTop],
    };
  });

let main; // the page of the scenarios at 1280×800

test('after a long generation the heatmap shows the latest token, unless the person scrolled it (1280×800 and 390×844)', async () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    const page = await openReady(viewport);
    if (viewport.width === 1280) main = page;
    const name = `${viewport.width}×${viewport.height}`;
    await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
    await settled(page);
    await setSampling(page, { 'Max tokens': 200, Seed: 1 });
    assert.match(await generate(page), /^Done: reached Max tokens\. 200 tokens/);
    await page.locator('#heatmap-scroll').scrollIntoViewIfNeeded();
    await frames(page);
    let at = await latestCell(page);
    assert.ok(at.T >= 200, `${name}: the map has every token (${at.T})`);
    assert.ok(at.larger, `${name}: the map is larger than its view (else this proves nothing)`);
    assert.ok(at.row && at.column, `${name}: the latest token's row and column are in view (${JSON.stringify(at)})`);
    await page.screenshot({
      path: join(root, `build/page-attention-${viewport.width}.png`),
      clip: await page.locator('#heatmap-scroll').boundingBox(),
    });

    // The person scrolls the map back to the start: a redraw (another layer) leaves it there.
    await page.locator('#heatmap-scroll').evaluate((s) => s.scrollTo(0, 0));
    await frames(page);
    await page.getByRole('combobox', { name: 'Layer' }).selectOption('2');
    await frames(page);
    at = await latestCell(page);
    assert.deepEqual(at.scroll, [0, 0], `${name}: the map stays where the person scrolled it`);
    assert.ok(!at.row && !at.column, `${name}: ... away from the latest token`);

    // ... also while tokens stream in; the next generation follows the latest token again.
    await setSampling(page, { Seed: 2 });
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    // (once the map has scrolled itself to follow the tokens, or, should the run be that fast, after it)
    await page.waitForFunction(() => {
      const s = document.getElementById('heatmap-scroll');
      return (s.scrollLeft > 0 && s.scrollTop > 0) || document.getElementById('status').dataset.kind !== 'busy';
    });
    await page.locator('#heatmap-scroll').evaluate((s) => s.scrollTo(0, 0));
    await page.waitForFunction(() => document.getElementById('status').dataset.kind !== 'busy', null, {
      timeout: 60_000,
    });
    await frames(page);
    assert.deepEqual((await latestCell(page)).scroll, [0, 0], `${name}: scrolled during the generation, it stays`);
    await setSampling(page, { Seed: 3 });
    await generate(page);
    await frames(page);
    at = await latestCell(page);
    assert.ok(at.row && at.column, `${name}: the next generation shows the latest token again`);
  }
});

test('the readout describes the same cell under a new layer, head, head mask and text, with the CLI’s values', async () => {
  const page = main;
  const readout = () => page.locator('#heatmap-readout').textContent();
  const value = (text) => Number(/: ([\d.]+) \(/.exec(text)?.[1]);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said it did find that');
  await settled(page);
  const attention = page.getByRole('region', { name: 'Attention', exact: true });
  await attention.getByRole('combobox', { name: 'Layer' }).selectOption('0');
  await attention.getByRole('combobox', { name: 'Head' }).selectOption('0');
  const ids = await promptIds(page);
  const q = ids.length - 1,
    k = 2;
  const reference = cliAttention(ids);
  // The keyboard cursor: focus puts it on the last row; Home and → → take it to key 2.
  await page.mouse.move(1, 1);
  await page.locator('#heatmap').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const cellName = new RegExp(`: #${q} .* → #${k} “ said”: `);
  let text = await readout();
  assert.match(text, /^Layer 0, head 0: /);
  assert.match(text, cellName);
  assert.ok(Math.abs(value(text) - reference[0][0][q][k]) <= 1e-4, `${text} (CLI ${reference[0][0][q][k]})`);

  for (const [layer, head] of [
    [3, 0],
    [3, 5],
  ]) {
    await attention.getByRole('combobox', { name: 'Layer' }).selectOption(String(layer));
    await attention.getByRole('combobox', { name: 'Head' }).selectOption(String(head));
    await frames(page);
    text = await readout();
    assert.match(text, new RegExp(`^Layer ${layer}, head ${head}: `), 'the readout follows Layer and Head');
    assert.match(text, cellName);
    const expected = reference[layer][head][q][k];
    assert.ok(Math.abs(value(text) - expected) <= 1e-4, `${text} (CLI ${expected})`);
  }

  // Switched off, the head's attention is multiplied by 0 (the CLI's --head-mask too), and the readout says so.
  const switch35 = page.getByRole('button', { name: 'Layer 3 head 5 off' });
  await switch35.click();
  await settled(page);
  await frames(page);
  assert.equal(cliAttention(ids, ['3:5'])[3][5][q][k], 0);
  text = await readout();
  assert.match(text, /^Layer 3, head 5 \(switched off: its attention is multiplied by 0\): /);
  assert.match(text, cellName);
  assert.equal(value(text), 0);
  await page.getByRole('button', { name: 'Reset heads' }).click();
  await settled(page);
  await frames(page);
  assert.ok(Math.abs(value(await readout()) - reference[3][5][q][k]) <= 1e-4, 'on again: its value again');

  // Another text: the same cell, its new tokens and values; a cell the text no longer has: no cell.
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said it did not like');
  await settled(page);
  await frames(page);
  const ids2 = await promptIds(page);
  assert.ok(ids2.length > q);
  const expected = cliAttention(ids2)[3][5][q][k];
  text = await readout();
  assert.match(text, new RegExp(`^Layer 3, head 5: #${q} “ like” → #${k} “ said”: `));
  assert.ok(Math.abs(value(text) - expected) <= 1e-4, `${text} (CLI ${expected})`);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury');
  await settled(page);
  await frames(page);
  assert.match(await readout(), /^\s*Rows: the token that looks/);
});

test('layers are numbered from 0 in every panel: Layer, the thumbnails, the switches and the logit lens', async () => {
  const page = main;
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said it did find that');
  await settled(page);
  const attention = page.getByRole('region', { name: 'Attention', exact: true });
  assert.deepEqual(await attention.getByRole('combobox', { name: 'Layer' }).locator('option').allTextContents(), [
    '0',
    '1',
    '2',
    '3',
    '4',
    '5',
  ]);
  for (const name of ['Layer 0, head 0', 'Layer 5, head 7'])
    assert.equal(await attention.getByRole('button', { name, exact: true }).count(), 1, name);
  for (const name of ['Layer 0 head 0 off', 'Layer 5 head 7 off'])
    assert.equal(await attention.getByRole('button', { name, exact: true }).count(), 1, name);
  assert.equal(await attention.getByRole('button', { name: 'Layer 6, head 0', exact: true }).count(), 0);

  const layers = page.getByRole('region', { name: 'Layers' });
  await layers.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll('#layers-grid tbody tr').length === 6);
  assert.deepEqual(await page.locator('#layers-grid tbody th').allTextContents(), ['0', '1', '2', '3', '4', '5']);
  assert.match(
    await page.locator('#layers-grid tbody tr').first().locator('td').first().getAttribute('aria-label'),
    /^layer 0, after token 0: /,
  );
  await page.locator('#tokens .chip[data-index="3"]').click();
  await page.waitForFunction(() => document.querySelectorAll('#layers-table tr').length === 6);
  assert.deepEqual(await page.locator('#layers-table th').allTextContents(), [
    'Layer 0',
    'Layer 1',
    'Layer 2',
    'Layer 3',
    'Layer 4',
    'Layer 5',
  ]);
  await page.locator('#tokens .chip[data-index="3"]').click(); // unselected
  await page.evaluate(() => window.scrollTo(0, 0));
});

test('the heads’ × switches are 24 px targets or more and cover no thumbnail, at 1280×800 and 390×844', async () => {
  const phone = await openReady({ width: 390, height: 844 });
  for (const page of [main, phone]) {
    const width = page.viewportSize().width;
    const report = await page.locator('#thumbs .thumb-cell').evaluateAll((cells) =>
      cells.map((cell) => {
        const thumb = cell.querySelector('.thumb').getBoundingClientRect(),
          off = cell.querySelector('.head-off').getBoundingClientRect();
        const x = Math.min(thumb.right, off.right) - Math.max(thumb.left, off.left),
          y = Math.min(thumb.bottom, off.bottom) - Math.max(thumb.top, off.top);
        return {
          name: cell.querySelector('.head-off').getAttribute('aria-label'),
          w: off.width,
          h: off.height,
          overlap: x > 0 && y > 0,
        };
      }),
    );
    assert.equal(report.length, 48);
    for (const r of report) {
      assert.ok(r.w >= 24 && r.h >= 24, `${width}: ${r.name} is ${r.w}×${r.h} px`);
      assert.ok(!r.overlap, `${width}: ${r.name} covers its thumbnail`);
    }
  }
});

test('the Mask switch: token labels on both maps, and a head switched off shows as off', async () => {
  const page = main;
  const attention = page.getByRole('region', { name: 'Attention', exact: true });
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said it did find that');
  await settled(page);
  await attention.getByRole('combobox', { name: 'Layer' }).selectOption('0');
  await attention.getByRole('combobox', { name: 'Head' }).selectOption('1');
  const T = (await promptIds(page)).length;
  const mask = attention.getByRole('switch', { name: /^Mask/ });
  await mask.click();
  await page.waitForFunction(() => /^The \d+ tokens/.test(document.getElementById('mask-caption').textContent));
  await frames(page);

  // Every token's row and column of each map has a label: dark grey text beside and above it.
  for (const id of ['mask-causal', 'mask-bidirectional']) {
    const labelled = await page.locator(`#${id}`).evaluate((map, T) => {
      const box = map.closest('.mask-map');
      const inked = (strip, i, across) => {
        const ctx = strip.getContext('2d'),
          size = across ? strip.height : strip.width,
          span = (across ? strip.width : strip.height) / T;
        const [x, y, w, h] = across
          ? [Math.floor(i * span), 0, Math.floor(span), size]
          : [0, Math.floor(i * span), size, Math.floor(span)];
        const px = ctx.getImageData(x, y, w, h).data;
        for (let o = 0; o < px.length; o += 4)
          if (px[o] < 150 && px[o + 1] < 150 && Math.abs(px[o] - px[o + 2]) < 50 && px[o + 3] > 200) return true;
        return false;
      };
      const rows = box?.querySelector('.mask-rows'),
        cols = box?.querySelector('.mask-cols');
      if (!rows || !cols) return 'no label strips';
      const r = map.getBoundingClientRect();
      if (Math.abs(rows.getBoundingClientRect().height - r.height) > 1)
        return 'the row labels are not the map’s height';
      if (Math.abs(cols.getBoundingClientRect().width - r.width) > 1)
        return 'the column labels are not the map’s width';
      const missing = [];
      for (let i = 0; i < T; ++i) if (!inked(rows, i, false) || !inked(cols, i, true)) missing.push(i);
      return missing.length ? `no label for tokens ${missing}` : 'every token';
    }, T);
    assert.equal(labelled, 'every token', id);
  }
  assert.equal(await page.locator('#mask-compare .mask-off').isVisible(), false);

  // Layer 0 head 1 off: both maps are those of the model without it (its attention multiplied by
  // 0: the causal map's last row is white), dimmed, and the panel says so.
  await page.getByRole('button', { name: 'Layer 0 head 1 off' }).click();
  await settled(page);
  await page.waitForFunction(() => /^The \d+ tokens/.test(document.getElementById('mask-caption').textContent));
  await frames(page);
  const note = page.locator('#mask-compare .mask-off');
  assert.equal(await note.isVisible(), true);
  assert.match(await note.textContent(), /^Layer 0, head 1 is switched off/);
  assert.match(await page.locator('#mask-causal').getAttribute('aria-label'), /switched off/);
  const look = (id) =>
    page.locator(`#${id}`).evaluate((c) => ({
      opacity: Number(getComputedStyle(c).opacity),
      lastRowFirstKey: Array.from(
        c
          .getContext('2d')
          .getImageData(1, c.height - 2, 1, 1)
          .data.slice(0, 3),
      ),
    }));
  for (const id of ['mask-causal', 'mask-bidirectional']) {
    const { opacity, lastRowFirstKey } = await look(id);
    assert.ok(opacity < 0.5, `${id}: dimmed (${opacity})`);
    assert.deepEqual(lastRowFirstKey, [247, 251, 255], `${id}: 0 where the head was on`);
  }
  await page.screenshot({ path: join(root, 'build/page-attention-mask.png'), clip: await attention.boundingBox() });
  // Another head is on: not dimmed, no note.
  await attention.getByRole('combobox', { name: 'Head' }).selectOption('2');
  assert.equal(await note.isVisible(), false);
  assert.equal((await look('mask-causal')).opacity, 1);
  await page.getByRole('button', { name: 'Reset heads' }).click();
  await settled(page);
  await mask.click();
});

test('no console errors, page errors, failed requests or dialogs in any scenario', () => {
  assert.deepEqual(suite.problems, []);
});
