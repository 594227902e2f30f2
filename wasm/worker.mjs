// The engine inside a worker: a Web Worker (module worker) or a Node worker thread. glassbox.mjs
// posts {id, method, args}; results come back as {id, result} or {id, error: {name, message}}, load progress as
// {id, progress}, generation steps as {id, step}, one per "pull" so that the page decides the pace
// and can abort between tokens.
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

async function run({ id, method, args }) {
  switch (method) {
    case 'load': {
      // The worker reads the files itself: nothing large is copied on the page's thread.
      const onProgress = (progress) => port.send({ id, progress });
      loading = new AbortController();
      let files;
      try {
        files = await readModelFiles(args.source, { onProgress, cache: args.cache, sha256: args.sha256, signal: loading.signal });
      } finally {
        loading = null;
      }
      model = await LocalModel.load(files, { quantize: args.quantize });
      return { config: model.config, threads: model.threads, fromCache: files.fromCache, cacheError: files.cacheError,
               labels: model.labels, bidirectional: model.bidirectional, maskTokenId: model.maskTokenId };
    }
    case 'tokenize': return model.tokenize(args.text, args.options);
    case 'detokenize': return model.detokenize(args.ids);
    case 'forward': return model.forward(args.ids, args.options);
    case 'forwardBatch': return model.forwardBatch(args.batch);
    case 'classify': return model.classify(args.input);
    case 'generate': {
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
    }
    case 'dispose':
      await model?.dispose();
      model = null;
      return null;
    default:
      throw new StateError(`unknown worker method ${method}`);
  }
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
