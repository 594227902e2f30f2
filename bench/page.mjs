// The web page as a person uses it, in headless Chromium, next to its own engine: for scripts/bench.
//
//   node bench/page.mjs [--tokens N] [--long L] [--runs R]
//
// Per run, a fresh page (the shipped model, served cross-origin isolated by scripts/serve.mjs, a
// cold HTTP cache, a quiet machine): the time from navigation to Generate enabled (in the page,
// from the navigation's start; and as the harness sees it), then a generation of N tokens
// (default 2,000: past the 256-token context, so the window slides) from "The old man walked into
// the", seed 1, with the page's settings otherwise; its tokens/s as the status line computes it
// (the first token to the last); the page is at its top, as it opens (the token list, the output and
// the top of the heatmap in a 1280x800 window). The same again with the Attention region scrolled
// into view (the heatmap and the thumbnails, redrawn live). Then, in another fresh page, a long
// generation of L tokens (default 5,000): the rates of its first and last 500 tokens. Beside them, the N tokens through
// the JS API in a page of the same origin, in a worker, with attention and the top 10 (the work
// the page asks of its engine) and nothing drawn. JSON on stdout.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { stats } from './merge.mjs';
import { startServer } from '../scripts/serve.mjs';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '2000' },
    long: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
  },
});
const N = Number(values.tokens),
  LONG = Number(values.long),
  runs = Number(values.runs);
const PROMPT = 'The old man walked into the';
const root = fileURLToPath(new URL('..', import.meta.url));
const server = await startServer(root, 0);
const browser = await chromium.launch(launchOptions);

// Each timed navigation starts once the machine is quiet: on two cores, the previous page's
// teardown (its renderer and workers ending after thousands of tokens) would otherwise overlap the
// load and be counted as the page's.
const QUIET_MS = 1500;
const quiet = () => new Promise((resolve) => setTimeout(resolve, QUIET_MS));

// The page: navigation -> Generate enabled, then n tokens, timed in the page at every step.
// view: an element scrolled to the top of the window first (else the page is at its top).
async function pageRun(n, view = null) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Ready: the moment Generate is enabled, in the page's own clock from the navigation's start (its
  // time origin), as Navigation Timing counts; beside it, as this harness sees it, from the call
  // that starts the navigation to the moment its polling notices (the harness's own overhead added).
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      const button = document.getElementById('generate');
      if (button && !button.disabled) {
        window.__readyAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['disabled'] });
  });
  await quiet();
  const t0 = Date.now();
  await page.goto(new URL('web/', server.url).href);
  await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 60_000 });
  const harness_ready_ms = Date.now() - t0;
  const ready_ms = await page.evaluate(() => window.__readyAt);
  await page.getByRole('textbox', { name: 'Prompt' }).fill(PROMPT);
  for (const [name, value] of [
    ['Max tokens', n],
    ['Seed', 1],
  ])
    await page.getByRole('spinbutton', { name, exact: true }).fill(String(value));
  await page.waitForTimeout(300); // the prompt's tokens settle (debounced)
  if (view) await page.locator(view).evaluate((e) => e.scrollIntoView({ block: 'start' }));
  // Every generated token's arrival time in the token list, as the page shows it (the list is
  // virtualized: its data-count holds the number of tokens, whether or not their chips are in view).
  await page.evaluate(() => {
    const times = (window.__chipTimes = []);
    const list = document.getElementById('tokens'),
      prompt = Number(list.dataset.count);
    new MutationObserver(() => {
      const n = Number(list.dataset.count) - prompt;
      while (times.length < n) times.push(performance.now());
    }).observe(list, { attributes: true, attributeFilter: ['data-count'] });
  });
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent), null, {
    timeout: 600_000,
  });
  const status = await page.locator('#status').textContent();
  const times = await page.evaluate(() => window.__chipTimes);
  await context.close();
  const rate = (a, b) => (1000 * (b - a)) / (times[b] - times[a]);
  const tokens = Number(/(\d+) tokens ·/.exec(status)?.[1]);
  return {
    ready_ms,
    harness_ready_ms,
    tokens,
    status_tok_s: Number(/([\d.]+) tokens\/s/.exec(status)?.[1]),
    first500_tok_s: times.length > 500 ? rate(0, 499) : null,
    last500_tok_s: times.length > 1000 ? rate(times.length - 500, times.length - 1) : null,
  };
}

// The engine the page uses, through the JS API in a worker, nothing drawn.
async function apiRun() {
  const page = await browser.newPage();
  await page.goto(new URL('web/dist/glassbox.d.ts', server.url).href); // any page of the origin
  const result = await page.evaluate(
    async ({ prompt, n }) => {
      const { loadModel } = await import('/web/dist/glassbox.mjs');
      const model = await loadModel('/web/models/brown-small/', { worker: true });
      let first = 0,
        last = 0,
        count = 0;
      for await (const step of model.generate(prompt, {
        maxTokens: n,
        seed: 1,
        temperature: 0.8,
        topK: 40,
        topP: 0.95,
        attention: true,
        top: 10,
      })) {
        last = performance.now();
        if (++count === 1) first = last;
        void step;
      }
      await model.dispose();
      return { tokens: count, tok_s: (1000 * (count - 1)) / (last - first) };
    },
    { prompt: PROMPT, n: N },
  );
  await page.close();
  return result;
}

const page = [],
  watched = [],
  long = [],
  api = [];
for (let r = 0; r < runs; ++r) {
  page.push(await pageRun(N));
  watched.push(await pageRun(N, '#attention-region'));
  long.push(await pageRun(LONG));
  api.push(await apiRun());
}
await browser.close();
server.server.close();
const pick = (list, key) => stats(list.map((x) => x[key]).filter((x) => x !== null));
const report = {
  tokens: N,
  long_tokens: LONG,
  runs,
  page: {
    ready_ms: pick([...page, ...watched, ...long], 'ready_ms'),
    harness_ready_ms: pick([...page, ...watched, ...long], 'harness_ready_ms'),
    tok_s: pick(page, 'status_tok_s'),
    attention_in_view_tok_s: pick(watched, 'status_tok_s'),
    first500_tok_s: pick(long, 'first500_tok_s'),
    last500_tok_s: pick(long, 'last500_tok_s'),
  },
  api_worker: { tok_s: pick(api, 'tok_s') },
};
console.log(JSON.stringify(report, null, 2));
