// The engine in the current thread: the Embind module (glassbox-core.mjs/.wasm, or with threads
// glassbox-core-mt.*) behind async methods. glassbox.mjs uses it directly, or from worker.mjs
// inside a Web Worker / worker thread.
import { errorClasses, InvalidArgumentError, ModelFormatError, OutOfMemoryError, StateError } from './errors.mjs';
import { ChatTemplate, hasChatTemplate } from './chat.mjs';
import {
  checkAttributeOptions,
  checkForwardExperiments,
  checkPatchOptions,
  checkSteer,
  PATCH_SITES,
} from './experiment-options.mjs';
import { asyncDispose, Generation } from './generation.mjs';
import { checkIds, checkText } from './input.mjs';
import { removeCachedModels } from './model-cache.mjs';
import { headerLength } from './model-files.mjs';
import { readModelHeader } from './model-header.mjs';
import { parseConfig, readModelFiles } from './model-source.mjs';
import { isNode } from './platform.mjs';
import {
  checkClassifyOptions,
  checkChatOptions,
  checkChatTemplateOptions,
  checkForwardOptions,
  checkGenerateOptions,
  checkTokenizeOptions,
  formatValue,
  guardCallback,
  inspectOptions,
  jsonOf,
  messagesJson,
} from './options.mjs';
import { makeModule } from './wasm-module.mjs';

export { checkIds, checkText } from './input.mjs'; // (training.mjs checks its texts as the model does)

let corePromise = null; // one WASM instance per thread, shared by every model loaded in it
let coreSettings = null; // what it was made with: {threads, wasmPaths}
let providedFactory = null; // the single-threaded module's factory, if given (useCoreFactory)

// Where import() is not allowed (a service worker), the entry imports the single-threaded module
// statically and hands its factory here; the engine of this thread is then made from it.
export function useCoreFactory(create) {
  providedFactory = create;
}

// Threads the engine can use here: in a cross-origin isolated page (SharedArrayBuffer usable),
// one per core up to 8, when the engine's files are of the page's origin; elsewhere, and in
// Node, 1 (the single-threaded module).
export function availableThreads() {
  if (isNode || providedFactory || globalThis.crossOriginIsolated !== true || typeof SharedArrayBuffer !== 'function')
    return 1;
  // The threaded module starts its threads' workers from beside its files, which must be of this
  // origin. (The .wasm's URL, as a bundler places it: a bundler makes a bare import.meta.url the
  // path the module had on the machine that built it.)
  if (CORE.threaded.url().origin !== globalThis.location?.origin) return 1;
  return Math.max(1, Math.min(8, globalThis.navigator?.hardwareConcurrency ?? 1));
}

// The loadModel options that choose this thread's engine, checked: threads (an integer >= 1; more
// than availableThreads() is that many; default: all of them), wasmPaths (the directory the .wasm
// files are served from, as a URL, or a path in Node; default: next to the glue, where a bundler
// puts them). Returns them resolved.
export function engineSettings({ threads, wasmPaths } = {}) {
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1))
    throw new InvalidArgumentError(`threads must be an integer >= 1, got ${formatValue(threads)}`);
  if (wasmPaths !== undefined && typeof wasmPaths !== 'string' && !(wasmPaths instanceof URL))
    throw new InvalidArgumentError(
      `wasmPaths must be the URL (or, in Node, the path) of the directory holding the .wasm files, got ${formatValue(wasmPaths)}`,
    );
  return {
    threads: Math.min(threads ?? availableThreads(), availableThreads()),
    wasmPaths: wasmPaths === undefined ? null : directoryOf(wasmPaths),
  };
}

const directoryOf = (dir) => {
  const text = String(dir).endsWith('/') ? String(dir) : `${dir}/`;
  return isNode && !/^[a-z][\w+.-]*:/i.test(text) ? text : new URL(text, globalThis.location?.href).href;
};

