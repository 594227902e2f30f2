// The page's first module: it starts the engine's worker at once, before any other module of the
// page has arrived (it imports nothing statically), so that the engine's WebAssembly downloads
// and compiles while they do; then it starts loading the shipped model in that worker. The page's
// modules are some twenty, over the few connections a browser opens to one server, and app.mjs
// runs only once the last is in; the model, the longest wait of all, need not wait for them. The
// model picker (app/model-picker.mjs) then takes this load over: its progress, its result or
// error, and cancelling it.

export const SHIPPED = { url: 'models/brown-small/', name: 'brown-small' };

// The worker is handed to loadModel as the API allows (its `worker` option). Until then its
// failure to start would reach nobody: it cancels the load instead, with the reason.
const started = performance.now();
const controller = new AbortController();
const worker = new Worker(new URL('./dist/worker.mjs', import.meta.url), { type: 'module' });
worker.addEventListener('error', (e) => controller.abort(new Error(`the engine's worker could not start: ${e.message ?? 'no reason given'}`)),
                        { once: true });

const { loadModel } = await import('./dist/glassbox.mjs');

// {quantize, controller, started, promise, latest (the last progress), tokenizer (once ready),
//  onProgress and onTokenizer (set by the taker)}
export const shippedLoad = (() => {
  const load = { quantize: 'none', controller, started, latest: null, tokenizer: null };
  load.promise = loadModel(SHIPPED.url, {
    worker,
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
  load.promise.catch(() => worker.terminate());   // reported by the model picker, which awaits it
  return load;
})();
