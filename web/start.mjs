// The page's first module: it starts loading the shipped model (in the engine's worker) while the
// page's other modules are still arriving. They are twenty, over the few connections a browser
// opens to one server, and app.mjs runs only once the last is in; the model, the longest wait of
// all, need not wait for them. The model picker (app/model-picker.mjs) then takes this load over:
// its progress, its result or error, and cancelling it.
import { loadModel } from './dist/glassbox.mjs';

export const SHIPPED = { url: 'models/brown-small/', name: 'brown-small' };

// {quantize, controller, started, promise, latest (the last progress), tokenizer (once ready),
//  onProgress and onTokenizer (set by the taker)}
export const shippedLoad = (() => {
  const load = { quantize: 'none', controller: new AbortController(), started: performance.now(), latest: null, tokenizer: null };
  load.promise = loadModel(SHIPPED.url, {
    worker: true,
    quantize: load.quantize,
    signal: load.controller.signal,
    onProgress: (progress) => {
      load.latest = progress;
      load.onProgress?.(progress);
    },
    onTokenizer: (tokenizer) => {
      load.tokenizer = tokenizer;
      load.onTokenizer?.(tokenizer);
    },
  });
  load.promise.catch(() => {});   // reported by the model picker, which awaits it
  return load;
})();