// This thread's engine, made at the first call with the settings given then (engineSettings'
// options): the Emscripten module, its .wasm instantiated by wasm-module.mjs. The threaded module
// starts its Web Workers (threads - 1, the pool of glassbox/threads.h) in the background. Asking
// again with other settings is an error: the engine of a thread is made once (a worker of its own
// can have others).
export function loadCore(options = undefined) {
  const wanted = engineSettings(options);
  if (corePromise) {
    if (options?.threads !== undefined && wanted.threads !== coreSettings.threads)
      throw new InvalidArgumentError(
        `the engine in this thread already runs with ${coreSettings.threads} thread(s); ` +
          'load with { worker: true } for an engine with another count',
      );
    if (options?.wasmPaths !== undefined && wanted.wasmPaths !== coreSettings.wasmPaths)
      throw new InvalidArgumentError(
        `the engine in this thread was already loaded from ${coreSettings.wasmPaths ?? 'its default place'}`,
      );
    return corePromise;
  }
  coreSettings = wanted;
  corePromise = createCore(wanted);
  corePromise.catch(() => {
    // a failure is reported to whoever awaits it; the next call tries again
    corePromise = coreSettings = null;
  });
  return corePromise;
}

// Resolves once every Web Worker of the threaded engine's pool has loaded its script and module
// (Emscripten marks each `loaded`), or after `ms`. The pool loads in the background, so a worker
// that runs this engine and is ended soon after it started could cut a load off mid-way, which the
// pool's worker reports as an error in the console: worker.mjs waits for this before its dispose
// answers (and the page ends it). Nothing to wait for without threads.
export async function threadsLoaded(ms = 3000) {
  const pool = (await corePromise?.catch(() => null))?.PThread;
  if (!pool) return;
  const end = performance.now() + ms;
  while ([...pool.unusedWorkers, ...pool.runningWorkers].some((w) => !w.loaded) && performance.now() < end)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

// The engine's files: each URL is written out as `new URL('./file', import.meta.url)`, the form
// bundlers recognise (they ship the file and put its address there). Only the .wasm files are
// named: the glue is imported, and the threaded glue names its threads' worker script itself.
const CORE = {
  single: {
    glue: 'glassbox-core.mjs',
    file: 'glassbox-core.wasm',
    url: () => new URL('./glassbox-core.wasm', import.meta.url),
  },
  threaded: {
    glue: 'glassbox-core-mt.mjs',
    file: 'glassbox-core-mt.wasm',
    url: () => new URL('./glassbox-core-mt.wasm', import.meta.url),
  },
};

async function createCore({ threads, wasmPaths }) {
  const files = threads > 1 ? CORE.threaded : CORE.single;
  let create;
  if (providedFactory)
    create = providedFactory; // a service worker: its module was imported statically (no import() there)
  else if (threads > 1) ({ default: create } = await import('./glassbox-core-mt.mjs'));
  else ({ default: create } = await import('./glassbox-core.mjs'));
  const options = { errors: errorClasses }; // the classes the C++ side throws
  if (threads > 1) options.glassboxPoolSize = threads - 1;
  const core = await makeModule(create, {
    file: files.file,
    glue: files.glue,
    label: `the engine's ${files.file}`,
    needs: 'Engine',
    bundled: files.url(),
    wasmPaths,
    options,
  });
  if (threads > 1) core.setThreads(threads);
  core.startHeapBytes = core.HEAPU8.length; // the heap before any model: the rest is what one can have
  return core;
}

// loadModel with the engine in this thread (glassbox.mjs, service-worker.mjs, worker.mjs), its options checked
// (model-source.mjs, checkLoadOptions; threads and wasmPaths by loadCore). The files stream into
// the engine; a tokenizer is made as soon as its files are in when onTokenizer asks
// for one, and then moves into the model.
export async function loadHere(
  source,
  { onProgress, onTokenizer, signal, cache, quantize, sha256, contextLength = 0, threads, wasmPaths },
) {
  const core = loadCore({ threads, wasmPaths }); // starts it
  core.catch(() => {}); // (reported where it is awaited: openWeights)
  // A callback that throws stops the reading (its error is the load's): the reading's own signal,
  // aborted by the caller's or by that.
  const reading = new AbortController();
  let callbackError = null;
  const stopReading = (e) => {
    callbackError ??= e;
    reading.abort(e);
  };
  const passAbort = () => reading.abort(signal.reason);
  if (signal?.aborted) passAbort();
  signal?.addEventListener('abort', passAbort, { once: true });
  onProgress = guardCallback('onProgress', onProgress, (e) => {
    stopReading(e);
    throw e; // (called within the reading: it ends there and then)
  });
  onTokenizer = guardCallback('onTokenizer', onTokenizer, stopReading);
  let model = null,
    early = null,
    done = false;
  const onTokenizerFiles =
    onTokenizer &&
    ((text) =>
      LocalTokenizer.load(text, core).then(
        (tokenizer) => {
          if (done) return tokenizer.handOver(model); // the model was quicker
          early = tokenizer;
          onTokenizer(tokenizer);
        },
        () => {},
      )); // a tokenizer that cannot be made: the model's load says why
  let files,
    loading = null;
  try {
    // A model that cannot fit is refused from its header, before its weights are read; then they
    // stream into the engine.
    const openWeights = async (header) => {
      await core; // this load's engine: a failure to make it is this load's error
      await checkFits({ ...header, quantize, contextLength });
      return (loading = await WeightsLoading.open(header, { quantize, contextLength }));
    };
    try {
      files = await readModelFiles(source, {
        onProgress,
        signal: reading.signal,
        cache,
        sha256,
        onTokenizerFiles,
        openWeights,
      });
    } catch (e) {
      throw callbackError ?? e;
    }
    if (callbackError) throw callbackError; // (thrown once every byte was in)
    model = loading.finish(files, early);
  } finally {
    done = true;
    signal?.removeEventListener('abort', passAbort);
    if (!model) loading?.cancel();
    early?.handOver(model);
  }
  if (signal?.aborted) {
    // cancelled while the engine was being built: it keeps nothing
    await model.dispose();
    if (cache && !files.fromCache && (typeof source === 'string' || source instanceof URL))
      await removeCachedModels(source, cache).catch(() => {});
    throw signal.reason;
  }
  if (files.fromCache) model.fromCache = true;
  if (files.cacheError) model.cacheError = files.cacheError;
  return model;
}

// For counting only (memoryNeeded): this thread's engine if it has one, else the single-threaded
// module, which starts no workers (a page whose models run in a worker counts on its own thread).
let countingCore = null;
const coreForCounting = (wasmPaths = null) => {
  if (corePromise) return corePromise;
  if (!countingCore) {
    countingCore = createCore({ threads: 1, wasmPaths });
    countingCore.catch(() => {
      countingCore = null;
    }); // tried again next time
  }
  return countingCore;
};

// A WebAssembly heap (wasm32) holds at most 4 GB; the glue reports the exact limit.
const HEAP_LIMIT = 4294901760;

// The first bytes of model.safetensors up to the end of its header (model-files.mjs): what
// the engine plans a load from.
const headerOf = (bytes) => bytes.subarray(0, headerLength(bytes));

// What a model takes in this thread's heap, from config.json and the first bytes of its
// model.safetensors through the end of its header (prefix): {loadBytes: what the engine converts,
// packs or quantizes the file into, with the loader's staging (Model::load_memory; the file itself
// is never held), cacheBytes: a generation's KV cache at the full context (contextLength, 0: the
// engine's default; glassbox/model.h kv_cache_bytes),
// leftBytes: what the heap can still give this thread}.
// core: the module whose heap is meant (default: this thread's, or one for counting only).
export async function memoryNeeded(
  { config, prefix, quantize = 'none', contextLength = 0 },
  core = null,
  wasmPaths = null,
) {
  core ??= await coreForCounting(wasmPaths);
  return {
    loadBytes: core.Engine.loadMemory(config, headerOf(prefix), quantize),
    cacheBytes: core.Engine.cacheMemory(config, contextLength),
    leftBytes: HEAP_LIMIT - core.HEAPU8.length,
    limitBytes: HEAP_LIMIT - core.startHeapBytes,
  };
}

// estimateModel's figures for a model directory or files, from its config.json and weights' header
// (readModelHeader): {fileBytes, loadBytes, cacheBytes, totalBytes, limitBytes, fits}.
/**
 * @param {string | URL | import('./glassbox.js').ModelFiles} source
 * @param {{ quantize?: 'none' | 'int8' | 'int4', contextLength?: number, signal?: AbortSignal,
 *   wasmPaths?: string | URL | null }} [options]
 */
export async function estimate(source, { quantize = 'none', contextLength = 0, signal, wasmPaths } = {}) {
  const header = await readModelHeader(source, { signal });
  const { loadBytes, cacheBytes, limitBytes } = await memoryNeeded(
    { ...header, quantize, contextLength },
    null,
    engineSettings({ wasmPaths }).wasmPaths,
  );
  const totalBytes = loadBytes + cacheBytes;
  return { fileBytes: header.size, loadBytes, cacheBytes, totalBytes, limitBytes, fits: totalBytes <= limitBytes };
}

// Throws OutOfMemoryError when a model cannot be loaded and run in this thread's heap
// (memoryNeeded). Called before the weights are read.
export async function checkFits({ config, prefix, quantize = 'none', contextLength = 0 }) {
  const {
    loadBytes: loading,
    cacheBytes: cache,
    leftBytes: left,
  } = await memoryNeeded({ config, prefix, quantize, contextLength }, await loadCore());
  const MB = (n) => Math.ceil(n / 2 ** 20);
  if (loading + cache > left) {
    throw new OutOfMemoryError(
      `the model needs about ${MB(loading + cache)} MB of WebAssembly memory; ` +
        `at most ${Math.floor(left / 2 ** 20)} MB are left in this thread's 4 GB heap ` +
        `(${MB(loading)} MB for its weights as the engine holds them and for loading them, ` +
        `${MB(cache)} MB for the keys and values of a full context)`,
    );
  }
}

// A model on its way into the heap (glassbox/model_loader.h): made from config.json and the
// weights' header, it takes every byte of model.safetensors through write(), converting each
// tensor as soon as it is whole, and finish() makes the LocalModel. The file is never held whole:
// the heap holds the model's arrays and one staging buffer. cancel() frees everything.
export class WeightsLoading {
  #core;
  #loading;
  #quantize;

  // After checkFits (readModelFiles' openWeights): {config, prefix, sha256: boolean}.
  static async open({ config, prefix, sha256 = false }, { quantize = 'none', contextLength = 0 } = {}) {
    const core = await loadCore();
    const w = new WeightsLoading();
    w.#core = core;
    w.#quantize = quantize;
    w.#loading = core.Loading.create(config, headerOf(prefix), { quantize, sha256, context: contextLength });
    w.config = config;
    return w;
  }

  // The file's next bytes (a Uint8Array), copied into the heap before this returns.
  write(bytes) {
    for (let at = 0; at < bytes.length;) {
      const window = this.#loading.window(); // a view of the heap: written at once
      if (window.length === 0) {
        this.cancel();
        throw new ModelFormatError(
          `model.safetensors: ${bytes.length - at} bytes after the last tensor belong to no tensor`,
        );
      }
      const n = Math.min(window.length, bytes.length - at);
      window.set(bytes.subarray(at, at + n));
      this.#loading.commit(n);
      at += n;
    }
  }

  sha256() {
    return this.#loading.sha256();
  }

  // The model, once every byte is in; files: {tokenizerJson?, vocab?, merges?} (strings) for its
  // tokenizer, tokenizer.json's when given (all absent: a model run on ids alone; an empty string
  // is a file, which the engine parses), {chatTemplate?, tokenizerConfig?, generationConfig?} for
  // its chat template and generation defaults. early:
  // a LocalTokenizer made of the same files, whose tokenizer the model takes over (it is not made
  // a second time); it then answers through the model (its handOver).
  finish(files, early = null) {
    const tokenizer = early?.release();
    try {
      return new LocalModel(
        this.#core,
        this.#loading.finish({
          tokenizerJson: files.tokenizerJson ?? null,
          vocab: files.vocab ?? null,
          merges: files.merges ?? null,
          tokenizer,
          generationConfig: files.generationConfig ?? null,
        }),
        this.config,
        this.#quantize,
        files.tokenizerJson != null || files.vocab != null || tokenizer != null,
        hasChatTemplate(files) ? new ChatTemplate(files, coreSettings.wasmPaths) : null,
      );
    } finally {
      tokenizer?.delete();
      this.cancel();
    }
  }

  cancel() {
    this.#loading?.delete();
    this.#loading = null;
  }
}

