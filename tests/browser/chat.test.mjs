// Chat templates of the JS API in headless Chromium, in a Web Worker and in the page's thread,
// served cross-origin isolated and not: applyChatTemplate gives Python jinja2's bytes (a fixture
// case of tests/fixtures/chat/) and a raising template its TemplateError. Templates render on the
// chat module, fetched at the first call, never by a load alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { launchOptions } from '../../scripts/chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { chainModel, idCount, repo, tokenizerFixture } from '../js/instruct-models.mjs';

let servers, browser;

before(async () => {
  const root = fileURLToPath(repo);
  servers = { isolated: await startServer(root), plain: await startServer(root, 0, { isolate: false }) };
  browser = await chromium.launch(launchOptions);
});

after(async () => {
  await browser?.close();
  for (const s of Object.values(servers ?? {})) s.server.close();
});

test('applyChatTemplate in Chromium: worker and page thread, isolated or not', { timeout: 300_000 }, async () => {
  const fixture = JSON.parse(readFileSync(new URL('tests/fixtures/chat/mistral-nemo.json', repo), 'utf8'));
  const good = fixture.cases.find((c) => c.error === undefined && c.add_generation_prompt);
  const bad = fixture.cases.find((c) => c.error !== undefined);
  const { tokenizerJson } = tokenizerFixture('bytelevel-template-tiny');
  const { config, weights } = chainModel(idCount(tokenizerJson), []);
  const files = {
    config,
    weights: Array.from(weights),
    tokenizerJson,
    chatTemplate: fixture.template,
    tokenizerConfig: JSON.stringify({ bos_token: fixture.bos_token, eos_token: fixture.eos_token }),
  };
  for (const served of ['isolated', 'plain']) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const wasm = new Set();
    page.on('request', (r) => /\.wasm$/.test(r.url()) && wasm.add(new URL(r.url()).pathname.split('/').pop()));
    await page.goto(new URL('tests/browser/blank.html', servers[served].url).href);
    const got = await page.evaluate(
      async ({ files, good, bad, date }) => {
        const { loadModel } = await import('/web/dist/glassbox.mjs');
        const out = [];
        for (const worker of [true, false]) {
          const model = await loadModel({ ...files, weights: new Uint8Array(files.weights) }, { worker });
          const fetchedAtLoad = performance
            .getEntriesByType('resource')
            .some((e) => e.name.endsWith('glassbox-chat.wasm'));
          const text = await model.applyChatTemplate(good.messages, { date, templateVars: good.vars });
          const error = await model.applyChatTemplate(bad.messages, { date }).then(
            () => null,
            (e) => ({ name: e.name, message: e.message }),
          );
          out.push({ worker, hasChatTemplate: model.hasChatTemplate, text, error, fetchedAtLoad });
          await model.dispose();
        }
        return out;
      },
      { files, good, bad, date: fixture.date },
    );
    for (const r of got) {
      const where = `${served}, ${r.worker ? 'worker' : 'page thread'}`;
      assert.equal(r.hasChatTemplate, true, where);
      assert.equal(r.text, good.expected, where);
      assert.equal(r.error?.name, 'TemplateError', where);
      assert.ok(r.error.message.endsWith(`: ${bad.error}`), `${where}: ${r.error.message}`);
    }
    assert.equal(got[1].fetchedAtLoad, false, 'a load alone does not fetch the chat module (page thread)');
    assert.ok(wasm.has('glassbox-chat.wasm'), `the chat module was fetched (${[...wasm]})`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});
