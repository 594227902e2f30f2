// @ts-check
// glassbox: GPT-2-family transformers in the browser, a worker or Node, with attention you can see.
//
//   import { loadModel } from './dist/glassbox.mjs';
//   const model = await loadModel('models/brown-small/', { onProgress, worker: true });
//   for await (const step of model.generate('The jury', { maxTokens: 20, attention: true })) ...
//
// Every method is async, so the same code works with the engine in this thread or in a worker.
// Errors are rejected promises with an Error whose message says what to fix, of one of the classes
// of errors.mjs (a stable `name`, the same with or without a worker). The types, and what each
// option means, are glassbox.d.ts's; tests/types checks this file against them.
/** @import { EstimateOptions, GlassboxWorker, LoadOptions, Model, ModelEstimate, ModelFiles, TrainOptions } from './glassbox.js' */
/** @import * as Api from './glassbox.js' */
import { errorFromWire, InvalidArgumentError, NetworkError, StateError } from './errors.mjs';
import {
  checkAttributeOptions,
  checkForwardExperiments,
  checkPatchOptions,
  checkSteer,
} from './experiment-options.mjs';
import { asyncDispose, Generation } from './generation.mjs';
import { hubDirectoryUrl } from './hub.mjs';
import { removeCachedModels } from './model-cache.mjs';
import { checkContextLength, checkLoadOptions, checkQuantize, checkSource, parseConfig } from './model-source.mjs';
import {
  checkChatOptions,
  checkChatTemplateOptions,
  checkClassifyOptions,
  checkForwardOptions,
  checkGenerateOptions,
  checkOptionNames,
  checkSignal,
  checkTokenizeOptions,
  ESTIMATE_OPTIONS,
  formatValue,
  guardCallback,
  jsonOf,
  messagesJson,
} from './options.mjs';
import { importNode, isNode } from './platform.mjs';
import { TrainingRun } from './training.mjs';

export { hubDirectoryUrl } from './hub.mjs';
export { listCachedModels, removeCachedModels } from './model-cache.mjs';
export { MODEL_FILES } from './model-files.mjs';
export {
  GlassboxError,
  InvalidArgumentError,
  ModelFormatError,
  NetworkError,
  NotSupportedError,
  OutOfMemoryError,
  StateError,
  TemplateError,
} from './errors.mjs';

// source: a model directory (URL in the browser, path or file: URL in Node), a hub id, or the
// files themselves: {config, weights, vocab, merges} as ArrayBuffer, typed array, Blob/File or
// string. The options (LoadOptions) are checked here, the engine's by engine.mjs.
/**
 * @param {string | URL | ModelFiles} source
 * @param {LoadOptions} [options]
 * @returns {Promise<Model>}
 */
export async function loadModel(source, options = {}) {
  const checked = checkLoadOptions(source, options);
  const { onProgress, onTokenizer, worker = false, signal, cache, sha256, threads, wasmPaths } = options ?? {};
  signal?.throwIfAborted();
  const given = ownWorker(worker);
  if (worker)
    return WorkerModel.load(checked.source, {
      onProgress,
      onTokenizer,
      signal,
      cache,
      quantize: checked.quantize,
      sha256: checked.sha256,
      contextLength: checked.contextLength,
      given,
      threads,
      wasmPaths,
    });
  // Only the engine in this thread needs engine.mjs and the WebAssembly module: a page that uses a
  // worker never downloads them twice.
  const { loadHere } = await import('./engine.mjs');
  return loadHere(checked.source, {
    onProgress,
    onTokenizer,
    signal,
    cache,
    quantize: checked.quantize,
    sha256: checked.sha256,
    contextLength: checked.contextLength,
    threads,
    wasmPaths,
  });
}

// Trains a GPT on texts (a string or an array of strings): see TrainingRun (training.mjs) for the
// options, the steps it yields and the model it returns. worker: in a worker (true: one started
// here; or a Worker the caller made of worker.mjs, as loadModel's), else with the engine in this
// thread.
/**
 * @param {string | string[]} texts
 * @param {TrainOptions} [options]
 * @returns {Api.TrainingRun}
 */
export function train(texts, options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InvalidArgumentError(`train's options must be an object, got ${formatValue(options)}`);
  const { worker = false, ...rest } = options;
  return new TrainingRun(texts, rest, worker ? new WorkerTraining(ownWorker(worker)) : undefined);
}

