// The JS API in a real browser, with the engine in a Web Worker and in the page's thread:
// URL source with progress, greedy tokens against the PyTorch fixture, abort, errors, and whether
// the page kept running timers while the engine worked.
import { loadModel } from '/web/dist/glassbox.mjs';

async function scenario(worker) {
  const out = { worker, progress: [] };
  const expected = await (await fetch('/tests/fixtures/gpt2-bytes/expected.json')).json();
  const model = await loadModel('/tests/fixtures/gpt2-bytes/', { worker, onProgress: (p) => out.progress.push(p) });
  out.config = model.config;
  const g = expected.greedy;
  let ticks = 0;
  const timer = setInterval(() => ++ticks, 1);
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
      out.errors.push(`${e.constructor.name}: ${e.message}`);
    }
  }
  try {
    await loadModel('/tests/fixtures/no-such-model/', { worker });
  } catch (e) {
    out.errors.push(e.message);
  }
  await model.dispose();
  return out;
}

// The four files as File objects (what a file picker or drag-and-drop gives), into a worker.
async function fromFiles() {
  const file = async (name) => new File([await (await fetch(`/tests/fixtures/gpt2-bytes/${name}`)).blob()], name);
  const model = await loadModel({ config: await file('config.json'), weights: await file('model.safetensors'),
                                  vocab: await file('vocab.json'), merges: await file('merges.txt') }, { worker: true });
  const ids = await model.tokenize('hello');
  await model.dispose();
  return { worker: true, files: true, ids };
}

window.results = (async () => [await scenario(true), await scenario(false), await fromFiles()])()
  .catch((e) => ({ error: String(e?.stack ?? e) }));
