// The page's first module: it starts loading the shipped model (in the engine's worker) while the
// page's other modules are still arriving. They are twenty, over the few connections a browser
// opens to one server, and app.mjs runs only once the last is in; the model, the longest wait of
// all, need not wait for them. The model picker (app/model-picker.mjs) then takes this load over:
// its progress, its result or error, and cancelling it.
//
// The engine's worker is started first of all, before the API's modules have arrived: its own
// modules (worker.mjs, engine.mjs, ...) come one import after the other, and its download of the
// model begins only once they are in. index.html runs this module as soon as it has arrived
// (async) and fetches the page's other modules at a lower priority, so that the worker's requests
// do not queue behind them.
// The models in web/models/: the GPT loaded at start (scripts/train_default_model), a classifier
// and a masked LM (scripts/train_family_models). value: the Model select's choice; example: a prompt
// that shows what the model does, put in the prompt box when it loads (unless edited).
export const SHIPPED_MODELS = [
  { value: 'shipped', url: 'models/brown-small/', name: 'brown-small', what: '', example: 'The jury said' },
  {
    value: 'shipped:brown-genre',
    url: 'models/brown-genre/',
    name: 'brown-genre',
    what: 'a genre classifier',
    example:
      'The mayor told the city council on Tuesday that taxes would not rise this year, and the vote was set for next week.',
  },
  {
    value: 'shipped:brown-mlm',
    url: 'models/brown-mlm/',
    name: 'brown-mlm',
    what: 'a masked LM',
    example: 'The President of the United <|mask|> said he did not <|mask|> what to do.',
  },
];
export const SHIPPED = SHIPPED_MODELS[0];

// {quantize, controller, started, promise, latest (the last progress), tokenizer (once ready),
//  onProgress and onTokenizer (set by the taker)}
export const shippedLoad = (() => {
  const load = {
    quantize: 'none',
    controller: new AbortController(),
    started: performance.now(),
    latest: null,
    tokenizer: null,
  };
  const worker = new Worker(new URL('./dist/worker.mjs', import.meta.url), { type: 'module' });
  load.promise = import('./dist/glassbox.mjs').then(({ loadModel }) => {
    if (load.controller.signal.aborted) worker.terminate(); // (loadModel rejects with the reason)
    return loadModel(SHIPPED.url, {
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
  });
  load.promise.catch(() => {}); // reported by the model picker, which awaits it
  return load;
})();
