// The npm package (web/dist, which the wasm preset builds) as its users get it: packed with
// `npm pack`, installed from the tarball into fresh projects, and used there: from Node (the
// engine in the calling thread, in a worker it starts, in a worker of one's own; the tokenizer
// entry), from TypeScript (tsc --strict on a usage file), and bundled by esbuild for a page in
// headless Chromium under the project's strict Content-Security-Policy sent as a header, and
// built by Vite and by webpack (each with no configuration) and by Rollup for production the same way.
//
//   node --test tests/package/          (needs the wasm preset's build, and npm ci for the tools)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { chromium } from 'playwright-core';

import { launchOptions } from '../../scripts/chromium.mjs';

import { startServer } from '../../scripts/serve.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(repo, 'web/dist');
const fixtures = join(repo, 'tests/fixtures');
const shipped = join(repo, 'web/models/brown-small');
const tools = join(repo, 'node_modules/.bin');
const here = fileURLToPath(new URL('project/', import.meta.url));
const manifest = JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'));

let work, tarball, packed;
// (A time limit of its own: a synchronous child holds the event loop, so node:test's cannot fire.)
const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });

// A fresh project with the tarball installed (no network: the package has no dependencies).
function project(name) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  return dir;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), 'glassbox-package-'));
  [packed] = JSON.parse(run('npm', ['pack', dist, '--json', '--pack-destination', work, '--loglevel=error'], repo));
  tarball = join(work, packed.filename);
});
after(() => rmSync(work, { recursive: true, force: true }));

test('the tarball holds what runs and its papers, within 1,146 KB', () => {
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(files, [...manifest.files, 'package.json', 'README.md', 'LICENSE'].sort());
  assert.ok(packed.size <= 1146 * 1024, `the tarball is ${packed.size} bytes`);
  assert.equal(packed.name, 'glassbox');
  assert.match(packed.version, /^\d+\.\d+\.\d+$/);
  const changelog = readFileSync(join(dist, 'CHANGELOG.md'), 'utf8');
  assert.ok(changelog.includes(`## ${packed.version}`), 'the CHANGELOG has an entry for this version');
});

// What a page that generates downloads: the engine without the trainer (a module of its own,
// loaded by train() alone).
test("the engine's glassbox-core.wasm within 282 KB gzipped", () => {
  const bytes = gzipSync(readFileSync(join(dist, 'glassbox-core.wasm')), { level: 9 }).length;
  assert.ok(bytes <= 282 * 1024, `${bytes} bytes gzipped`);
});

test('the tokenizer entry: its JS and WebAssembly within 200 KB gzipped', () => {
  // tokenizer.mjs and what it imports, its module's glue and .wasm.
  const files = [
    'tokenizer.mjs',
    'input.mjs',
    'options.mjs',
    'model-source.mjs',
    'model-files.mjs',
    'hub.mjs',
    'node-files.mjs',
    'download.mjs',
    'model-cache.mjs',
    'wasm-module.mjs',
    'errors.mjs',
    'platform.mjs',
    'glassbox-tokenizer.mjs',
    'glassbox-tokenizer.wasm',
  ];
  const bytes = files.reduce((n, f) => n + gzipSync(readFileSync(join(dist, f)), { level: 9 }).length, 0);
  assert.ok(bytes <= 200 * 1024, `${bytes} bytes gzipped`);
  // Every module these import (statically or with import()) and every file they name by URL is counted.
  for (const file of files.filter((f) => f.endsWith('.mjs') && f !== 'glassbox-tokenizer.mjs')) {
    const text = readFileSync(join(dist, file), 'utf8');
    const named = [
      ...text.matchAll(
        /from '\.\/([\w-]+\.mjs)'|import\('\.\/([\w-]+\.mjs)'\)|new URL\('\.\/([\w.-]+)', import\.meta\.url\)/g,
      ),
    ].map((m) => m[1] ?? m[2] ?? m[3]);
    for (const f of named) assert.ok(files.includes(f), `${f} (imported by ${file}) is counted`);
  }
});

