// The engine in headless Chromium, as the page runs it (the JS API, engine in a Web Worker:
// bench/chromium_glassbox.mjs): the threaded module where the page is cross-origin isolated, the
// single-threaded one where it is not. For scripts/bench; RUNS fresh pages per setting -> medians
// with min-max, JSON on stdout.
//
//   node bench/browser.mjs MODEL_DIR PROMPT_IDS.json RUNS
//
// Per run: time to the first generated token for the prompt (prefill), then tokens/s over 128
// greedy tokens (decode): F32, int8 and int4 with the threads the API picks (one per core, up to
// 8, where cross-origin isolated); int8 and int4 also asking for 1, 2, 4 and 8 threads (the
// threads' scaling; the count the engine got is in the key: past what the page allows, it is
// what the page allows).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';

import { glassboxGenerate } from './chromium_glassbox.mjs';
import { stats } from './merge.mjs';
import { startServer } from '../scripts/serve.mjs';

const [modelDir, idsFile, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 3);
if (!modelDir || !idsFile || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/browser.mjs MODEL_DIR PROMPT_IDS.json RUNS');
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const prompt = JSON.parse(readFileSync(idsFile, 'utf8'));
const DECODE = 128;

const servers = { isolated: await startServer(root), plain: await startServer(root, 0, { isolate: false }) };
const browser = await chromium.launch(launchOptions);

async function run(served, quantize, threads) {
  const page = await browser.newPage();
  await page.goto(new URL('web/dist/glassbox.d.ts', servers[served].url).href); // any page of the origin
  const result = await glassboxGenerate(page, {
    dir: `/${relative(root, modelDir)}/`,
    prompt,
    quantize,
    threads,
    decode: DECODE,
  });
  await page.close();
  return result;
}

const report = { prompt: prompt.length, decode: DECODE, results: {} };
const settings = [];
for (const served of ['isolated', 'plain'])
  for (const quantize of ['none', 'int8', 'int4']) settings.push({ served, quantize, threads: 0 });
for (const quantize of ['int8', 'int4'])
  for (const threads of [1, 2, 4, 8]) settings.push({ served: 'isolated', quantize, threads, scaling: true });
for (const { served, quantize, threads, scaling } of settings) {
  const results = [];
  for (let i = 0; i < runs; ++i) {
    process.stderr.write(
      `bench: Chromium, ${served}, ${quantize}, threads ${threads || 'default'}, run ${i + 1}/${runs}\n`,
    );
    results.push(await run(served, quantize, threads));
  }
  const n = results[0].threads;
  const key =
    `chromium ${n} thread${n > 1 ? 's' : ''}${quantize === 'none' ? '' : ` ${quantize}`}` +
    (scaling ? ` (asked for ${threads})` : '');
  report.results[key] = {
    threads: n,
    quantize,
    ...Object.fromEntries(
      ['load_ms', 'ttft_ms', 'prefill_tok_s', 'decode_tok_s'].map((f) => [f, stats(results.map((r) => r[f]))]),
    ),
  };
}
await browser.close();
for (const s of Object.values(servers)) s.server.close();
console.log(JSON.stringify(report, null, 2));
