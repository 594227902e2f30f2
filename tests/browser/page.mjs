// The JS API in a real browser, with the engine in a Web Worker and in the page's thread:
// URL source with progress, the Cache API, cancelling a load, greedy tokens against the PyTorch fixture, abort, errors,
// classifiers (tests/js/classify.mjs), and whether the page kept running timers while the engine worked.
import { estimateModel, listCachedModels, loadModel, removeCachedModels } from '/web/dist/glassbox.mjs';
import { classifyScenario } from '/tests/js/classify.mjs';
import { concurrency } from '/tests/js/concurrency.mjs';
import { pipelining } from '/tests/js/pipelining.mjs';
import { textRoundTrip } from '/tests/js/text-roundtrip.mjs';

async function scenario(worker) {
  const out = { worker, progress: [] };
  const expected = await (await fetch('/tests/fixtures/gpt2-bytes/expected.json')).json();
  const model = await loadModel('/tests/fixtures/gpt2-bytes/', { worker, onProgress: (p) => out.progress.push(p) });
  out.config = model.config;
  out.threads = model.threads;
  out.isolated = globalThis.crossOriginIsolated;
  out.cores = navigator.hardwareConcurrency;
  const g = expected.greedy;
  let ticks = 0,
    last = performance.now(),
    longest = 0; // the page's clock while the engine works
  const timer = setInterval(() => {
    ++ticks;
    longest = Math.max(longest, performance.now() - last);
    last = performance.now();
  }, 1);
  const ids = [];
  let text = '';
  const steps = model.generate(g.prompt_text, { maxTokens: g.max_tokens, temperature: 0 });
  for (;;) {
    const { value, done } = await steps.next();
    if (done) {
      out.stopReason = value.stopReason;
      text += value.text;
      break;
    }
    ids.push(value.id);
    text += value.text;
  }
  clearInterval(timer);
  out.ticks = ticks;
  out.longestGap = Math.max(longest, performance.now() - last);
  out.idsMatch = JSON.stringify(ids) === JSON.stringify(g.tokens);
  out.textMatch = text === g.text;

  const controller = new AbortController();
  let n = 0;
  const run = model.generate('abc', { maxTokens: 25, seed: 1, signal: controller.signal });
  let r;
  for (;;) {
    r = await run.next();
    if (r.done) break;
    if (++n === 2) controller.abort();
  }
  out.abort = { tokens: n, stopReason: r.value.stopReason };

  out.errors = [];
  for (const bad of [() => model.forward([1, 999]), () => model.tokenize('\ud800')]) {
    try {
      await bad();
      out.errors.push('(no error)');
    } catch (e) {
      out.errors.push(`${e.name}: ${e.message}`);
    }
  }
  try {
    await loadModel('/tests/fixtures/no-such-model/', { worker });
  } catch (e) {
    out.errors.push(`${e.name}: ${e.message}`);
  }
  await model.dispose();
  return out;
}

// The interpretability experiments on gpt2-f32 against its float64 reference
// (tests/fixtures/experiments): patching with its progress and an abort, saliency, steering.
async function experimented(worker) {
  const want = await (await fetch('/tests/fixtures/experiments/gpt2-f32.json')).json();
  const model = await loadModel('/tests/fixtures/gpt2-f32/', { worker });
  const { clean, corrupted, answer, wrong } = want;
  const out = { worker, progress: 0 };
  const got = await model.patch({ clean, corrupted, answer, wrong, onProgress: () => ++out.progress });
  const grid = (rows, ref) => Math.max(...ref.flatMap((row, l) => row.map((x, i) => Math.abs(rows[l][i] - x))));
  out.metric = Math.abs(got.clean - want.patch.clean);
  out.grid = Math.max(grid(got.residPre, want.patch.resid_pre), grid(got.head, want.patch.head));
  const stop = new AbortController();
  out.aborted = await model
    .patch({ clean, corrupted, answer, wrong, signal: stop.signal, onProgress: () => stop.abort() })
    .then(
      () => 'resolved',
      (e) => e.name,
    );
  const s = want.saliency[0];
  const { saliency, target } = await model.forward(clean, { saliency: true, target: s.target });
  out.saliency = { target, diff: grid([saliency], [s.scores]) / Math.max(...s.scores.map(Math.abs)) };
  const run = want.steer.runs[0];
  const ids = [];
  const steer = {
    layer: want.steer.layer,
    coefficient: run.coefficient,
    plus: want.steer.plus,
    minus: want.steer.minus,
  };
  for await (const step of model.generate(clean, { maxTokens: 8, temperature: 0, steer })) ids.push(step.id);
  out.steered = JSON.stringify(ids) === JSON.stringify(run.greedy.tokens);
  out.layers = model.shape.layers;
  await model.dispose();
  return out;
}