test(
  "Node: the installed package runs models (this thread, its worker, one's own), trains, and the tokenizer entry",
  { timeout: 180_000 },
  () => {
    const dir = project('node-app');
    cpSync(join(here, 'node-app.mjs'), join(dir, 'node-app.mjs'));
    const report = JSON.parse(run(process.execPath, ['node-app.mjs', fixtures, shipped], dir));
    const g = JSON.parse(readFileSync(join(fixtures, 'gpt2-bytes/expected.json'), 'utf8')).greedy;
    for (const mode of ['page thread', 'worker', 'own worker']) {
      assert.deepEqual(report[mode].ids, g.tokens, `${mode}: greedy ids equal PyTorch's`);
      assert.equal(report[mode].stopReason, 'max_tokens', mode);
      assert.equal(report[mode].afterDispose, 'StateError', mode);
    }
    const { training } = report;
    assert.equal(training['page thread'].losses.length, 3, 'train(): three steps');
    assert.ok(training['page thread'].losses.every(Number.isFinite));
    assert.deepEqual(training.worker, training['page thread'], 'train() in a worker: the same losses, the same model');
    assert.equal(training['page thread'].generated.length, 5, 'the trained model generates');
    assert.equal(report.shipped.length, 20);
    assert.deepEqual(report.tokenizer.mismatches, [], `tiktoken's ids on all ${report.tokenizer.cases} cases`);
    assert.equal(report.tokenizer.vocabSize, 50257);
    assert.equal(report.tokenizer.roundTrip, 'naïve café 🙂');
    assert.match(
      report.missingWasm,
      /^GlassboxError: cannot read glassbox-tokenizer\.wasm \(.*nowhere\/\): no such file$/,
    );
    shippedIds = report.shipped;
  },
);
let shippedIds = null; // the shipped model's 20 greedy ids in Node, for the browser runs

// The package declares what `await using` needs (Symbol.asyncDispose, AsyncDisposable), so a
// project whose lib is es2022 and dom alone compiles too, without skipLibCheck; with
// esnext.disposable the two declarations merge.
test(
  'TypeScript: tsc --noEmit --strict on a usage file (await using), lib es2022 + dom with and without esnext.disposable, Node and bundler resolution',
  { timeout: 120_000 },
  () => {
    const dir = project('ts-app');
    cpSync(join(here, 'usage.ts'), join(dir, 'usage.ts'));
    const options = { strict: true, noEmit: true, target: 'es2022', types: [], skipLibCheck: false };
    for (const lib of [
      ['es2022', 'dom'],
      ['es2022', 'dom', 'esnext.disposable'],
    ]) {
      for (const [module, moduleResolution] of [
        ['nodenext', 'nodenext'],
        ['esnext', 'bundler'],
      ]) {
        writeFileSync(
          join(dir, 'tsconfig.json'),
          JSON.stringify({ compilerOptions: { ...options, lib, module, moduleResolution }, files: ['usage.ts'] }),
        );
        try {
          run(join(tools, 'tsc'), ['-p', 'tsconfig.json'], dir);
        } catch (e) {
          assert.fail(`tsc (lib ${lib.join(', ')}; ${moduleResolution}) failed:\n${e.stdout}${e.stderr}`);
        }
      }
    }
    // And it does find errors: a wrong option's type is one.
    writeFileSync(
      join(dir, 'wrong.ts'),
      "import { loadModel } from 'glassbox';\nawait loadModel('x', { quantize: 'int5' });\n",
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...options, lib: ['es2022', 'dom'], module: 'nodenext', moduleResolution: 'nodenext' },
        files: ['wrong.ts'],
      }),
    );
    assert.throws(
      () => run(join(tools, 'tsc'), ['-p', 'tsconfig.json'], dir),
      (e) => /int5/.test(e.stdout + e.stderr),
    );
  },
);

// A model directory's optional files are asked for wherever a model loads: the browser logs a 404
// for each the shipped model does not have, naming the address in the message's location.
const optionalFileMissing = (m) =>
  /status of 404/.test(m.text()) &&
  /\/(tokenizer\.json|tokenizer_config\.json|chat_template\.jinja|generation_config\.json)$/.test(
    m.location()?.url ?? '',
  );

