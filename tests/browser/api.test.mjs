// The JS API in headless Chromium (Debian's chromium, driven by playwright-core): page.mjs runs
// the scenario with the engine in a Web Worker and in the page's thread; this checks its report.
// Twice: served cross-origin isolated (COOP/COEP: the threaded engine, one thread per core) and
// as a plain static host would (the single-threaded engine).
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../../scripts/chromium.mjs';

import { startServer } from '../../scripts/serve.mjs';
import { checkClassifyReport } from '../js/classify.mjs';
import { BOM_TOKEN_TEXT } from '../js/made-up-models.mjs';
import { checkPipelining } from '../js/pipelining.mjs';

let servers, browser;

// A directory that holds the engine's .wasm files and nothing else (page.mjs loads with wasmPaths
// set to it): the rest, the threads' worker script included, must still come from beside the glue.
const wasmOnly = fileURLToPath(new URL('../../build/test-wasm-only/', import.meta.url));
// web/dist without its .wasm files: a load names the one it missed, and where it looked.
const noWasm = fileURLToPath(new URL('../../build/test-no-wasm/', import.meta.url));

before(async () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  rmSync(wasmOnly, { recursive: true, force: true });
  mkdirSync(wasmOnly, { recursive: true });
  for (const f of ['glassbox-core.wasm', 'glassbox-core-mt.wasm'])
    copyFileSync(new URL(`../../web/dist/${f}`, import.meta.url), wasmOnly + f);
  rmSync(noWasm, { recursive: true, force: true });
  cpSync(fileURLToPath(new URL('../../web/dist/', import.meta.url)), noWasm, {
    recursive: true,
    filter: (f) => !f.endsWith('.wasm'),
  });
  servers = { isolated: await startServer(root), plain: await startServer(root, 0, { isolate: false }) };
  browser = await chromium.launch(launchOptions);
});

after(async () => {
  rmSync(wasmOnly, { recursive: true, force: true });
  rmSync(noWasm, { recursive: true, force: true });
  await browser?.close();
  for (const s of Object.values(servers ?? {})) s.server.close();
});

