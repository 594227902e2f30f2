// Where the page's main thread spends a generation: a Chromium trace (devtools.timeline) of the
// shipped model generating N tokens, summed by event name (RunTask, Commit, Paint, Layout, ...).
// A tool for looking, not a benchmark: see bench/page.mjs for the figures.
//
//   node bench/page_trace.mjs [N]        HIDE='#tokens' hides elements first, to see their share
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { startServer } from '../scripts/serve.mjs';

const server = await startServer(fileURLToPath(new URL('..', import.meta.url)), 0);
const browser = await chromium.launch(launchOptions);
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
await page.goto(new URL('web/', server.url).href);
await page.waitForFunction(() => !document.getElementById('generate').disabled);
await page.getByRole('textbox', { name: 'Prompt' }).fill('The old man walked into the');
await page.getByRole('spinbutton', { name: 'Max tokens', exact: true }).fill(process.argv[2] ?? '1000');
await page.getByRole('spinbutton', { name: 'Seed', exact: true }).fill('1');
await page.waitForTimeout(300);
if (process.env.HIDE)
  await page.evaluate((sel) => {
    for (const e of document.querySelectorAll(sel)) e.style.display = 'none';
  }, process.env.HIDE);
await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
await page.getByRole('button', { name: 'Generate', exact: true }).click();
await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent), null, {
  timeout: 600000,
});
const buf = await browser.stopTracing();
console.log(await page.locator('#status').textContent());
const events = JSON.parse(buf.toString()).traceEvents;
// main thread of the renderer: the thread with most FunctionCall/Layout events
const tids = new Map();
for (const e of events)
  if (e.name === 'UpdateLayoutTree' || e.name === 'Layout') tids.set(e.tid, (tids.get(e.tid) ?? 0) + 1);
const main = [...tids].sort((a, b) => b[1] - a[1])[0]?.[0];
// Wall time (dur) and the thread's CPU time (tdur): on a machine as busy as the engine makes it,
// a task's wall time includes the time the main thread waited for a core.
const dur = new Map(),
  cpu = new Map();
for (const e of events) {
  if (e.tid !== main || e.ph !== 'X' || !e.dur) continue;
  dur.set(e.name, (dur.get(e.name) ?? 0) + e.dur);
  cpu.set(e.name, (cpu.get(e.name) ?? 0) + (e.tdur ?? 0));
}
console.log('   wall    cpu  (ms, main thread, nested events counted in their parents too)');
for (const [k, v] of [...dur].sort((a, b) => b[1] - a[1]).slice(0, 20))
  console.log((v / 1000).toFixed(0).padStart(7), (cpu.get(k) / 1000).toFixed(0).padStart(6), k);
await browser.close();
server.server.close();
