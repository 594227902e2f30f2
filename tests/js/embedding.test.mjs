// How the JS API behaves around its own files and the process it runs in (Node): a .wasm that is
// not the engine's is named, without the WebAssembly glue's own wording; a download that fails
// keeps the underlying error as `cause`, also across the worker; a script with { worker: true }
// that forgets dispose() still exits.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { GlassboxError, loadModel, NetworkError } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';

const dist = fileURLToPath(new URL('../../web/dist/', import.meta.url));
const shipped = fileURLToPath(new URL('../../web/models/brown-small/', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/gpt2-bytes/', import.meta.url));

// Directories whose .wasm files are not what their names say: bytes that are no WebAssembly, and
// the tokenizer's module where the engine's belongs (it compiles, but lacks the engine's exports).
let garbage, swapped;
before(() => {
  garbage = mkdtempSync(join(tmpdir(), 'glassbox-garbage-'));
  for (const f of ['glassbox-core.wasm', 'glassbox-tokenizer.wasm']) writeFileSync(join(garbage, f), 'not WebAssembly');
  swapped = mkdtempSync(join(tmpdir(), 'glassbox-swapped-'));
  copyFileSync(join(dist, 'glassbox-tokenizer.wasm'), join(swapped, 'glassbox-core.wasm'));
  copyFileSync(join(dist, 'glassbox-core.wasm'), join(swapped, 'glassbox-tokenizer.wasm'));
});
after(() => {
  rmSync(garbage, { recursive: true, force: true });
  rmSync(swapped, { recursive: true, force: true });
});

// The glue's words for its own failures, which mean nothing to a user of glassbox.
const emscriptenWords = /ASSERTIONS|Aborted\(|-s [A-Z_]+=|both async and sync fetching/;

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'this thread';
  test(`${where}: an engine .wasm that is not the engine's is named, in glassbox's words`, async () => {
    for (const [dir, kind] of [
      [garbage, /CompileError|magic word/],
      [swapped, /./],
    ]) {
      await assert.rejects(loadModel(fixture, { worker, wasmPaths: dir }), (e) => {
        assert.ok(e instanceof GlassboxError, `${e.name}: ${e.message}`);
        assert.match(
          e.message,
          /^the engine's glassbox-core\.wasm \(.*\) is not a WebAssembly module this engine can run: /,
        );
        assert.ok(e.message.includes(dir), `names the directory: ${e.message}`);
        assert.match(e.message, kind);
        assert.doesNotMatch(e.message, emscriptenWords);
        return true;
      });
    }
  });
}

test("the tokenizer entry: a .wasm that is not its module is named, in glassbox's words", async () => {
  for (const dir of [garbage, swapped]) {
    await assert.rejects(loadTokenizer(shipped, { wasmPaths: dir }), (e) => {
      assert.equal(e.name, 'GlassboxError');
      assert.match(e.message, /^glassbox-tokenizer\.wasm \(.*\) is not a WebAssembly module this engine can run: /);
      assert.doesNotMatch(e.message, emscriptenWords);
      return true;
    });
  }
  // and then, given the right one, it loads (a failure is not kept)
  assert.deepEqual(
    (await loadTokenizer(shipped)).tokenize('Hello world'),
    (await loadTokenizer(shipped)).tokenize('Hello world'),
  );
});

test("offline: a hub model whose download cannot start rejects with a NetworkError whose cause is the fetch's error", async (t) => {
  const offline = new TypeError('fetch failed');
  t.mock.method(globalThis, 'fetch', async () => {
    throw offline;
  });
  await assert.rejects(loadModel('openai-community/gpt2'), (e) => {
    assert.ok(e instanceof NetworkError, `${e.name}: ${e.message}`);
    assert.match(
      e.message,
      /^cannot download https:\/\/huggingface\.co\/openai-community\/gpt2\/resolve\/main\/config\.json: fetch failed/,
    );
    assert.equal(e.cause, offline);
    return true;
  });
});

test('offline, in a worker: the cause crosses to the caller', async () => {
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  await assert.rejects(loadModel('http://127.0.0.1:1/model/', { worker: true }), (e) => {
    assert.ok(e instanceof NetworkError, `${e.name}: ${e.message}`);
    assert.match(e.message, /^cannot download http:\/\/127\.0\.0\.1:1\/model\/config\.json: /);
    assert.ok(e.cause instanceof Error, 'a cause');
    assert.equal(e.cause.name, 'TypeError');
    assert.match(e.cause.message, /fetch failed/);
    return true;
  });
});

test('Node: a script that loads with { worker: true }, generates and forgets dispose() exits by itself', async () => {
  const script = `
    import { loadModel } from ${JSON.stringify(new URL('../../web/dist/glassbox.mjs', import.meta.url).href)};
    const model = await loadModel(${JSON.stringify(shipped)}, { worker: true });
    const ids = [];
    for await (const step of model.generate('The old man', { maxTokens: 5, temperature: 0 })) ids.push(step.id);
    console.log(JSON.stringify(ids));
  `;
  const file = join(garbage, 'forgets-dispose.mjs');
  writeFileSync(file, script);
  const started = performance.now();
  const { code, stdout, stderr, killed } = await new Promise((resolve) => {
    execFile(process.execPath, [file], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error?.code ?? 0, killed: error?.killed ?? false, stdout, stderr }),
    );
  });
  assert.equal(
    killed,
    false,
    `the process was still alive after 60 s (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  assert.equal(code, 0, stderr);
  assert.equal(JSON.parse(stdout).length, 5, stdout);
});
