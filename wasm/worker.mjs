// The engine inside a worker: a Web Worker (module worker) or a Node worker thread, driven by
// WorkerModel in glassbox.mjs. The messages, all of them:
//
//   page -> worker
//     {id, method, args}               a call: method is a key of `calls` below, args its object
//     {method: 'pull'}                 the page took the last step: compute the next token
//     {method: 'abort'}                end the running generation
//     {method: 'cancel-load'}          stop reading the model's files (the load rejects)
//   worker -> page
//     {id, result}                     the call's result (its typed arrays transferred, not copied)
//     {id, error: {name, message}}     the call failed (errors.mjs makes the error again)
//     {id, progress: {loaded, total}}  'load': bytes of model.safetensors read so far
//     {id, step}                       'generate': one token; the next waits for a 'pull', so the
//                                      page decides the pace and can abort between tokens

import { LocalModel } from './engine.mjs';
import { errorToWire, StateError } from './errors.mjs';
import { readModelFiles } from './model-source.mjs';

const port = typeof self === 'object' && typeof self.postMessage === 'function'
  ? { send: (m, transfer) => self.postMessage(m, transfer), listen: (f) => { self.onmessage = (e) => f(e.data); } }
  : await (async () => {
      const { parentPort } = await import('node:worker_threads');
      return { send: (m, transfer) => parentPort.postMessage(m, transfer), listen: (f) => parentPort.on('message', f) };
    })();

let model = null;
let pull = null;      // resolves when the page asks for the next token
let aborted = false;
let loading = null;   // AbortController of the load in progress

const calls = {
  // The worker reads the files itself: nothing large is copied on the page's thread.
  async load(args, id) {
    loading = new AbortController();
    let files;
    try {
      files = await readModelFiles(args.source, { onProgress: (progress) => port.send({ id, progress }), cache: args.cache,
                                                  sha256: args.sha256, signal: loading.signal });
    } finally {
      loading = null;
    }
    model = await LocalModel.load(files, { quantize: args.quantize });
    return { config: model.config, threads: model.threads, fromCache: files.fromCache, cacheError: files.cacheError,
             labels: model.labels, bidirectional: model.bidirectional, maskTokenId: model.maskTokenId };
  },
  tokenize: (args) => model.tokenize(args.text, args.options),
  detokenize: (args) => model.detokenize(args.ids),
  forward: (args) => model.forward(args.ids, args.options),
  forwardBatch: (args) => model.forwardBatch(args.batch),
  classify: (args) => model.classify(args.input),
  async generate(args, id) {
    aborted = false;
    const steps = model.generate(args.prompt, args.options);
    for (;;) {
      const { value, done } = await steps.next();
      if (done) return value;
      const transfer = value.attention ? [value.attention.buffer] : [];
      port.send({ id, step: value }, transfer);
      // Wait for the page to ask for more, unless it already aborted while this step was computed.
      if (!aborted) await new Promise((resolve) => { pull = resolve; });
      pull = null;
      if (aborted) {
        await steps.return();
        return { stopReason: 'cancelled' };
      }
    }
  },
  async dispose() {
    await model?.dispose();
    model = null;
    return null;
  },
};

async function run({ id, method, args }) {
  if (!Object.hasOwn(calls, method)) throw new StateError(`unknown worker method ${method}`);
  return calls[method](args, id);
}

// Typed arrays in a result move to the page without a copy.
const buffersOf = (result) => (result && typeof result === 'object' ? Object.values(result).filter(ArrayBuffer.isView).map((a) => a.buffer) : []);

port.listen(async (message) => {
  if (message.method === 'pull') return pull?.();
  if (message.method === 'cancel-load') return loading?.abort(new DOMException('the load was cancelled', 'AbortError'));
  if (message.method === 'abort') {
    aborted = true;
    return pull?.();
  }
  try {
    const result = await run(message);
    port.send({ id: message.id, result }, buffersOf(result));
  } catch (e) {
    port.send({ id: message.id, error: errorToWire(e) });
  }
});