// The app of project/web (load the shipped model, stream 20 greedy tokens; in a worker, then in
// the page's thread) served from `root` by scripts/serve.mjs, with the project's page's
// Content-Security-Policy as a header, cross-origin isolated (threads) and not.
// Options: policy (the page's CSP header instead of the project page's), cdn (a server of the
// installed package at another origin: the page gets its address in ?cdn=, and the engine must
// then run on one thread).
async function checkInChromium(root, page, bundler, { policy, cdn = false, modes = [true, false] } = {}) {
  symlinkSync(shipped, join(root, 'model'));
  const browser = await chromium.launch(launchOptions);
  try {
    for (const isolate of [true, false]) {
      const cdnServer = cdn
        ? await startServer(join(root, 'node_modules/glassbox'), 0, { isolate, cors: true, policy: null })
        : null;
      const cdnUrl = cdnServer?.url;
      let server = null;
      try {
        server = await startServer(root, 0, { isolate, ...(policy ? { policy: policy(cdnUrl) } : {}) });
        const tab = await browser.newPage();
        const problems = [];
        tab.on('console', (m) => m.type() === 'error' && !optionalFileMissing(m) && problems.push(m.text()));
        tab.on('pageerror', (e) => problems.push(String(e)));
        await tab.goto(new URL(cdn ? `${page}?cdn=${encodeURIComponent(cdnUrl)}` : page, server.url).href);
        const results = await tab.evaluate(() => window.results);
        assert.ok(Array.isArray(results), `${bundler}: the app ran (${problems.join('; ')})`);
        for (const r of results) {
          const where = `${bundler}, ${r.worker === true ? 'worker' : r.worker || 'page thread'}, ${isolate ? 'isolated' : 'not isolated'}`;
          assert.ok(!r.error, `${where}: ${r.error}`);
          assert.equal(r.ids.length, 20, where);
          assert.ok(shippedIds, 'the Node test ran first and gave the reference ids');
          assert.deepEqual(r.ids, shippedIds, `${where}: the same greedy ids as in Node`);
          assert.equal(
            r.threads,
            isolate && !cdn && r.worker !== 'service worker' ? Math.min(8, r.cores) : 1,
            `${where}: threads`,
          );
          if (r.worker === 'service worker') assert.equal(r.refused, 'NotSupportedError', `${where}: no Worker there`);
          assert.equal(r.stopReason, 'max_tokens', where);
        }
        assert.deepEqual(
          results.map((r) => r.worker),
          modes,
        );
        assert.deepEqual(problems, [], `${bundler}: no errors, no CSP violations`);
        await tab.close();
      } finally {
        server?.server.close();
        cdnServer?.server.close();
      }
    }
  } finally {
    await browser.close();
  }
}

test(
  'esbuild: a bundled app in Chromium under the strict CSP header, in a worker and the page thread, isolated and not',
  { timeout: 300_000 },
  async () => {
    const dir = project('esbuild-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    run(
      join(tools, 'esbuild'),
      ['app.js', '--bundle', '--format=esm', '--outfile=out/app.js', '--log-level=error'],
      dir,
    );
    // esbuild bundles the JS the app imports; the worker, the engine's glue and .wasm files are
    // loaded by URL at run time and go next to the bundle, as the package's README says.
    const pkg = join(dir, 'node_modules/glassbox');
    for (const f of readdirSync(pkg).filter((f) => /\.(mjs|wasm|js)$/.test(f)))
      cpSync(join(pkg, f), join(dir, 'out', f));
    await checkInChromium(dir, 'index.html', 'esbuild');
  },
);

