// The trainer's WebAssembly module in this thread (glassbox-training.mjs/.wasm): a module apart
// from the engine's, so that a page that only generates never downloads it. training.mjs
// (LocalTraining) imports this file at a run's first step; the model a run gives is loaded from
// its files into the engine's module (engine.mjs), as any model. It is single-threaded: a batch's
// shards run in turn, with the bits they have on threads (docs/performance.md says why there is
// no threaded twin).
import { errorClasses, GlassboxError, NetworkError } from './errors.mjs';
import { importNode, isNode } from './platform.mjs';

let corePromise = null;   // one instance per thread, shared by every run in it

// This thread's training module, made at the first call. In Node the .wasm bytes are handed in
// (the 3.1.6 glue would fetch() a file path); in browsers and workers the glue fetches the .wasm
// beside its .mjs (where a bundler puts it).
export function loadTrainingCore() {
  corePromise ??= createTrainingCore();
  corePromise.catch(() => { corePromise = null; });   // reported to whoever awaits it; tried again next time
  return corePromise;
}

async function createTrainingCore() {
  const options = { errors: errorClasses };   // the classes the C++ side throws
  if (isNode) {
    const { readFile } = await importNode('fs/promises');
    options.wasmBinary = await readFile(new URL('./glassbox-training.wasm', import.meta.url)).catch((e) => {
      throw new GlassboxError(`cannot read the trainer's glassbox-training.wasm (beside training-core.mjs): ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
    });
  }
  const { default: create } = await import('./glassbox-training.mjs');
  // The glue reports a .wasm it could not fetch by aborting, with its own words.
  return create(options).catch((e) => {
    throw new NetworkError(`cannot load the trainer's glassbox-training.wasm (beside glassbox-training.mjs): ${e?.message ?? e}`);
  });
}
