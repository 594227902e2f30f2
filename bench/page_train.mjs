// The page's main thread while the Train panel trains, in headless Chromium: the long tasks (50 ms
// or more, PerformanceObserver 'longtask') from pressing Train to the run's end, for a run of the
// panel's Tiny preset on the Brown corpus sample stopped after S seconds of steps, and the same for
// "Compare one head and many". Per run: the count of long tasks, their median and longest, and
// the steps done. A long task is a time the page could not answer a click or a key. Beside them,
// what took the time: the page's scripts in long animation frames (Chromium's
// 'long-animation-frame' entries, summed by script file) and the CPU time of the page's main
// thread (from /proc, Linux), against the run's wall time: on a machine whose cores are all busy
// (the training worker takes one), a task is long also while its thread waits for a core.
// JSON on stdout.
//
//   node bench/page_train.mjs [--seconds S] [--runs R]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { stats } from './merge.mjs';
import { startServer } from '../scripts/serve.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '30' }, runs: { type: 'string', default: '3' } },
});
const SECONDS = Number(values.seconds),
  runs = Number(values.runs);
const root = fileURLToPath(new URL('..', import.meta.url));
const { server, url } = await startServer(root, 0);
const browser = await chromium.launch(launchOptions);

// CPU time (ms) of each renderer process's main thread, by process id.
function rendererMainThreads() {
  const ms = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!/chromium.*--type=renderer/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
      const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ms.set(pid, (Number(fields[11]) + Number(fields[12])) * 10); // utime + stime, in 1/100 s
    } catch {
      // a process that ended meanwhile
    }
  }
  return ms;
}

// One run in a fresh page: button is the id of Train or Compare.
async function measure(button) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
    window.frames_ = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        window.frames_.push({
          start: e.startTime,
          scripts: e.scripts.map((s) => ({ file: s.sourceURL.replace(/^.*\//, ''), duration: s.duration })),
        });
    }).observe({ type: 'long-animation-frame', buffered: true });
  });
  await page.goto(new URL('web/', url).href);
  await page.waitForFunction(() => /^Ready/.test(document.getElementById('status').textContent), null, {
    timeout: 60_000,
  });
  await page.waitForFunction(() => !document.getElementById('train-sample').disabled);
  await page.click('#train-sample');
  await page.waitForFunction(() => document.getElementById('train-text').value.length > 100_000);
  await page.waitForTimeout(1000);
  const from = await page.evaluate(() => performance.now());
  const cpuBefore = rendererMainThreads(),
    wallBefore = Date.now();
  await page.click(`#${button}`);
  // S seconds from the first step (the vocabulary is learned before it), then Stop.
  await page.waitForFunction(() => /^Step /.test(document.getElementById('train-progress').textContent), null, {
    timeout: 120_000,
  });
  await page.waitForTimeout(SECONDS * 1000);
  await page.evaluate(() => document.getElementById('train-stop').click());
  await page.waitForFunction(
    () => /^(Stopped|Trained)/.test(document.getElementById('train-status').textContent),
    null,
    { timeout: 120_000 },
  );
  await page.waitForTimeout(2000); // what comes after the run (the model's files, a look at where it stopped)
  const cpuAfter = rendererMainThreads(),
    wallMs = Date.now() - wallBefore;
  const result = await page.evaluate((t0) => {
    const tasks = window.longTasks.filter((t) => t.start >= t0).map((t) => t.duration);
    const scripts = {};
    for (const f of window.frames_.filter((f) => f.start >= t0))
      for (const s of f.scripts)
        scripts[s.file || '(none)'] = Math.round((scripts[s.file || '(none)'] ?? 0) + s.duration);
    return { tasks, scripts, status: document.getElementById('train-status').textContent };
  }, from);
  await context.close();
  const steps = Number(/after ([\d,]+)/.exec(result.status)?.[1].replace(/,/g, '') ?? NaN);
  const sorted = result.tasks.slice().sort((a, b) => a - b);
  return {
    longTasks: sorted.length,
    medianMs: sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0,
    maxMs: sorted.at(-1) ?? 0,
    totalMs: Math.round(sorted.reduce((a, b) => a + b, 0)),
    steps,
    scriptMsInLongFrames: result.scripts,
    // the busiest renderer's main thread: the page's
    mainThreadCpuMs: Math.max(...[...cpuAfter].map(([pid, ms]) => ms - (cpuBefore.get(pid) ?? 0))),
    wallMs,
  };
}

const out = { machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model }, seconds: SECONDS, train: [], compare: [] };
for (let r = 0; r < runs; ++r) {
  out.train.push(await measure('train-start'));
  out.compare.push(await measure('train-compare'));
}
for (const kind of ['train', 'compare'])
  out[`${kind}Median`] = Object.fromEntries(
    ['longTasks', 'medianMs', 'maxMs', 'totalMs', 'steps', 'mainThreadCpuMs', 'wallMs'].map((k) => [
      k,
      stats(out[kind].map((r) => r[k])).median,
    ]),
  );
console.log(JSON.stringify(out, null, 2));
await browser.close();
server.close();
