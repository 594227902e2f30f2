// The engine inside a worker: a Web Worker (module worker) or a Node worker thread, driven by
// WorkerModel in glassbox.mjs. The messages, all of them:
//
//   page -> worker
//     {method: 'ready?'}               is the worker running? (it answers {ready: true})
//     {id, method, args}               a call: method is a key of `calls` below, args its object
//     {method: 'pull', n}              the page took n more steps: n more may be computed ahead
//     {method: 'abort'}                end the running generation (what is computed is dropped)
//     {method: 'cancel-load'}          stop reading the model's files (the load rejects)
//     {method: 'abort-call', id}       abort call id (a 'patch': it stops after the layer it is
//                                      on, and rejects)
//   worker -> page
//     {ready: true}                    the answer to 'ready?': the worker runs and listens
//     {id, result}                     the call's result (its typed arrays transferred, not copied)
//     {id, error: {name, message}}     the call failed (errors.mjs makes the error again)
//     {id, progress: {loaded, total}}  'load': bytes of model.safetensors read so far
//     {id, progress: {site, layer, row, done, total}}
//                                      'patch': one layer of one site done (its row of results)
//     {id, tokenizer: {config, shape}} 'load': the tokenizer is ready (tokenize and detokenize
//                                      work from now on, before the weights have arrived);
//                                      config: config.json's text, as in 'load''s result
//     {id, steps: [step, ...]}         'generate', 'chat': the tokens computed since the last batch
//
// Training (glassbox.mjs's WorkerTraining): 'trainStart' {texts, options} makes the run,
// 'trainStep' runs one step (null after the last), 'trainFiles' gives the model's four files,
// 'trainSettings' the run's settings with the engine's defaults. A worker that trains loads the
// trainer's module only (training-core.mjs), never the engine's: the page loads the model from
// the files.
//
// Generation is pipelined: the worker computes up to `ahead` steps beyond what the page has taken
// (its credit, returned by 'pull'), posting them in batches of at most BATCH_MS of work, so that
// the engine never waits for the page to draw and memory stays bounded by `ahead` steps.

import { configText, estimate, loadHere, threadsLoaded } from './engine.mjs';
import { LocalTraining } from './training.mjs';
import { errorToWire, StateError } from './errors.mjs';
import { importNode } from './platform.mjs';

// The channel to the page: a Web Worker's own scope, or a Node worker thread's parentPort. Found
// without a top-level await, which a bundler's worker build may not allow; a Node worker keeps the
// messages sent to it until it listens, and this worker sends only in answer to one.
let nodeParent = null;
const port =
  typeof self === 'object' && typeof self.postMessage === 'function'
    ? {
        send: (m, transfer) => self.postMessage(m, transfer),
        listen: (f) => {
          self.onmessage = (e) => f(e.data);
        },
      }
    : {
        send: (m, transfer) => nodeParent.postMessage(m, transfer),
        listen: (f) =>
          importNode('worker_threads').then(({ parentPort }) => {
            nodeParent = parentPort;
            parentPort.on('message', f);
          }),
      };

let model = null;
let tokenizer = null; // the tokenizer alone, while the model's weights are on their way
let loading = null; // AbortController of the load in progress
let generation = null; // the running generation: {credit, aborted, wake}
let training = null; // train() with a worker: {run (LocalTraining), settings}
const aborts = new Map(); // id -> AbortController of a call that 'abort-call' can stop

// A batch of steps is posted once this much time went into computing it (the first step of a
// generation at once, for the time to the first token): one message per few milliseconds instead
// of one per token, each a wake-up of the page's thread.
const BATCH_MS = 4;