test(
  'Rollup 4: a bundled app (with node-resolve) and the files the README says to copy, in Chromium under the strict CSP header, as above',
  { timeout: 300_000 },
  async () => {
    const dir = project('rollup-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    const resolvePlugin = join(repo, 'node_modules/@rollup/plugin-node-resolve/dist/es/index.js');
    try {
      run(
        join(tools, 'rollup'),
        ['app.js', '--plugin', resolvePlugin, '--format', 'es', '--dir', 'out', '--silent'],
        dir,
      );
    } catch (e) {
      assert.fail(`rollup failed:\n${e.stdout}${e.stderr}`);
    }
    // Rollup leaves the files named by new URL(..., import.meta.url) to the app: the worker and
    // the modules it imports, the engine's glue and .wasm files, the threads' worker script.
    const pkg = join(dir, 'node_modules/glassbox');
    for (const f of readdirSync(pkg).filter((f) => /\.(mjs|wasm)$|^glassbox-core-mt\.worker\.js$/.test(f)))
      cpSync(join(pkg, f), join(dir, 'out', f));
    await checkInChromium(dir, 'index.html', 'Rollup');
  },
);

test(
  'Vite: a production build, with no configuration, in Chromium under the strict CSP header, as above',
  { timeout: 300_000 },
  async () => {
    const dir = project('vite-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'index.html'),
      readFileSync(join(dir, 'index.html'), 'utf8').replace('src="out/app.js"', 'src="app.js"'),
    );
    try {
      run(join(tools, 'vite'), ['build', '--logLevel', 'error'], dir);
    } catch (e) {
      assert.fail(`vite build failed:\n${e.stdout}${e.stderr}`);
    }
    await checkInChromium(join(dir, 'dist'), 'index.html', 'Vite');
  },
);

test(
  'webpack 5: a build with no configuration at all, in Chromium under the strict CSP header, as above',
  { timeout: 300_000 },
  async () => {
    const dir = project('webpack-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    // webpack's defaults: src/index.js built into dist/main.js. It follows the package's
    // new Worker(new URL('./worker.mjs', import.meta.url)) and new URL('./x.wasm', import.meta.url).
    mkdirSync(join(dir, 'src'));
    for (const f of ['app.js', 'stream.js']) cpSync(join(dir, f), join(dir, 'src', f === 'app.js' ? 'index.js' : f));
    writeFileSync(
      join(dir, 'index.html'),
      readFileSync(join(dir, 'index.html'), 'utf8').replace('src="out/app.js"', 'src="dist/main.js"'),
    );
    try {
      run(join(tools, 'webpack'), [], dir);
    } catch (e) {
      assert.fail(`webpack failed:\n${e.stdout}${e.stderr}`);
    }
    // A bare import.meta.url would have become the build machine's file: path.
    for (const f of readdirSync(join(dir, 'dist')).filter((f) => f.endsWith('.js') || f.endsWith('.mjs')))
      assert.ok(!readFileSync(join(dir, 'dist', f), 'utf8').includes('file://'), `dist/${f} holds no file: path`);
    await checkInChromium(dir, 'index.html', 'webpack');

    // With the experimental output.module, webpack 5 does not emit the chunks its module worker
    // imports (nor, for the page thread, every chunk of the engine): the worker never runs. The load
    // must still end, with an error that says so.
    writeFileSync(
      join(dir, 'webpack.config.mjs'),
      "export default { experiments: { outputModule: true }, output: { module: true, path: new URL('module/', import.meta.url).pathname } };\n",
    );
    try {
      run(join(tools, 'webpack'), ['--config', 'webpack.config.mjs'], dir);
    } catch (e) {
      assert.fail(`webpack (output.module) failed:\n${e.stdout}${e.stderr}`);
    }
    writeFileSync(
      join(dir, 'module.html'),
      readFileSync(join(dir, 'index.html'), 'utf8').replace('src="dist/main.js"', 'src="module/main.mjs"'),
    );
    const browser = await chromium.launch(launchOptions);
    const { server, url } = await startServer(dir, 0, { isolate: false });
    try {
      const tab = await browser.newPage();
      await tab.goto(new URL('module.html', url).href);
      const [inWorker] = await tab.evaluate(() => window.results);
      assert.match(
        inWorker.error ?? '',
        /^StateError: the glassbox worker did not start within 30 s: worker\.mjs or a module it imports never ran/,
      );
    } finally {
      server.close();
      await browser.close();
    }
  },
);

test(
  'a cross-origin (CDN) import: the worker starts through a same-origin blob: module, in Chromium under a strict CSP',
  { timeout: 300_000 },
  async () => {
    const dir = project('cdn-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    // The page's policy names the CDN for scripts, fetches and the worker's imports (worker-src), and
    // allows blob: workers (the shim).
    const policy = (cdn) => {
      const origin = new URL(cdn).origin;
      return (
        `default-src 'self'; script-src 'self' ${origin} 'wasm-unsafe-eval'; worker-src 'self' blob: ${origin}; ` +
        `connect-src 'self' ${origin}; img-src 'self' data:; object-src 'none'; base-uri 'none'`
      );
    };
    await checkInChromium(dir, 'cdn.html', 'CDN', { policy, cdn: true });
  },
);

test(
  'plain static files: a page imports the installed files as they are (also with a module worker of its own), and a service worker runs the engine (service-worker entry)',
  { timeout: 300_000 },
  async () => {
    const dir = project('static-app');
    cpSync(join(here, 'web'), dir, { recursive: true });
    await checkInChromium(dir, 'plain.html', 'static files', { modes: [true, false, 'own worker', 'service worker'] });
  },
);
