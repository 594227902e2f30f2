// Bigger models on the page, as a person loads them, in headless Chromium: the model's files
// (config.json, model.safetensors and its tokenizer's files: vocab.json + merges.txt or
// tokenizer.json, whichever the directory has) opened from this device (the "Open files" panel)
// with "Int8 weights" (or --quantize int4: "Int4 weights") ticked, so the file streams into the
// engine's worker and is quantized on the way. Per model: the time from
// choosing the files to the status line's "Ready", the most memory Chromium's processes held
// together meanwhile and while generating (their resident sizes summed, sampled every 100 ms), and
// the status line's tokens/s over a generation of N tokens (greedy). One fresh browser per model.
//
//   node bench/page_models.mjs [--tokens N] [--quantize int8|int4] DIR...   JSON on stdout
//   (DIR: bench/make_model.py's output, or bench/make_decoders.mjs's with a tokenizer.json beside)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { startServer } from '../scripts/serve.mjs';

const { values, positionals } = parseArgs({
  options: { tokens: { type: 'string', default: '64' }, quantize: { type: 'string', default: 'int8' } },
  allowPositionals: true,
});
const N = Number(values.tokens);
const box = { int8: 'Int8 weights', int4: 'Int4 weights' }[values.quantize];
if (!box) throw new Error(`--quantize must be int8 or int4, got ${values.quantize}`);
const root = fileURLToPath(new URL('..', import.meta.url));
const server = await startServer(root, 0);

// The resident memory of every Chromium process, summed (bytes).
function chromiumRss() {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium')) continue;
      total += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      /* the process ended */
    }
  }
  return total;
}

const results = {};
for (const dir of positionals) {
  process.stderr.write(`bench/page_models: ${basename(dir)}\n`);
  const browser = await chromium.launch(launchOptions);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, chromiumRss());
  }, 100);
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(new URL('web/', server.url).href);
    const ready = () =>
      page.waitForFunction(
        () => {
          const s = document.getElementById('status');
          return (s.dataset.kind === 'done' && /^Ready/.test(s.textContent)) || s.dataset.kind === 'error';
        },
        null,
        { timeout: 600_000 },
      );
    await ready();
    const before = chromiumRss();
    await page.locator('details#advanced').evaluate((d) => {
      d.open = true; // the weights' boxes are under Advanced
    });
    await page.getByLabel(box).check();
    await ready();
    await page
      .getByRole('combobox', { name: 'Model', exact: true })
      .selectOption({ label: 'Open files on this device…' });
    await page.locator('#status').evaluate((s) => {
      s.dataset.kind = 'armed';
    });
    peak = 0;
    const t0 = Date.now();
    await page
      .getByLabel('The four files')
      .setInputFiles(
        ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt', 'tokenizer.json']
          .filter((f) => existsSync(join(dir, f)))
          .map((f) => join(dir, f)),
      );
    await ready();
    const loadMs = Date.now() - t0;
    const status = await page.locator('#status').textContent();
    if (!/^Ready/.test(status))
      throw new Error(`${dir}: ${status} ${await page.locator('#model-error').textContent()}`);
    const peakLoad = peak;
    await page.getByRole('textbox', { name: 'Prompt' }).fill('The old man walked into the');
    for (const [name, value] of Object.entries({ 'Max tokens': N, Temperature: 0, Seed: 1 }))
      await page.getByRole('spinbutton', { name, exact: true }).fill(String(value));
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent), null, {
      timeout: 600_000,
    });
    const done = await page.locator('#status').textContent();
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    results[basename(dir)] = {
      shape: `${config.n_layer ?? config.num_hidden_layers} layers, ${config.n_embd ?? config.hidden_size} wide`,
      file_mb: statSync(join(dir, 'model.safetensors')).size / 2 ** 20,
      load_ms: loadMs,
      chromium_rss_before_mb: before / 2 ** 20,
      chromium_peak_rss_load_mb: peakLoad / 2 ** 20,
      chromium_peak_rss_mb: peak / 2 ** 20,
      status_tok_s: Number(/([\d.]+) tokens\/s/.exec(done)?.[1]),
      status: done,
    };
  } finally {
    clearInterval(sampler);
    await browser.close();
  }
}
server.server.close();
console.log(JSON.stringify({ tokens: N, quantize: values.quantize, results }, null, 2));