for (const served of ['isolated', 'plain'])
  test(`JS API in Chromium (${served === 'isolated' ? 'cross-origin isolated: threads' : 'not isolated: one thread'}): Web Worker and page thread`, async () => {
    const { url } = servers[served];
    const page = await browser.newPage();
    const consoleErrors = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    // wasmPaths moves the .wasm files only: nothing else may be asked of that directory.
    page.on(
      'request',
      (r) =>
        /\/test-wasm-only\/(?!glassbox-core(-mt)?\.wasm$)/.test(r.url()) &&
        consoleErrors.push(`asked the .wasm directory for ${r.url()}`),
    );
    await page.goto(new URL('tests/browser/page.html', url).href);
    const results = await page.evaluate(() => window.results);
    assert.ok(!results.error, results.error);
    const fromFiles = results.pop();
    assert.deepEqual(fromFiles.ids, [71, 68, 75, 75, 78], 'loaded from File objects');
    const {
      engineLoadedByWorkerRuns,
      engineLoadedByPageRun,
      cacheInWorker,
      cacheInPage,
      concurrent,
      classify,
      text,
      pipelined,
      own,
      engine,
      experiments,
    } = results.pop();
    // The experiments against their float64 reference, in the Web Worker and the page's thread.
    for (const e of experiments) {
      const where = `${e.worker ? 'worker' : 'page thread'}: experiments`;
      assert.equal(e.progress, 4 * e.layers, `${where}: one progress call per layer and site`);
      assert.ok(e.metric <= 1e-5, `${where}: clean metric off by ${e.metric}`);
      assert.ok(e.grid <= 1e-4, `${where}: patching grids off by ${e.grid}`);
      assert.equal(e.aborted, 'AbortError', `${where}: an abort rejects with the signal's reason`);
      assert.ok(e.saliency.diff <= 1e-4, `${where}: saliency off by ${e.saliency.diff} of the largest score`);
      assert.ok(e.steered, `${where}: the steered greedy tokens`);
    }
    assert.deepEqual(
      own,
      { idsMatch: true, again: 'InvalidArgumentError', sameEstimate: true },
      'a Worker the page made',
    );
    const all = served === 'isolated' ? Math.min(8, results[0].cores) : 1;
    assert.deepEqual(engine.one, { threads: 1, idsMatch: true }, 'threads: 1');
    assert.deepEqual(engine.all, { threads: all, idsMatch: true }, 'threads by default');
    assert.deepEqual(engine.wasmPaths, { threads: all, idsMatch: true }, 'wasmPaths');
    if (all > 1)
      assert.match(
        engine.pageThreadOne,
        /^InvalidArgumentError: the engine in this thread already runs with \d+ thread/,
      );
    else assert.equal(engine.pageThreadOne, '(loaded)', 'one thread is what the page thread runs with');
    assert.match(
      engine.missingWasm,
      /^NetworkError: cannot load the engine's glassbox-core(-mt)?\.wasm \(http.*\/nowhere\/\)/,
    );
    checkPipelining(assert, pipelined, 'Chromium'); // tests/js/pipelining.mjs
    assert.equal(text.length, 2);
    for (const r of text) {
      // tests/js/text-roundtrip.mjs
      const where = r.worker ? 'worker' : 'page thread';
      assert.deepEqual(r.mismatches, [], `${where}: detokenize(tokenize(text)) keeps every character`);
      assert.equal(r.bomDetokenized, BOM_TOKEN_TEXT + BOM_TOKEN_TEXT, where);
      assert.deepEqual(
        r.streamed,
        [BOM_TOKEN_TEXT, BOM_TOKEN_TEXT, BOM_TOKEN_TEXT],
        `${where}: streamed steps keep a leading BOM`,
      );
    }
    assert.equal(classify.length, 2);
    for (const r of classify) checkClassifyReport(assert, r, `${r.worker ? 'worker' : 'page thread'}: classify`); // tests/js/classify.mjs
    for (const r of concurrent) {
      // tests/js/concurrency.mjs
      const where = r.worker ? 'worker' : 'page thread';
      assert.equal(r.second, 'a generation is already running on this model: finish or abort it first', where);
      assert.ok(
        r.forwardMaxDiff < 1e-4,
        `${where}: forward during a generation: max |logit - PyTorch| = ${r.forwardMaxDiff}`,
      );
      assert.ok(
        r.firstIdsMatch && r.againIdsMatch,
        `${where}: the running generation went on unharmed, and generate works after it`,
      );
      assert.equal(r.secondName, 'StateError', where);
      assert.ok(r.textPromptRoundTrips, where);
      assert.equal(
        r.sameTickSecond,
        'StateError: a generation is already running on this model: finish or abort it first',
        `${where}: same tick`,
      );
      assert.ok(
        r.sameTickFirstIdsMatch,
        `${where}: the first of two same-tick generations yields its own greedy tokens`,
      );
      assert.ok(r.sideBySide, `${where}: two models interleaved give each its own greedy tokens`);
    }
    assert.equal(engineLoadedByWorkerRuns, false, 'with { worker: true } the page does not load the engine itself');
    assert.equal(engineLoadedByPageRun, true, 'with { worker: false } it does');
    const fixture = fileURLToPath(new URL('../fixtures/gpt2-bytes/', import.meta.url));
    const size = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].reduce(
      (n, f) => n + statSync(fixture + f).size,
      0,
    );
    for (const c of [cacheInWorker, cacheInPage]) {
      const where = c.worker ? 'worker' : 'page thread';
      assert.deepEqual(
        c.first,
        { fromCache: false, cacheError: null, ids: [71, 68, 75, 75, 78] },
        `${where}: downloaded`,
      );
      assert.equal(c.listed.length, 1, where);
      assert.match(c.listed[0].url, /\/tests\/fixtures\/gpt2-bytes\/$/, where);
      assert.equal(c.listed[0].bytes, size, `${where}: the cached size is the files' size`);
      assert.equal(c.second.fromCache, true, `${where}: the next load reads the cache`);
      assert.deepEqual(c.second.ids, [71, 68, 75, 75, 78], where);
      assert.ok(
        c.second.progress.loaded === c.second.progress.total && c.second.progress.total > 0,
        `${where}: progress from the cache`,
      );
      assert.equal(c.second.progress.phase, 'read', `${where}: the cache is read, not downloaded`);
      assert.equal(c.second.last, 'convert', `${where}: then the model is made`);
      assert.deepEqual(c.afterRemove, [], `${where}: removed`);
      assert.equal(
        c.cancel,
        'AbortError: stopped by the test',
        `${where}: a cancelled load rejects with the signal's reason`,
      );
      assert.equal(c.midCancel, 'AbortError: mid-download', `${where}: cancelled during the download`);
      assert.equal(c.midLeft, 0, `${where}: a cancelled download leaves nothing in the cache`);
    }
    for (const r of results) {
      const where = r.worker ? 'worker' : 'page thread';
      assert.equal(r.config.model_type, 'gpt2', where);
      assert.equal(r.isolated, served === 'isolated', where);
      assert.equal(r.threads, served === 'isolated' ? Math.min(8, r.cores) : 1, `${where}: threads (${r.cores} cores)`);
      const last = r.progress.at(-1);
      assert.ok(
        last && last.loaded === last.total && last.total > 0,
        `${where}: progress ends at the total (${JSON.stringify(last)})`,
      );
      assert.ok(
        r.progress.slice(0, -1).every((p) => p.phase === 'download' && p.file === 'model.safetensors'),
        `${where}: a URL is downloaded`,
      );
      assert.deepEqual(
        r.progress.at(-1),
        { phase: 'convert', file: 'model.safetensors', loaded: last.total, total: last.total },
        `${where}: then the model is made`,
      );
      assert.ok(r.idsMatch, `${where}: greedy ids equal PyTorch's`);
      assert.ok(r.textMatch, `${where}: streamed text equals the reference`);
      assert.equal(r.stopReason, 'max_tokens', where);
      assert.deepEqual(r.abort, { tokens: 2, stopReason: 'cancelled' }, where);
      assert.match(r.errors[0], /^InvalidArgumentError: token id 999 is out of range/, where);
      assert.match(r.errors[1], /^InvalidArgumentError: .*lone UTF-16 surrogate/, where);
      assert.match(r.errors[2], /^NetworkError: cannot download .*no-such-model\/config\.json: HTTP 404/, where);
      assert.ok(
        r.ticks > 0 && r.longestGap < 1000,
        `${where}: page timers ran throughout the generation (${r.ticks} ticks, longest gap ${r.longestGap.toFixed(0)} ms)`,
      );
    }
    // Only the expected 404 of the bad-source check may show up as a console error.
    assert.deepEqual(
      consoleErrors.filter((e) => !/404/.test(e)),
      [],
    );
    await page.close();
  });

