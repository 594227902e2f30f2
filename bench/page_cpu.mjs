// Where a generation's CPU time goes, by Chromium process and thread: the engine's worker(s), the
// page's main thread, the compositor, raster and display threads. CPU time per thread is read from
// /proc before and after (Linux), so a thread's time waiting for a core does not count. A tool for
// looking, not a benchmark: bench/page.mjs makes the figures.
//
//   node bench/page_cpu.mjs [N]          the page generating N tokens (default 2,000)
//   API=1 node bench/page_cpu.mjs [N]    the same N tokens through the JS API in a worker, nothing drawn
//   HIDE='#thumbs' node bench/page_cpu.mjs   hides elements first, to see their share
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { startServer } from '../scripts/serve.mjs';

const N = Number(process.argv[2] ?? '2000');
const PROMPT = 'The old man walked into the';
const server = await startServer(fileURLToPath(new URL('..', import.meta.url)), 0);
const browser = await chromium.launch(launchOptions);

// CPU ticks (1/100 s) of every Chromium thread, keyed "process type:thread name".
function sample() {
  const ticks = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chromium')) continue;
      const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser';
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '#');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const key = `${type}:${name}`;
        ticks.set(key, (ticks.get(key) ?? 0) + Number(fields[11]) + Number(fields[12])); // utime + stime
      }
    } catch {
      // a process or thread that ended meanwhile
    }
  }
  return ticks;
}

const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
let before, start;
if (process.env.API) {
  await page.goto(new URL('web/dist/glassbox.d.ts', server.url).href); // any page of the origin
  const model = await page.evaluateHandle(async () => {
    const { loadModel } = await import('/web/dist/glassbox.mjs');
    return loadModel('/web/models/brown-small/', { worker: true });
  });
  before = sample();
  start = Date.now();
  const rate = await page.evaluate(
    async ({ model, prompt, n }) => {
      let count = 0,
        first = 0,
        last = 0;
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
      return (1000 * (count - 1)) / (last - first);
    },
    { model, prompt: PROMPT, n: N },
  );
  console.log(`the JS API in a worker: ${rate.toFixed(1)} tokens/s`);
} else {
  await page.goto(new URL('web/', server.url).href);
  await page.waitForFunction(() => !document.getElementById('generate').disabled);
  await page.getByRole('textbox', { name: 'Prompt' }).fill(PROMPT);
  await page.getByRole('spinbutton', { name: 'Max tokens', exact: true }).fill(String(N));
  await page.getByRole('spinbutton', { name: 'Seed', exact: true }).fill('1');
  await page.waitForTimeout(300);
  if (process.env.HIDE)
    await page.evaluate((sel) => {
      for (const e of document.querySelectorAll(sel)) e.style.display = 'none';
    }, process.env.HIDE);
  before = sample();
  start = Date.now();
  await page.getByRole('button', { name: 'Generate', exact: true }).click();
  await page.waitForFunction(() => /^Done/.test(document.getElementById('status').textContent), null, {
    timeout: 600_000,
  });
  console.log(await page.locator('#status').textContent());
}
const after = sample();
console.log(`${Date.now() - start} ms of wall time; CPU ms by thread:`);
const rows = [...after]
  .map(([k, v]) => [k, (v - (before.get(k) ?? 0)) * 10])
  .filter(([, ms]) => ms >= 20)
  .sort((a, b) => b[1] - a[1]);
for (const [k, ms] of rows) console.log(String(ms).padStart(7), k);
await browser.close();
server.server.close();