// The four files as File objects (what a file picker or drag-and-drop gives), into a worker.
async function fromFiles() {
  const file = async (name) => new File([await (await fetch(`/tests/fixtures/gpt2-bytes/${name}`)).blob()], name);
  const model = await loadModel(
    {
      config: await file('config.json'),
      weights: await file('model.safetensors'),
      vocab: await file('vocab.json'),
      merges: await file('merges.txt'),
    },
    { worker: true },
  );
  const ids = await model.tokenize('hello');
  await model.dispose();
  return { worker: true, files: true, ids };
}

// A module Worker the page made itself (the `worker` option), as the project's page does to start
// the engine early: greedy ids, not reusable, and an estimate counted in one.
async function ownWorker() {
  const expected = await (await fetch('/tests/fixtures/gpt2-bytes/expected.json')).json(),
    g = expected.greedy;
  const make = () => new Worker(new URL('/web/dist/worker.mjs', location.href), { type: 'module' });
  const worker = make();
  const model = await loadModel('/tests/fixtures/gpt2-bytes/', { worker });
  const ids = [];
  for await (const step of model.generate(g.prompt_text, { maxTokens: g.max_tokens, temperature: 0 }))
    ids.push(step.id);
  const again = await loadModel('/tests/fixtures/gpt2-bytes/', { worker }).then(
    () => '(loaded)',
    (e) => e.name,
  );
  await model.dispose();
  const estimate = await estimateModel('/tests/fixtures/gpt2-bytes/', { worker: make() });
  const here = await estimateModel('/tests/fixtures/gpt2-bytes/', { worker: true });
  return {
    idsMatch: JSON.stringify(ids) === JSON.stringify(g.tokens),
    again,
    sameEstimate: JSON.stringify(estimate) === JSON.stringify(here),
  };
}

// threads and wasmPaths: a worker's engine with one thread and with all, the same greedy ids; the
// page thread's engine (made by an earlier scenario) keeps its count; the .wasm files from a
// directory that holds only them (api.test.mjs makes it), or from one that lacks them.
async function engineOptions() {
  const expected = await (await fetch('/tests/fixtures/gpt2-bytes/expected.json')).json(),
    g = expected.greedy;
  const greedyIds = async (model) => {
    const ids = [];
    for await (const step of model.generate(g.prompt_text, { maxTokens: g.max_tokens, temperature: 0 }))
      ids.push(step.id);
    return ids;
  };
  const out = {};
  for (const [key, options] of [
    ['one', { threads: 1 }],
    ['all', {}],
    ['wasmPaths', { wasmPaths: '/build/test-wasm-only/' }],
  ]) {
    const model = await loadModel('/tests/fixtures/gpt2-bytes/', { worker: true, ...options });
    out[key] = {
      threads: model.threads,
      idsMatch: JSON.stringify(await greedyIds(model)) === JSON.stringify(g.tokens),
    };
    await model.dispose();
  }
  const fail = (p) =>
    p.then(
      (m) => {
        m.dispose();
        return '(loaded)';
      },
      (e) => `${e.name}: ${e.message}`,
    );
  out.pageThreadOne = await fail(loadModel('/tests/fixtures/gpt2-bytes/', { threads: 1 }));
  out.missingWasm = await fail(loadModel('/tests/fixtures/gpt2-bytes/', { worker: true, wasmPaths: '/nowhere/' }));
  return out;
}

