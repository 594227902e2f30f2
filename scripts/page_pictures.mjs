// The page's pictures in the docs, taken from the page itself (web/, served as scripts/serve.mjs
// serves it) in headless Chromium:
//   docs/images/page-1280x800.png, docs/images/page-390x844.png  the first view, the shipped model ready
//   docs/page.png  (README's, 1280x1100)  after 24 tokens of "The jury said", a token chosen, layer 2
//
//   node scripts/page_pictures.mjs        (after the wasm build: the page uses web/dist)
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { generate, launchOptions, root, setSampling, settled, waitReady } from '../tests/page/harness.mjs';
import { startServer } from './serve.mjs';

const { server, url } = await startServer(root, 0);
const browser = await chromium.launch(launchOptions);
try {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(new URL('web/', url).href);
    await waitReady(page);
    const name = `docs/images/page-${viewport.width}x${viewport.height}.png`;
    await page.screenshot({ path: join(root, name) });
    console.log(name);
    if (viewport.width === 1280) {
      await setSampling(page, { 'Max tokens': 24, Seed: 3 });
      await generate(page);
      await page.locator('#tokens .chip[data-index="12"]').click();
      await page.getByRole('combobox', { name: 'Layer' }).selectOption('2');
      await settled(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.setViewportSize({ width: 1280, height: 1100 }); // down to the Output, under the prompt
      await page.screenshot({ path: join(root, 'docs/page.png') });
      console.log('docs/page.png');
    }
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
