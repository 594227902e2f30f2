// train() of the JS API in headless Chromium, in a Web Worker and in the page's thread, served
// cross-origin isolated and not: the same losses and the same model.safetensors, bit for bit, as
// train() in Node, which tests/js/training.test.mjs holds to the native CLI. The trainer is a
// module of its own: a run's steps download the training module's .wasm and not the engine's,
// which comes only for the model a run ends with.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../../scripts/chromium.mjs';

import { startServer } from '../../scripts/serve.mjs';
import { brownDocument } from '../../scripts/brown_text.mjs';
import { train } from '../../web/dist/glassbox.mjs';

const TEXT = ['ca01', 'ca02'].map(brownDocument).join('\n\n');
const OPTIONS = {
  vocabSize: 300,
  nLayer: 2,
  nEmbd: 32,
  nHead: 4,
  nPositions: 32,
  seqLen: 32,
  batchSize: 4,
  steps: 12,
  warmup: 2,
  evalEvery: 6,
  dropout: 0.1,
};
let servers, browser;

before(async () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  servers = { isolated: await startServer(root), plain: await startServer(root, 0, { isolate: false }) };
  browser = await chromium.launch(launchOptions);
});

after(async () => {
  await browser?.close();
  for (const s of Object.values(servers ?? {})) s.server.close();
});

// Losses, held-out losses and a digest of model.safetensors.
async function summary(run, digest) {
  const steps = [];
  for await (const s of run) steps.push([s.step, s.loss, s.gradNorm, s.validLoss ?? null]);
  const files = await run.files();
  await run.dispose();
  return { steps, weights: await digest(files.weights) };
}

test(
  "train() in Chromium gives Node's run bit for bit: worker and page thread, isolated or not",
  { timeout: 300_000 },
  async () => {
    const { createHash } = await import('node:crypto');
    const want = await summary(train([TEXT], OPTIONS), async (w) => createHash('sha256').update(w).digest('hex'));
    assert.equal(want.steps.length, 12);
    for (const served of ['isolated', 'plain']) {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      const wasm = new Set(); // the .wasm files fetched, by the page and by its workers
      page.on('request', (r) => /\.wasm$/.test(r.url()) && wasm.add(new URL(r.url()).pathname.split('/').pop()));
      let atLastStep = null; // those fetched once the worker's run had done its steps
      await page.exposeFunction('lastStep', () => {
        atLastStep ??= [...wasm];
      });
      await page.goto(new URL('tests/browser/blank.html', servers[served].url).href);
      const got = await page.evaluate(
        async ({ text, options }) => {
          const { train } = await import('/web/dist/glassbox.mjs');
          const hex = async (bytes) =>
            [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
              .map((b) => b.toString(16).padStart(2, '0'))
              .join('');
          const run = async (o) => {
            const r = train([text], o);
            const steps = [];
            for await (const s of r) {
              steps.push([s.step, s.loss, s.gradNorm, s.validLoss ?? null]);
              if (s.step === o.steps) await window.lastStep();
            }
            const files = await r.files();
            await r.dispose();
            return { steps, weights: await hex(files.weights) };
          };
          return {
            isolated: crossOriginIsolated,
            worker: await run({ ...options, worker: true }),
            page: await run(options),
          };
        },
        { text: TEXT, options: OPTIONS },
      );
      assert.equal(got.isolated, served === 'isolated');
      assert.deepEqual(got.worker, want, `${served}: in a Web Worker`);
      assert.deepEqual(got.page, want, `${served}: in the page's thread`);
      assert.deepEqual(
        atLastStep,
        ['glassbox-training.wasm'],
        `${served}: the worker's steps fetched the training module only`,
      );
      const engine = served === 'isolated' ? 'glassbox-core-mt.wasm' : 'glassbox-core.wasm';
      assert.deepEqual(
        [...wasm].sort(),
        [engine, 'glassbox-training.wasm'].sort(),
        `${served}: and the engine for the models the runs ended with`,
      );
      assert.deepEqual(errors, []);
      await page.close();
    }
  },
);