// What loading and running a model would take, from its config.json and the header of its
// model.safetensors alone (from a URL: config.json and the file's first 64 KB; the weights are not
// downloaded): {fileBytes, loadBytes (its weights as the engine holds them, and loading them),
// cacheBytes (a generation's keys and values at the full context), totalBytes, limitBytes (what a
// thread's 4 GB heap can give a model), fits}. Counted by the engine itself: in this thread (the
// single-threaded module, ~0.5 MB, is loaded for it if it is not yet), or with { worker: true } in
// a worker of its own, ended once it has answered (a page whose Content-Security-Policy keeps the
// engine out of the page's thread); a Worker the caller made (see ownWorker) is ended the same way.
/**
 * @param {string | URL | ModelFiles} source
 * @param {EstimateOptions} [options]
 * @returns {Promise<ModelEstimate>}
 */
export async function estimateModel(source, options = undefined) {
  const checked = checkOptionNames(options, ESTIMATE_OPTIONS, 'estimateModel');
  const { signal, worker = false, wasmPaths } = checked;
  checkSignal(signal);
  checkSource(source);
  source = hubDirectoryUrl(source) ?? source;
  const quantize = checkQuantize(checked.quantize);
  const contextLength = checkContextLength(checked.contextLength);
  signal?.throwIfAborted();
  const given = ownWorker(worker);
  if (!worker) return (await import('./engine.mjs')).estimate(source, { quantize, contextLength, signal, wasmPaths });
  // One call in a worker of its own, ended once it has answered (or at once, by signal).
  let settle;
  const answer = new Promise((resolve, reject) => {
    settle = { resolve, reject };
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  const thread = await startWorker(
    ({ result, error }) => (error ? settle.reject(errorFromWire(error)) : settle.resolve(result)),
    (e) => settle.reject(e),
    given,
  );
  try {
    thread.postMessage({
      id: 1,
      method: 'estimate',
      args: { source: forWorker(source), quantize, contextLength, wasmPaths: forWorker(wasmPaths) },
    });
    return await answer;
  } finally {
    thread.terminate();
  }
}

// worker.mjs in a worker (a worker thread in Node, a module Web Worker elsewhere): onMessage(data)
// gets its messages, onFailure(error) an error that ended it (or kept it from starting: see
// watchStart). given: a Worker the caller made (ownWorker), else one is started here.
async function startWorker(onMessage, onFailure, given = null) {
  if (given ? typeof given.on === 'function' : isNode) {
    // Node's worker_threads.Worker
    const worker = given ?? new (await importNode('worker_threads')).Worker(new URL('./worker.mjs', import.meta.url));
    worker.on('message', onMessage);
    worker.on('error', onFailure);
    worker.on('exit', (code) => onFailure(new StateError(`the glassbox worker ended (exit code ${code})`)));
    return worker;
  }
  const { worker, url } = given ? { worker: given, url: null } : moduleWorker();
  const started = watchStart(worker, url, onFailure);
  worker.onmessage = (e) => (e.data?.ready ? started() : onMessage(e.data));
  worker.postMessage({ method: 'ready?' }); // (answered once worker.mjs runs, however long ago it started)
  return worker;
}

// A module Web Worker of worker.mjs -> {worker, url: the script it imports, when that is known}.
// Its URL is written out in `new Worker(new URL('./worker.mjs', import.meta.url), { type:
// 'module' })`: bundlers (webpack, Vite) recognise that form and build worker.mjs with its
// imports. A script of another origin than the page's (this module from a CDN) cannot be a
// Worker: the constructor refuses it (a SecurityError), and the worker starts through a module of
// the page's origin, a blob: URL that imports worker.mjs from where this module came from (which
// the server must allow with CORS, as it must for this module itself; the page's CSP must allow
// blob: and the module's origin in worker-src, which governs a worker's imports). Its engine then
// runs on one thread (engine.mjs: its threads' workers would be cross-origin again).
function moduleWorker() {
  try {
    return { worker: new Worker(new URL('./worker.mjs', import.meta.url), { type: 'module' }), url: null };
  } catch (e) {
    if (e?.name !== 'SecurityError') throw e;
  }
  // (A static import: worker.mjs listens before the worker takes its first message.)
  const url = new URL('./worker.mjs', import.meta.url).href;
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url)};\n`], { type: 'text/javascript' }));
  const worker = new Worker(shim, { type: 'module' });
  setTimeout(() => URL.revokeObjectURL(shim), 60_000); // once the worker has surely read it
  return { worker, url };
}

// Until worker.mjs says it is running ({ready}, its answer to 'ready?'), a failure to start
// rejects (onFailure) with what stopped it: the directive of the page's Content-Security-Policy
// that refused the worker, or the script that could not be loaded (a NetworkError where it is
// one); a worker that neither starts nor fails within START_MS is given up on. Returns started(),
// for its {ready} message.
const START_MS = 30_000;
function watchStart(worker, url, onFailure) {
  let done = false,
    refused = null;
  const onViolation = (e) => {
    refused ??= e;
  };
  globalThis.addEventListener?.('securitypolicyviolation', onViolation);
  const stop = () => {
    done = true;
    globalThis.removeEventListener?.('securitypolicyviolation', onViolation);
    clearTimeout(timer);
  };
  const fail = async (detail) => {
    if (done) return;
    stop();
    onFailure(await startFailure(refused, url, detail));
  };
  const timer = setTimeout(() => fail(null), START_MS);
  worker.onerror = (e) => {
    if (done) return onFailure(new StateError(`the glassbox worker failed: ${e.message ?? 'an error in the worker'}`));
    e.preventDefault?.();
    // (a CSP violation is reported as a task of its own, after the error: wait for it)
    setTimeout(() => fail(e.message ?? ''), 50);
  };
  return stop;
}

// The error of a worker that did not start: refused (a securitypolicyviolation event, or null),
// url (the script it imports, when known), detail (what its error event said; null: it has said
// nothing for START_MS).
async function startFailure(refused, url, detail) {
  if (refused) {
    return new StateError(
      `the glassbox worker could not start: the Content-Security-Policy directive ${refused.effectiveDirective ?? refused.violatedDirective} ` +
        `refused ${refused.blockedURI || 'its script'} (allow it there, or hand loadModel a Worker made as the policy allows)`,
    );
  }
  if (url) {
    const status = await fetch(url).then(
      (r) => (r.ok ? null : `HTTP ${r.status}`),
      (e) => e.message,
    );
    if (status) return new NetworkError(`the glassbox worker could not start: cannot load ${url}: ${status}`);
  }
  const script = url ?? 'worker.mjs';
  if (detail === null) {
    return new StateError(
      `the glassbox worker did not start within ${START_MS / 1000} s: ${script} or a module it imports never ran ` +
        "(a bundler's build of it that loads nothing, or a Worker that is not of worker.mjs)",
    );
  }
  return new StateError(
    `the glassbox worker could not start${detail ? ` (${detail})` : ''}: ${script} or a module it imports ` +
      'could not be loaded (is every file of the package served where it imports them from?)',
  );
}

// The `worker` option: false or true, or a Worker the caller made of glassbox's worker.mjs (a
// module Web Worker, or a Node worker thread), made the way its bundler or its
// Content-Security-Policy needs. The Worker is glassbox's from then on: it is ended with the
// model (dispose) or once the estimate has answered, and cannot be handed over twice.
const handedOver = new WeakSet();
function ownWorker(worker) {
  if (worker === undefined || worker === null || typeof worker === 'boolean') return null;
  if (typeof worker !== 'object' || typeof worker.postMessage !== 'function' || typeof worker.terminate !== 'function')
    throw new InvalidArgumentError("worker must be true, false or a Worker running glassbox's worker.mjs");
  if (handedOver.has(worker))
    throw new InvalidArgumentError('this Worker was already handed to glassbox: make a new one for each model');
  if (worker.threadId === -1) throw new InvalidArgumentError('this worker thread has already ended'); // Node's Worker
  handedOver.add(worker);
  return worker;
}

// A source as a worker can read it: a URL resolved here, against the page's address (the worker's
// own address is another); Blobs/Files are cloned by reference; buffers are copied.
function forWorker(source) {
  if (!isNode && (typeof source === 'string' || source instanceof URL))
    return new URL(source, globalThis.location?.href).href;
  return source instanceof URL ? source.href : source;
}

// A conversation, and the template's variables, as the worker gets them: their JSON, parsed (what
// JSON cannot hold is refused here, as the engine in this thread refuses it).
const messagesForWorker = (messages) => JSON.parse(messagesJson(messages));
const varsForWorker = (o) =>
  o.templateVars === undefined ? o : { ...o, templateVars: JSON.parse(jsonOf(o.templateVars, 'templateVars')) };

// Ids as the worker gets them: a typed array as a plain array (the worker checks what it gets).
/** @param {unknown} ids */
const plainIds = (ids) => (ArrayBuffer.isView(ids) ? Array.from(/** @type {Int32Array} */ (ids)) : ids);

// --- the same API with the engine in a worker (a Web Worker, or a worker thread in Node); the
// messages between the two are listed at the top of worker.mjs

/** @implements {Model} */
class WorkerModel {
  #worker; // null once disposed
  #channel; // the calls to it (WorkerChannel)
  #generating = false;
  #disposing = false; // dispose() has begun: a patch under way ends with the model, whatever its last message

  // The worker reads the source itself (see model-source.mjs): a URL is resolved here against the
  // page's address; Blobs/Files are cloned by reference; buffers are copied, so the caller's stay usable.
  static async load(
    source,
    { onProgress, onTokenizer, signal, cache, quantize, sha256, contextLength, given, threads, wasmPaths },
  ) {
    const model = new WorkerModel();
    model.#channel = await WorkerChannel.start(given);
    model.#worker = model.#channel.worker;
    source = forWorker(source);
    // A callback that throws ends the load (the worker stops reading), which rejects with its error.
    let callbackFailed;
    const failure = new Promise((_, reject) => {
      callbackFailed = (e) => {
        model.#worker?.postMessage({ method: 'cancel-load' });
        reject(e);
      };
    });
    failure.catch(() => {});
    onProgress = guardCallback('onProgress', onProgress, callbackFailed);
    onTokenizer = guardCallback('onTokenizer', onTokenizer, callbackFailed);
    // The worker says when its tokenizer is ready: this model's tokenize and detokenize work then.
    const tokenizerReady =
      onTokenizer &&
      (({ config, shape }) =>
        onTokenizer({
          config: parseConfig(config),
          shape: Object.freeze(shape),
          tokenize: (text, options) => model.tokenize(text, options),
          detokenize: (ids) => model.detokenize(ids),
        }));
    const loaded = model.#channel.call(
      'load',
      { source, cache, quantize, sha256, contextLength, threads, wasmPaths: forWorker(wasmPaths) },
      [],
      onProgress,
      tokenizerReady,
    );
    // Cancelling: the worker stops reading (and removes what it put in the cache), then it ends.
    // The caller does not wait for that: the promise rejects at once.
    let onAbort;
    const cancelled = new Promise((_, reject) => {
      onAbort = () => {
        model.#worker?.postMessage({ method: 'cancel-load' });
        reject(signal.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      signal?.throwIfAborted(); // aborted while the worker started
      model.#loaded(await Promise.race([loaded, cancelled, failure]), quantize);
    } catch (e) {
      const worker = model.#worker;
      model.#worker = null;
      if (signal?.aborted) worker.postMessage({ method: 'cancel-load' }); // also when aborted before the listener
      // A failed load leaves no thread behind; a cancelled one first finishes its clean-up. A load
      // that was cancelled only after the worker had finished it (and stored it) keeps nothing either.
      const unstore = (result) =>
        cache && !result?.fromCache && typeof source === 'string' && removeCachedModels(source, cache);
      loaded
        .then(unstore)
        .catch(() => {})
        .finally(() => {
          model.#channel.die(e);
          worker.terminate();
        });
      if (!signal?.aborted) await loaded.catch(() => {});
      throw e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    return model;
  }

  // The worker's answer to 'load': what the model is (worker.mjs's load; config: config.json's text).
  #loaded(result, quantize) {
    this.config = parseConfig(result.config);
    this.shape = Object.freeze(result.shape);
    this.contextLength = result.contextLength;
    this.quantize = quantize;
    this.threads = result.threads;
    this.labels = Object.freeze(result.labels);
    this.bidirectional = result.bidirectional;
    this.maskTokenId = result.maskTokenId;
    this.generationConfig = Object.freeze(result.generationConfig);
    this.specialTokenIds = Object.freeze(result.specialTokenIds);
    this.hasTokenizer = result.hasTokenizer;
    this.hasChatTemplate = result.hasChatTemplate;
    if (result.fromCache) this.fromCache = true;
    if (result.cacheError) this.cacheError = result.cacheError;
  }

  #live() {
    if (!this.#worker) throw new StateError('this model has been disposed');
    if (this.#channel.dead) throw this.#channel.dead;
  }

  /** @type {Model['tokenize']} */
  async tokenize(text, options) {
    this.#live();
    checkTokenizeOptions(options);
    return this.#channel.call('tokenize', { text, options });
  }

  /** @type {Model['detokenize']} */
  async detokenize(ids) {
    this.#live();
    return this.#channel.call('detokenize', { ids: plainIds(ids) });
  }

  /** @type {Model['forward']} */
  async forward(ids, options) {
    this.#live();
    checkForwardExperiments(checkForwardOptions(options));
    return this.#channel.call('forward', { ids: plainIds(ids), options });
  }

  /** @type {Model['forwardBatch']} */
  async forwardBatch(batch) {
    this.#live();
    return this.#channel.call('forwardBatch', { batch: Array.isArray(batch) ? batch.map(plainIds) : batch });
  }

  /** @type {Model['classify']} */
  async classify(input, options) {
    this.#live();
    checkClassifyOptions(options);
    return this.#channel.call('classify', { input: plainIds(input), options });
  }

  // The worker runs it (engine.mjs's patch) and posts each row as it comes; an abort, or an
  // onProgress that throws, tells it to stop, and the call rejects once it has (so that the model
  // is free for the next call).
  /** @type {Model['patch']} */
  async patch(options) {
    this.#live();
    const { onProgress, signal, ...rest } = checkPatchOptions(options);
    signal?.throwIfAborted();
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const progress = guardCallback('onProgress', onProgress, (e) => stop.abort(e));
    const args = { ...rest, clean: plainIds(rest.clean), corrupted: plainIds(rest.corrupted) };
    try {
      const result = await this.#channel.callAbortable('patch', { options: args }, stop.signal, (p) => progress?.(p));
      // The worker may have sent its last row before it read the dispose message: the run still
      // ends with the model, as it does in this thread.
      if (this.#disposing) throw new StateError('this model has been disposed');
      return result;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** @type {Model['attribute']} */
  async attribute(options) {
    this.#live();
    const checked = checkAttributeOptions(options);
    return this.#channel.call('attribute', { options: { ...checked, prompt: plainIds(checked.prompt) } });
  }

  // Pipelined: the worker computes up to `ahead` steps (default 8) beyond what this iterator has
  // yielded and posts them in batches (worker.mjs), so the engine runs at its own speed while the
  // caller takes steps at its own. Each step yielded returns one step of credit. An abort, or
  // leaving the loop early (break, return, a throw in its body), drops whatever is queued: no step
  // is yielded after it, and the worker's generation ends too.
  /** @type {Model['generate']} */
  generate(prompt, options = {}) {
    return new Generation(this.#generate('generate', () => ({ prompt }), options, checkGenerateOptions));
  }

  /** @type {Model['chat']} */
  chat(messages, options = {}) {
    const input = () => ({ messages: messagesForWorker(messages) });
    return new Generation(this.#generate('chat', input, options, (o) => varsForWorker(checkChatOptions(o))));
  }

  /** @type {Model['applyChatTemplate']} */
  async applyChatTemplate(messages, options) {
    this.#live();
    const checked = varsForWorker(checkChatTemplateOptions(options));
    return this.#channel.call('applyChatTemplate', { messages: messagesForWorker(messages), options: checked });
  }

  // method: the worker's 'generate' or 'chat'; input(): what it is given besides the options
  // ({prompt} or {messages}), after they are checked.
  async *#generate(method, input, options, check) {
    this.#live();
    const { signal, ...rest } = check(options);
    checkSteer(rest.steer);
    const given = input();
    if (this.#generating)
      throw new StateError('a generation is already running on this model: finish or abort it first');
    signal?.throwIfAborted();
    // Claimed here, and given back in the finally below whatever happens after this line.
    this.#generating = true;
    const steps = [];
    let wake = null,
      finished = false,
      done = null,
      onAbort = null;
    try {
      done = this.#channel.call(method, { ...given, options: rest }, [], (batch) => {
        steps.push(...batch);
        wake?.();
      });
      const settled = () => {
        finished = true;
        wake?.();
      };
      done.then(settled, settled);
      onAbort = () => wake?.();
      signal?.addEventListener('abort', onAbort);
      for (;;) {
        if (signal?.aborted) return { stopReason: 'cancelled' };
        this.#live(); // disposed: nothing queued is yielded
        if (steps.length) {
          yield steps.shift();
          this.#worker?.postMessage({ method: 'pull', n: 1 });
          continue;
        }
        if (finished) return await done; // rethrows the worker's error, if any
        await new Promise((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      steps.length = 0;
      if (done && !finished && this.#worker && !this.#channel.dead) {
        this.#worker.postMessage({ method: 'abort' });
        await done.catch(() => {});
      }
      this.#generating = false;
    }
  }

  async dispose() {
    if (!this.#worker) return;
    this.#disposing = true;
    const worker = this.#worker;
    if (!this.#channel.dead) await this.#channel.call('dispose', {}).catch(() => {});
    this.#worker = null;
    this.#channel.die(new StateError('this model has been disposed'));
    await worker.terminate();
  }

  [asyncDispose]() {
    return this.dispose();
  }
}

// train() with a worker: TrainingRun's backend that trains in a worker of its own (worker.mjs's
// train* calls), one message per step. The models it gives are loaded from its files into workers
// of their own (a copy of the weights: the run's worker goes on training).
class WorkerTraining {
  texts = null;
  #given;
  #channel = null;
  #freed = false;

  constructor(given) {
    this.#given = given;
  }

  get started() {
    return this.#channel !== null;
  }

  async step(settings) {
    if (!this.#channel) {
      const channel = await WorkerChannel.start(this.#given);
      if (this.#freed) {
        await channel.close(new StateError('this training has ended'));
        return null;
      }
      this.#channel = channel;
      await channel.call('trainStart', { texts: this.texts, options: settings });
      this.texts = null;
    }
    return this.#channel.call('trainStep', {});
  }

  async model() {
    return loadModel(await this.files(), { worker: true });
  }

  async files() {
    return this.#channel.call('trainFiles', {});
  }

  async settings() {
    return this.#channel.call('trainSettings', {});
  }

  async free() {
    this.#freed = true;
    const channel = this.#channel;
    this.#channel = null;
    await channel?.close(new StateError('this training has ended'));
  }
}

// Calls to a worker and their answers, by id: worker.mjs's messages {id, method, args} one way,
// {id, result | error | steps | progress | tokenizer} the other (see the top of worker.mjs).
class WorkerChannel {
  #worker;
  #calls = new Map(); // id -> {resolve, reject, onStep, onTokenizer}
  #nextId = 1;
  #dead = null; // the Error every call gets once the worker is gone

  // In Node the worker thread keeps the process alive only while a call is pending (ref, unref):
  // a script that ends without dispose() exits.
  static async start(given) {
    const channel = new WorkerChannel();
    channel.#worker = await startWorker(
      (m) => channel.#receive(m),
      (e) => channel.die(e),
      given,
    );
    channel.#worker.unref?.();
    return channel;
  }

  get worker() {
    return this.#worker;
  }
  get dead() {
    return this.#dead;
  }

  // onStep: a generation's batches and a load's progress; onTokenizer: a load's early tokenizer.
  call(method, args, transfer = [], onStep, onTokenizer) {
    return new Promise((resolve, reject) => {
      if (this.#dead) return reject(this.#dead);
      const id = this.#nextId++;
      if (this.#calls.size === 0) this.#worker.ref?.();
      this.#calls.set(id, { resolve, reject, onStep, onTokenizer });
      this.#worker.postMessage({ id, method, args }, transfer);
    });
  }

  // A call that `signal` stops: the worker is told ('abort-call'), and once it has answered the
  // call rejects with the signal's reason (also when the worker had finished before the message
  // reached it: an aborted call never resolves).
  async callAbortable(method, args, signal, onStep) {
    const id = this.#nextId; // (the id call() gives it)
    const onAbort = () => this.#worker.postMessage({ method: 'abort-call', id });
    signal.addEventListener('abort', onAbort, { once: true });
    let result;
    try {
      result = await this.call(method, args, [], onStep);
    } catch (e) {
      throw signal.aborted ? signal.reason : e;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (signal.aborted) throw signal.reason;
    return result;
  }

  // The worker is gone (disposed, crashed, exited): every pending and later call rejects.
  die(error) {
    this.#dead ??= error;
    for (const call of this.#calls.values()) call.reject(error);
    this.#calls.clear();
    this.#worker?.unref?.();
  }

  async close(error) {
    this.die(error);
    await this.#worker.terminate();
  }

  #receive({ id, result, error, steps, progress, tokenizer }) {
    const call = this.#calls.get(id);
    if (!call) return;
    if (steps) return call.onStep(steps);
    if (progress) return call.onStep?.(progress);
    if (tokenizer) return call.onTokenizer?.(tokenizer);
    this.#calls.delete(id);
    if (this.#calls.size === 0) this.#worker.unref?.();
    if (error !== undefined) call.reject(errorFromWire(error));
    else call.resolve(result);
  }
}