const calls = {
  // The worker reads the files itself: nothing large is copied on the page's thread. The load is
  // engine.mjs's, as in the page's thread; the tokenizer it makes before the weights are in answers
  // tokenize and detokenize until then.
  async load(args, id) {
    loading = new AbortController();
    try {
      model = await loadHere(args.source, {
        onProgress: (progress) => port.send({ id, progress }),
        onTokenizer: (t) => {
          tokenizer = t;
          port.send({ id, tokenizer: { config: configText(t), shape: t.shape } });
        },
        signal: loading.signal,
        cache: args.cache,
        quantize: args.quantize,
        sha256: args.sha256,
        contextLength: args.contextLength,
        threads: args.threads,
        wasmPaths: args.wasmPaths,
      });
    } finally {
      loading = null;
      tokenizer = null; // handed over to the model (or ended with the load)
    }
    return {
      config: configText(model), // (its text: the page parses it)
      shape: model.shape,
      contextLength: model.contextLength,
      threads: model.threads,
      fromCache: model.fromCache,
      cacheError: model.cacheError,
      labels: model.labels,
      bidirectional: model.bidirectional,
      maskTokenId: model.maskTokenId,
      generationConfig: model.generationConfig,
      specialTokenIds: model.specialTokenIds,
      hasTokenizer: model.hasTokenizer,
      hasChatTemplate: model.hasChatTemplate,
    };
  },
  tokenize: (args) => (model ?? tokenizer ?? noModel()).tokenize(args.text, args.options),
  detokenize: (args) => (model ?? tokenizer ?? noModel()).detokenize(args.ids),
  forward: (args) => (model ?? noModel()).forward(args.ids, args.options),
  forwardBatch: (args) => (model ?? noModel()).forwardBatch(args.batch),
  classify: (args) => (model ?? noModel()).classify(args.input, args.options),
  applyChatTemplate: (args) => (model ?? noModel()).applyChatTemplate(args.messages, args.options),
  // The page's patch has checked the options and keeps its onProgress and signal: here the rows
  // are posted as they come, and 'abort-call' stops the run.
  async patch(args, id) {
    const stop = new AbortController();
    aborts.set(id, stop);
    try {
      return await (model ?? noModel()).patch({
        ...args.options,
        signal: stop.signal,
        onProgress: (progress) => port.send({ id, progress }, [progress.row.buffer]),
      });
    } finally {
      aborts.delete(id);
    }
  },
  attribute: (args) => (model ?? noModel()).attribute(args.options),
  generate: (args, id) => stream((m, options) => m.generate(args.prompt, options), args, id),
  chat: (args, id) => stream((m, options) => m.chat(args.messages, options), args, id),
  // The page's TrainingRun has checked the options; here is its backend (training.mjs).
  trainStart(args) {
    training = { run: new LocalTraining(), settings: args.options };
    training.run.texts = args.texts;
    return null;
  },
  // A step, or null once every step is done (the page loads its own copy of the model from the files).
  trainStep: () => (training ?? noTraining()).run.step(training.settings),
  trainFiles: () => (training ?? noTraining()).run.files(),
  trainSettings: () => (training ?? noTraining()).run.settings(),
  // estimateModel in a worker: what a model needs, from its config.json and weights' header.
  estimate: (args) =>
    estimate(args.source, { quantize: args.quantize, contextLength: args.contextLength, wasmPaths: args.wasmPaths }),
  async dispose() {
    await model?.dispose();
    model = null;
    await threadsLoaded(); // the page ends this worker next: not while a thread is still loading
    return null;
  },
};

// A generation (generate or chat: begin(model, options) starts it) streamed to the page: steps
// computed ahead up to the page's credit, posted in batches.
async function stream(begin, args, id) {
  const { ahead = 8, ...options } = args.options ?? {};
  const run = (generation = { credit: ahead, aborted: false, wake: null });
  let batch = [],
    transfer = [],
    since = -Infinity;
  const flush = () => {
    if (batch.length) port.send({ id, steps: batch }, transfer);
    batch = [];
    transfer = [];
    since = performance.now();
  };
  try {
    const steps = begin(model ?? noModel(), options);
    for (;;) {
      if (run.credit === 0 && !run.aborted) {
        // the page is behind: wait for it
        flush();
        await new Promise((resolve) => {
          run.wake = resolve;
        });
        run.wake = null;
      }
      if (run.aborted) {
        await steps.return();
        return { stopReason: 'cancelled' };
      }
      // Between steps the engine turns the event loop (engine.mjs), so 'pull' and 'abort' arrive.
      const { value, done } = await steps.next();
      if (done) {
        flush();
        return value;
      }
      batch.push(value);
      if (value.attention) transfer.push(value.attention.buffer);
      --run.credit;
      if (performance.now() - since >= BATCH_MS) flush();
    }
  } finally {
    generation = null;
  }
}

function noModel() {
  throw new StateError('the model is not loaded yet');
}

function noTraining() {
  throw new StateError('no training runs in this worker');
}

async function run({ id, method, args }) {
  if (!Object.hasOwn(calls, method)) throw new StateError(`unknown worker method ${method}`);
  return calls[method](args, id);
}

// Typed arrays in a result move to the page without a copy.
const buffersOf = (result) =>
  result && typeof result === 'object'
    ? Object.values(result)
        .filter(ArrayBuffer.isView)
        .map((a) => a.buffer)
    : [];

port.listen(async (message) => {
  if (message.method === 'ready?') return port.send({ ready: true });
  if (message.method === 'pull') {
    if (generation) generation.credit += message.n;
    return generation?.wake?.();
  }
  if (message.method === 'cancel-load') return loading?.abort(new DOMException('the load was cancelled', 'AbortError'));
  if (message.method === 'abort-call')
    return aborts.get(message.id)?.abort(new DOMException('the call was aborted', 'AbortError'));
  if (message.method === 'abort') {
    if (generation) generation.aborted = true;
    return generation?.wake?.();
  }
  try {
    const result = await run(message);
    port.send({ id: message.id, result }, buffersOf(result));
  } catch (e) {
    port.send({ id: message.id, error: errorToWire(e) });
  }
});