// config.json's text of a LocalModel or LocalTokenizer, as it was given: what a worker sends the
// page (configText), which parses it there. A parsed config can be nested deeper than a worker's
// stack lets a message's structured clone go.
const configTexts = new WeakMap();
export const configText = (modelOrTokenizer) => configTexts.get(modelOrTokenizer);

// generation_config.json's settings as the file wrote them: the engine keeps them as float32
// (0.6 comes back as 0.6000000238418579), so each becomes the shortest decimal of that float32.
function asWritten(generationConfig) {
  const shortest = (v) => {
    for (let digits = 1; digits < 9; ++digits) {
      const d = Number(v.toPrecision(digits));
      if (Math.fround(d) === v) return d;
    }
    return v;
  };
  const out = { ...generationConfig };
  for (const key of ['temperature', 'topP', 'repetitionPenalty']) if (key in out) out[key] = shortest(out[key]);
  return out;
}

export class LocalModel {
  #core;
  #engine;
  #chat;
  #generating = false;
  #patching = false;

  // (WeightsLoading.finish makes them.) hasTokenizer: whether tokenizer.json, or vocab.json and
  // merges.txt, came with it; chat: its ChatTemplate (chat.mjs), or null.
  constructor(core, engine, config, quantize, hasTokenizer, chat) {
    this.#core = core;
    this.#engine = engine;
    this.config = parseConfig(config);
    configTexts.set(this, config);
    this.quantize = quantize;
    this.hasTokenizer = hasTokenizer;
    const { shape, contextLength, labels, bidirectional, maskTokenId, generationConfig, specialTokenIds } =
      engine.info();
    this.#chat = chat;
    this.hasChatTemplate = chat !== null;
    this.shape = Object.freeze(shape);
    this.contextLength = contextLength;
    this.labels = Object.freeze(labels);
    this.bidirectional = bidirectional;
    this.maskTokenId = maskTokenId;
    this.generationConfig = Object.freeze(asWritten(generationConfig));
    this.specialTokenIds = Object.freeze(specialTokenIds);
    this.threads = core.threads();
  }