for (const served of ['isolated', 'plain'])
  test(`a missing engine .wasm is named with its glue (${served}: the ${served === 'isolated' ? 'threaded' : 'single-threaded'} module), in a worker and the page thread`, async () => {
    const { url } = servers[served];
    const page = await browser.newPage();
    await page.goto(new URL('tests/browser/blank.html', url).href);
    const errors = await page.evaluate(async () => {
      const { loadModel } = await import('/build/test-no-wasm/glassbox.mjs');
      const fail = (p) =>
        p.then(
          () => '(loaded)',
          (e) => `${e.name}: ${e.message}`,
        );
      return [
        await fail(loadModel('/tests/fixtures/gpt2-bytes/', { worker: true })),
        await fail(loadModel('/tests/fixtures/gpt2-bytes/')),
      ];
    });
    const name = served === 'isolated' ? 'glassbox-core-mt' : 'glassbox-core';
    for (const e of errors) {
      assert.equal(
        e,
        `NetworkError: cannot load the engine's ${name}.wasm beside ${name}.mjs (${url}build/test-no-wasm/${name}.wasm): HTTP 404`,
      );
    }
    await page.close();
  });

// A worker that cannot start fails the load, naming what stopped it: glassbox.mjs from another
// origin (a CDN) starts its worker through a blob: module, which a policy without blob: in
// worker-src refuses; and where the CDN lacks worker.mjs, the blob: module's import finds nothing.
test('a worker that cannot start rejects, naming the CSP directive or the missing URL', async () => {
  const cdn = await startServer(noWasm, 0, { isolate: false, cors: true, policy: null });
  const origin = new URL(cdn.url).origin;
  const withBlob = await startServer(fileURLToPath(new URL('../..', import.meta.url)), 0, {
    isolate: false,
    policy: `default-src 'self'; script-src 'self' ${origin}; worker-src 'self' blob: ${origin}; connect-src 'self' ${origin}`,
  });
  const withoutBlob = await startServer(fileURLToPath(new URL('../..', import.meta.url)), 0, {
    isolate: false,
    policy: `default-src 'self'; script-src 'self' ${origin}; worker-src 'self'; connect-src 'self' ${origin}`,
  });
  const load = async (server, api) => {
    const page = await browser.newPage();
    await page.goto(new URL('tests/browser/blank.html', server.url).href);
    const error = await page.evaluate(async (api) => {
      const { loadModel } = await import(api);
      return loadModel('/tests/fixtures/gpt2-bytes/', { worker: true }).then(
        () => '(loaded)',
        (e) => `${e.name}: ${e.message}`,
      );
    }, api);
    await page.close();
    return error;
  };
  try {
    assert.match(
      await load(withoutBlob, `${cdn.url}glassbox.mjs`),
      /^StateError: the glassbox worker could not start: the Content-Security-Policy directive worker-src refused blob/,
    );
    rmSync(`${noWasm}worker.mjs`);
    // (the test server's 404 has no CORS header: the page may read only that the request failed)
    const missing = await load(withBlob, `${cdn.url}glassbox.mjs`);
    assert.ok(
      missing.startsWith(`NetworkError: the glassbox worker could not start: cannot load ${cdn.url}worker.mjs: `),
      missing,
    );
    assert.match(missing, /: (HTTP 404|Failed to fetch)$/);
  } finally {
    for (const s of [cdn, withBlob, withoutBlob]) s.server.close();
  }
});

// A Worker the page made well before it hands it over has long been running: it still answers
// the start check ('ready?'), and the load does not wait for a start that happened before.
test('a Worker of worker.mjs made long before it is handed over loads as soon as asked', async () => {
  const page = await browser.newPage();
  await page.goto(new URL('tests/browser/blank.html', servers.plain.url).href);
  const result = await page.evaluate(async () => {
    const { loadModel } = await import('/web/dist/glassbox.mjs');
    const worker = new Worker('/web/dist/worker.mjs', { type: 'module' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const greedy = async (options) => {
      const model = await loadModel('/tests/fixtures/gpt2-bytes/', options);
      const ids = [];
      for await (const step of model.generate([71], { maxTokens: 4, temperature: 0 })) ids.push(step.id);
      await model.dispose();
      return ids;
    };
    const started = performance.now();
    const ids = await greedy({ worker });
    return { ids, ms: performance.now() - started, reference: await greedy({ worker: true }) };
  });
  assert.equal(result.ids.length, 4);
  assert.deepEqual(result.ids, result.reference, 'the same greedy ids as with a worker glassbox started');
  assert.ok(result.ms < 10_000, `loaded in ${result.ms.toFixed(0)} ms`);
  await page.close();
});