// The Cache API: the first load downloads and stores, the next reads from the cache; listing and
// removing; a load that is cancelled rejects with the signal's reason.
async function cached(worker) {
  const out = { worker, cache: true };
  const name = `glassbox-test-${worker}`;
  const dir = new URL('/tests/fixtures/gpt2-bytes/', location.href).href;
  const first = await loadModel(dir, { worker, cache: name });
  out.first = {
    fromCache: first.fromCache ?? false,
    cacheError: first.cacheError ?? null,
    ids: await first.tokenize('hello'),
  };
  await first.dispose();
  out.listed = await listCachedModels(name);
  const progress = [];
  const second = await loadModel(dir, { worker, cache: name, onProgress: (p) => progress.push(p) });
  out.second = {
    fromCache: second.fromCache ?? false,
    ids: await second.tokenize('hello'),
    progress: progress.at(-2),
    last: progress.at(-1)?.phase,
  };
  await second.dispose();
  await removeCachedModels(dir, name);
  out.afterRemove = await listCachedModels(name);
  const controller = new AbortController();
  const loading = loadModel(dir, { worker, signal: controller.signal });
  controller.abort(new DOMException('stopped by the test', 'AbortError'));
  out.cancel = await loading.then(
    () => '(loaded)',
    (e) => `${e.name}: ${e.message}`,
  );
  // Cancelled in the middle: by the first bytes of the weights, config.json, vocab.json and
  // merges.txt are in the cache, and the weights are streaming into it; nothing may stay.
  const mid = new AbortController();
  const midLoad = loadModel(dir, {
    worker,
    cache: name,
    signal: mid.signal,
    onProgress: () => mid.abort(new DOMException('mid-download', 'AbortError')),
  });
  out.midCancel = await midLoad.then(
    () => '(loaded)',
    (e) => `${e.name}: ${e.message}`,
  );
  out.midLeft = await cacheEmptied(name);
  return out;
}

// The number of entries left in a cache once it has stopped changing (a cancelled worker cleans up
// after the load has already rejected), waiting at most 5 s for it to be empty.
async function cacheEmptied(name) {
  const store = await caches.open(name);
  for (let t = 0; t < 50; ++t) {
    if (!(await store.keys()).length) return 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await store.keys()).length;
}

// With { worker: true } the page itself never instantiates the engine: glassbox-core.wasm (or
// glassbox-core-mt.wasm) is fetched by the worker only. (Chromium lists a module worker's script
// imports among the page's resources, so the .wasm is what tells where the engine runs.)
const engineInPage = () =>
  performance.getEntriesByType('resource').some((r) => /\/glassbox-core(-mt)?\.wasm$/.test(r.name));

// Two fixture models for the concurrency scenario (tests/js/concurrency.mjs).
async function concurrent(worker) {
  const model = async (name) => ({
    source: `/tests/fixtures/${name}/`,
    expected: await (await fetch(`/tests/fixtures/${name}/expected.json`)).json(),
  });
  return concurrency(loadModel, await model('gpt2-bytes'), await model('gpt2-f32'), { worker });
}

// detokenize(tokenize(text)) over the tokenizer cases and a streamed BOM (tests/js/text-roundtrip.mjs).
async function roundTrip(worker) {
  const read = async (path) => (await fetch(path)).arrayBuffer();
  const files = {
    config: await read('/tests/fixtures/gpt2-f32/config.json'),
    weights: await read('/tests/fixtures/gpt2-f32/model.safetensors'),
    vocab: await read('/tests/fixtures/tokenizer/gpt2/vocab.json'),
    merges: await read('/tests/fixtures/tokenizer/gpt2/merges.txt'),
  };
  const cases = (await (await fetch('/tests/fixtures/tokenizer/cases.json')).json()).ordinary;
  return textRoundTrip(loadModel, files, cases, { worker });
}

// The classifier scenario (tests/js/classify.mjs), its fixture files fetched from the server.
async function classified(worker) {
  const read = async (name, file) => (await fetch(`/tests/fixtures/${name}/${file}`)).arrayBuffer();
  return classifyScenario(loadModel, read, { worker });
}

window.results = (async () => {
  const inWorker = await scenario(true);
  const files = await fromFiles();
  const cacheInWorker = await cached(true);
  const engineLoadedByWorkerRuns = engineInPage();
  const inPage = await scenario(false);
  const engineLoadedByPageRun = engineInPage();
  const cacheInPage = await cached(false);
  const concurrent_ = [await concurrent(true), await concurrent(false)];
  const classify = [await classified(true), await classified(false)];
  const text = [await roundTrip(true), await roundTrip(false)];
  const pipelined = await pipelining(loadModel, '/web/models/brown-small/');
  const own = await ownWorker();
  const engine = await engineOptions();
  const experiments = [await experimented(true), await experimented(false)];
  return [
    inWorker,
    inPage,
    {
      engineLoadedByWorkerRuns,
      engineLoadedByPageRun,
      cacheInWorker,
      cacheInPage,
      concurrent: concurrent_,
      classify,
      text,
      pipelined,
      own,
      engine,
      experiments,
    },
    files,
  ];
})().catch((e) => ({ error: String(e?.stack ?? e) }));