  #live() {
    if (!this.#engine) throw new StateError('this model has been disposed');
    return this.#engine;
  }

  async tokenize(text, options = undefined) {
    const { allowSpecial = false, addSpecial = false } = checkTokenizeOptions(options);
    checkText(text, 'text');
    return Array.from(this.#live().tokenize(text, allowSpecial, addSpecial));
  }

  async detokenize(ids) {
    return this.#live().detokenize(checkIds(ids));
  }

  // {logits (T*V), attention? (L*H*T*T), hiddenStates? ((L+1)*T*C), lens? ([L][T] arrays of K
  // {id, probability})}; with { logits: false } only what else is asked for is computed in full
  // (the last position's logits are not returned either); { logits: 'last' }: the last position's
  // alone (V), the LM head run on that row only; { logits: [positions] }: those rows alone
  // (R*V: a masked LM's masks). mask 'bidirectional': every position
  // attends to every other, later ones too, with the same weights (an encoder's view). headMask:
  // heads switched off (inspectOptions). The experiments on the same ids, each a pass of its own
  // on the model as loaded (causal, no head switched off): saliency (with the target it is of:
  // the given token, else the last position's most probable), neurons (each layer's and
  // position's K largest MLP activations), neuron (one neuron at every position).
  async forward(ids, options = undefined) {
    options = checkForwardExperiments(checkForwardOptions(options));
    const { attention = false, logits = true, mask = 'causal', hiddenStates = false } = options;
    const rows = typeof logits === 'object' ? Array.from(logits) : [];
    const { saliency = false, target, neurons = 0, neuron } = options;
    return this.#live().forward(checkIds(ids), {
      logits: logits !== false,
      lastLogits: logits === 'last',
      logitRows: rows,
      attention: Boolean(attention),
      causal: mask === 'causal',
      hiddenStates: Boolean(hiddenStates),
      classify: false,
      saliency,
      target: target === undefined ? -1 : this.#tokenId(target, 'target'),
      neurons,
      neuron: neuron ?? null,
      ...inspectOptions(options),
    });
  }

  // {logits: [Float32Array(T_b*V), ...]}: several sequences of different lengths in one pass,
  // right-padded with a padding mask, so each gets exactly the logits forward() gives it alone.
  async forwardBatch(batch) {
    if (!Array.isArray(batch)) throw new InvalidArgumentError('batch must be an array of token-id arrays');
    const checked = batch.map((ids, b) => checkIds(ids, `sequence ${b}`));
    return { logits: this.#live().forwardBatch(checked) };
  }

  // {label, labels, logits, probabilities, attention?}: a classifier's verdict at the last token.
  // A string is encoded and ends with <|endoftext|> (if the vocabulary has it), as the trainer's
  // examples do; ids are used as given. probabilities: the softmax of the logits, computed here in
  // doubles. headMask: heads switched off (inspectOptions); attention: the pass's (L*H*T*T).
  async classify(input, options = undefined) {
    options = checkClassifyOptions(options);
    const engine = this.#live();
    let ids;
    if (typeof input === 'string') {
      checkText(input, 'text');
      ids = engine.classifierIds(input);
    } else {
      ids = checkIds(input, 'ids');
    }
    const { headMask } = inspectOptions({ headMask: options.headMask });
    const { logits, attention } = engine.forward(ids, {
      logits: true,
      lastLogits: false,
      logitRows: [],
      attention: Boolean(options.attention),
      causal: true,
      hiddenStates: false,
      classify: true,
      lens: 0,
      headMask,
      saliency: false,
      target: -1,
      neurons: 0,
      neuron: null,
    });
    const labels = [...this.labels];
    const probabilities = softmax(logits);
    let best = 0;
    for (let i = 1; i < logits.length; ++i) if (logits[i] > logits[best]) best = i;
    return { label: labels[best], labels, logits, probabilities, ...(attention && { attention }) };
  }

  // Yields {id, text, position, windowStart, attention?, top?, lens?} per token (lens: the logit
  // lens where the token was predicted, [L] arrays of K {id, probability}); returns {stopReason, text}, where text holds
  // what the decoder still held back (an unfinished character, as U+FFFD) when generation stopped.
  // Sampling settings left out (temperature, topK, topP, repetitionPenalty) are
  // generation_config.json's where the model has one ("do_sample": false: greedy), else glassbox's
  // (1, 0 = all, 1, 1 = none); its eos_token_id (else config.json's) stops the generation.
  generate(prompt, options = undefined) {
    return new Generation(this.#generate(prompt, options));
  }

  // The conversation rendered by the model's chat template (applyChatTemplate), its special
  // tokens read as such and no BOS added (a template that wants one writes it, as transformers'
  // apply_chat_template(tokenize=True) does), then generated from as generate does.
  chat(messages, options = undefined) {
    const prompt = async ({ addGenerationPrompt, date, templateVars }) => {
      const text = await this.applyChatTemplate(messages, { addGenerationPrompt, date, templateVars });
      return this.tokenize(text, { allowSpecial: true });
    };
    return new Generation(this.#generate(prompt, options, checkChatOptions));
  }

  // messages: [{role, content, ...}] (any JSON the template reads) -> the conversation as the
  // template renders it (transformers' apply_chat_template(tokenize=False)). A template that fails
  // (its raise_exception, an error in it, a syntax error) rejects with a TemplateError naming it.
  async applyChatTemplate(messages, options = undefined) {
    const { addGenerationPrompt = true, date = '', templateVars } = checkChatTemplateOptions(options);
    this.#live();
    const json = messagesJson(messages);
    const vars = templateVars === undefined ? '' : jsonOf(templateVars, 'templateVars');
    if (!this.#chat)
      throw new InvalidArgumentError(
        'this model has no chat template (no chat_template.jinja, and no chat_template in tokenizer_config.json)',
      );
    return this.#chat.render(json, { addGenerationPrompt, date, templateVars: vars });
  }

  // prompt: a string, ids, or a function of the checked options giving the ids (chat's).
  async *#generate(prompt, options, check = checkGenerateOptions) {
    options = check(options);
    checkSteer(options.steer);
    const {
      maxTokens = 64,
      temperature,
      topK,
      topP,
      repetitionPenalty,
      seed,
      signal,
      attention = false,
      allowSpecial = false,
      top = 0,
      contextFull = 'slide',
    } = options;
    this.#live();
    // Claimed before the first await: a second generate() whose first next() runs in the same tick
    // must see this one running.
    if (this.#generating)
      throw new StateError('a generation is already running on this model: finish or abort it first');
    this.#generating = true;
    try {
      const ids =
        typeof prompt === 'function'
          ? await prompt(options)
          : typeof prompt === 'string'
            ? await this.tokenize(prompt, { allowSpecial })
            : checkIds(prompt, 'prompt');
      const seedValue = seed ?? Math.floor(Math.random() * 2 ** 32);
      const steer = options.steer && {
        layer: options.steer.layer,
        coefficient: options.steer.coefficient,
        plus: this.#promptIds(options.steer.plus, 'steer.plus'),
        minus: this.#promptIds(options.steer.minus, 'steer.minus'),
      };
      signal?.throwIfAborted();
      this.#live().start(ids, {
        steer: steer ?? null,
        maxTokens,
        temperature,
        topK,
        topP,
        repetitionPenalty,
        seed: seedValue,
        attention,
        top,
        contextFull,
        ...inspectOptions(options),
      });
      for (;;) {
        if (signal?.aborted) return { stopReason: 'cancelled' };
        const step = this.#live().next(); // the model may have been disposed meanwhile
        if (step.done) return { stopReason: step.stopReason, text: step.text };
        yield step;
        await yieldToEventLoop(); // let the page paint and the signal fire between tokens
      }
    } finally {
      // Aborted, left early or failed: the generator and its KV cache are freed now, not at the
      // next start or dispose.
      this.#engine?.stop();
      this.#generating = false;
    }
  }

  // Activation patching (glassbox/experiments.h): the corrupted prompt run again with one
  // activation of the clean run's, for every layer and position (or head) of each site in `what`,
  // each result normalized, (patched - corrupted) / (clean - corrupted). One layer of one site at a
  // time, returning to the event loop between them: onProgress gets each row as it comes (a page
  // draws it), and an abort stops the run there (rejecting with the signal's reason). One run at a
  // time per model.
  async patch(options) {
    const { clean, corrupted, answer, wrong, what = PATCH_SITES, signal } = checkPatchOptions(options);
    let failure = null;
    const onProgress = guardCallback('onProgress', options.onProgress, (e) => {
      failure = e;
    });
    const engine = this.#live();
    if (this.#patching)
      throw new StateError('activation patching is already running on this model: wait for it, or abort it first');
    const ids = { clean: this.#promptIds(clean, 'clean'), corrupted: this.#promptIds(corrupted, 'corrupted') };
    const answerId = this.#tokenId(answer, 'answer');
    const wrongId = this.#tokenId(wrong, 'wrong');
    signal?.throwIfAborted();
    this.#patching = true;
    try {
      engine.patchStart(ids.clean, ids.corrupted, answerId, wrongId, Array.from(what));
      for (;;) {
        const step = this.#live().patchStep(); // null once every layer of every site is done
        if (!step) break;
        onProgress?.(step);
        if (failure) throw failure;
        await yieldToEventLoop(); // the page draws the row; an abort can arrive
        if (signal?.aborted) throw signal.reason;
      }
      const r = this.#live().patchResult();
      const out = { clean: r.clean, corrupted: r.corrupted, tokens: ids };
      for (const key of ['residPre', 'attnOut', 'mlpOut', 'head']) if (r[key]) out[key] = perLayer(r[key], r.layers);
      return out;
    } finally {
      this.#engine?.patchStop(); // its caches and captured tensors are freed now
      this.#patching = false;
    }
  }

  // Direct logit attribution at the last position of prompt: the final residual stream's parts,
  // each through the final norm's linear map and dotted with the unembedding of answer minus
  // wrong's (or answer's alone) -> {embed, posEmbed, heads ([layer] -> (n_head)), mlp (n_layer),
  // bias, total, residual}.
  async attribute(options) {
    const { prompt, answer, wrong } = checkAttributeOptions(options);
    const engine = this.#live();
    const ids = this.#promptIds(prompt, 'prompt');
    const answerId = this.#tokenId(answer, 'answer');
    const wrongId = wrong === undefined ? -1 : this.#tokenId(wrong, 'wrong');
    const r = engine.attribute(ids, answerId, wrongId);
    return {
      embed: r.embed,
      posEmbed: r.posEmbed,
      heads: perLayer(r.heads, r.layers),
      mlp: r.mlp,
      bias: r.bias,
      total: r.total,
      residual: r.residual,
    };
  }

  // A prompt of an experiment: text (encoded as tokenize encodes it) or ids.
  #promptIds(prompt, what) {
    if (typeof prompt !== 'string') return checkIds(prompt, what);
    checkText(prompt, what);
    return Array.from(this.#live().tokenize(prompt, false, false));
  }

  // A token of an experiment (checkToken): an id as given (the engine checks it against the
  // vocabulary), or a text that must encode to exactly one token; else the error names its pieces.
  #tokenId(token, what) {
    if (typeof token === 'number') return token;
    checkText(token, what);
    const engine = this.#live();
    const ids = Array.from(engine.tokenize(token, false, false));
    if (ids.length === 1) return ids[0];
    if (ids.length === 0) throw new InvalidArgumentError(`${what} is empty: give one token's text, or its id`);
    const pieces = ids.map((id) => `${JSON.stringify(engine.detokenize([id]))} (id ${id})`);
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(token)} is ${ids.length} tokens: ${pieces.join(', ')}; ` +
        "give one token's text, or the id of the one you mean",
    );
  }

  async dispose() {
    this.#engine?.delete();
    this.#engine = null;
    this.#chat?.dispose();
    this.#chat = null;
  }

  [asyncDispose]() {
    return this.dispose();
  }
}

// The tokenizer of a model whose weights have not arrived yet (loadModel's onTokenizer): tokenize
// and detokenize as the model will. Once the model is loaded it hands over (handOver): its own
// tokenizer is freed and the calls go to the model.
export class LocalTokenizer {
  #tokenizer;
  #model = null;

  // files: {config, tokenizerJson} or {config, vocab, merges} (strings); config is parsed here, and
  // its shape read by the engine, as the model's will be.
  // Making it takes tens of milliseconds of this thread in one piece, so it waits for a moment
  // when nothing else is ready to run: the weights, if they are arriving, keep streaming into the
  // engine (their bytes are buffered meanwhile) instead of waiting behind it.
  // core: the engine's promise (default: this thread's, loadCore()).
  static async load({ config, vocab, merges, tokenizerJson }, corePromise = loadCore()) {
    const parsed = parseConfig(config);
    const core = await corePromise;
    await new Promise((resolve) => setTimeout(resolve, 0));
    const tokenizer = new LocalTokenizer();
    tokenizer.#tokenizer =
      typeof tokenizerJson === 'string' ? core.Tokenizer.fromJson(tokenizerJson) : core.Tokenizer.create(vocab, merges);
    tokenizer.config = parsed;
    configTexts.set(tokenizer, config);
    tokenizer.shape = Object.freeze(core.Engine.shape(config));
    return tokenizer;
  }

  async tokenize(text, options = undefined) {
    if (this.#model) return this.#model.tokenize(text, options);
    const { allowSpecial = false, addSpecial = false } = checkTokenizeOptions(options);
    checkText(text, 'text');
    return Array.from(this.#live().tokenize(text, allowSpecial, addSpecial));
  }

  async detokenize(ids) {
    if (this.#model) return this.#model.detokenize(ids);
    return this.#live().detokenize(checkIds(ids));
  }

  // Its engine-side tokenizer, for WeightsLoading.finish to move into the model; until handOver
  // this tokenizer can no longer answer.
  release() {
    const tokenizer = this.#tokenizer;
    this.#tokenizer = null;
    return tokenizer;
  }

  // model: the loaded model (or null: the load failed, and this tokenizer ends with it).
  handOver(model) {
    this.#tokenizer?.delete();
    this.#tokenizer = null;
    this.#model = model;
  }

  #live() {
    if (!this.#tokenizer)
      throw new StateError('the model this tokenizer belonged to could not be loaded, or was disposed');
    return this.#tokenizer;
  }
}

// A grid laid out [layer][column] (Float32Array(layers * width)) -> one Float32Array per layer.
function perLayer(grid, layers) {
  const width = grid.length / layers;
  return Array.from({ length: layers }, (_, l) => grid.subarray(l * width, (l + 1) * width));
}

// Float32Array of exp(x - max) / sum, in doubles: the probabilities sum to 1 within float rounding.
function softmax(logits) {
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x); // (not Math.max(...logits): up to 100,000 labels)
  const e = Array.from(logits, (x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return Float32Array.from(e, (x) => x / sum);
}

// A macrotask turn that is not clamped to 4 ms like nested setTimeout(0).
export function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(0);
  });
}
