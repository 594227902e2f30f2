// What every page test file shares: Chromium's launch options, the static server and browser for
// the file's tests, pages that record every problem (console errors, page errors, failed requests,
// dialogs), and waiting for the page's status line.
//
//   const suite = pageSuite();
//   before(() => suite.start());
//   after(() => suite.stop());
//   const { page } = await suite.openPage();
//   await page.goto(suite.pageUrl());
//   await waitReady(page);
//   ... and a last test: assert.deepEqual(suite.problems, [])
import assert from 'node:assert/strict';
import { beforeEach } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../../scripts/chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';

export const root = fileURLToPath(new URL('../..', import.meta.url));

export { launchOptions };

// The files of a model directory that loadModel asks for and does without (a model of vocab.json
// and merges.txt has no tokenizer.json, a base model no chat template): their 404s, and their
// requests cut off when a load fails or answered by a server of another origin without CORS
// headers, are no problem of the page's.
const OPTIONAL_MODEL_FILE = /\/(tokenizer\.json|tokenizer_config\.json|chat_template\.jinja|generation_config\.json)$/;

// A server for the repository's root and a browser, for the tests of one file. openPage gives a
// fresh browser context (its own cache storage) unless one is given; every problem is recorded, but
// for failed requests a scenario causes on purpose (URLs matching `expectedFailures`).
export function pageSuite() {
  const suite = { problems: [], server: null, url: null, browser: null };
  let scenario = 'before the scenarios'; // the test running, named in each problem (pages outlive their test)
  beforeEach((t) => {
    scenario = t.name;
  });
  suite.start = async () => {
    ({ server: suite.server, url: suite.url } = await startServer(root, 0));
    suite.browser = await chromium.launch(launchOptions);
  };
  suite.stop = async () => {
    await suite.browser?.close();
    suite.server?.close();
  };
  suite.pageUrl = (path = 'web/') => new URL(path, suite.url).href;
  suite.openPage = async ({ viewport = { width: 1280, height: 800 }, context, record, expectedFailures = [] } = {}) => {
    context ??= await suite.browser.newContext({ viewport });
    const page = await context.newPage();
    const expected = (url) => expectedFailures.some((re) => re.test(url));
    const report = (what) => suite.problems.push(`${what} (during "${scenario}")`);
    // A model directory's optional files are asked for wherever a model loads: a 404 says only that
    // this one has none (the browser logs it, naming the address in the message's location).
    const optional = (r) => r.status() === 404 && OPTIONAL_MODEL_FILE.test(r.url());
    page.on(
      'console',
      (m) =>
        m.type() === 'error' &&
        !(/status of 404/.test(m.text()) && OPTIONAL_MODEL_FILE.test(m.location()?.url ?? '')) &&
        report(`console: ${m.text()}`),
    );
    page.on('pageerror', (e) => report(`page error: ${e.message}`));
    page.on(
      'requestfailed',
      (r) =>
        expected(r.url()) ||
        OPTIONAL_MODEL_FILE.test(r.url()) ||
        report(`request failed: ${r.url()} ${r.failure()?.errorText}`),
    );
    page.on('response', async (r) => {
      if (r.status() >= 400 && !expected(r.url()) && !optional(r)) report(`HTTP ${r.status()}: ${r.url()}`);
      if (record && !record.closed)
        record.push({ url: r.url(), bytes: (await r.body().catch(() => Buffer.alloc(0))).length });
    });
    page.on('dialog', async (d) => {
      report(`dialog: ${d.type()} ${d.message()}`);
      await d.dismiss();
    });
    return { page, context };
  };
  return suite;
}

export const statusKind = (page) => page.locator('#status').getAttribute('data-kind');

// Marks the status line, so that waitReady waits for the load an action starts, not an earlier one.
export const arm = (page) =>
  page.locator('#status').evaluate((s) => {
    s.dataset.kind = 'armed';
  });

export async function waitReady(page, timeout = 30_000) {
  await page.waitForFunction(
    () => {
      const s = document.getElementById('status');
      return (s.dataset.kind === 'done' && /^Ready/.test(s.textContent)) || s.dataset.kind === 'error';
    },
    null,
    { timeout },
  );
  const text = await page.locator('#status').textContent();
  assert.match(
    text,
    /^Ready/,
    `model loaded (status: ${text}; error: ${await page.locator('#model-error').textContent()})`,
  );
  await settled(page);
}

// The tokens shown are those of the prompt's current text, and no generation runs.
export async function settled(page) {
  await page.waitForFunction(() => document.getElementById('status').dataset.kind !== 'busy');
  await page.waitForTimeout(250); // the prompt's tokenization is debounced (120 ms)
}

// Opens the Advanced disclosure under Generate (Top-k, Top-p, Int8 and Int4 weights, the cached models).
export async function openAdvanced(page) {
  await page.locator('details#advanced').evaluate((d) => {
    d.open = true;
  });
}

// (Top-k and Top-p are under Advanced: it is opened for them.)
export async function setSampling(page, values) {
  if ('Top-k' in values || 'Top-p' in values) await openAdvanced(page);
  for (const [name, value] of Object.entries(values))
    await page.getByRole('spinbutton', { name, exact: true }).fill(String(value));
}

// keepScroll: the page stays where it is (the click is the button's own, once the view's
// IntersectionObservers have seen where it is), as with Ctrl+Enter from anywhere.
export async function generate(page, { keepScroll = false } = {}) {
  const button = page.getByRole('button', { name: 'Generate', exact: true });
  if (keepScroll) {
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await button.evaluate((b) => b.click());
  } else {
    await button.click();
  }
  await page.waitForFunction(
    () => !document.getElementById('generate').disabled && document.getElementById('status').dataset.kind !== 'busy',
    null,
    { timeout: 60_000 },
  );
  return page.locator('#status').textContent();
}
