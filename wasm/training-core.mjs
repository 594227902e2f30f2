// The trainer's WebAssembly module in this thread (glassbox-training.mjs/.wasm): a module apart
// from the engine's, so that a page that only generates never downloads it. training.mjs
// (LocalTraining) imports this file at a run's first step; the model a run gives is loaded from
// its files into the engine's module (engine.mjs), as any model. It is single-threaded: a batch's
// shards run in turn, with the bits they have on threads (docs/performance.md says why there is
// no threaded twin). The module is made from its .wasm as the engine's is (wasm-module.mjs).
import { errorClasses } from './errors.mjs';
import { makeModule } from './wasm-module.mjs';

let corePromise = null; // one instance per thread, shared by every run in it

// This thread's training module, made at the first call; its .wasm beside the glue (where a
// bundler puts it: the URL below is written for bundlers to see).
export function loadTrainingCore() {
  corePromise ??= (async () => {
    const { default: create } = await import('./glassbox-training.mjs');
    return makeModule(create, {
      file: 'glassbox-training.wasm',
      glue: 'glassbox-training.mjs',
      label: "the trainer's glassbox-training.wasm",
      needs: 'Training',
      bundled: new URL('./glassbox-training.wasm', import.meta.url),
      options: { errors: errorClasses },
    });
  })();
  corePromise.catch(() => {
    corePromise = null;
  }); // reported to whoever awaits it; tried again next time
  return corePromise;
}
