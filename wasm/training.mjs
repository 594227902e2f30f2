// @ts-check
// Training a GPT with the engine in this thread: the JS API's train() (glassbox.mjs,
// docs/js-api.md). The module's Training class (wasm/training_bindings.cpp) prepares the texts as
// `glassbox train` prepares files and runs one optimisation step per call; this file checks the
// options, keeps the time, and turns the steps into an async iterator that can stop and go on.
// The trainer is a WebAssembly module of its own (training-core.mjs), imported and loaded at the
// first step: glassbox.mjs imports this file whether or not anything is trained, and a page that
// only generates never downloads the trainer. The model a run gives is loaded into the engine's
// module from the run's files, as any model.
import { InvalidArgumentError, StateError } from './errors.mjs';
import { asyncDispose } from './generation.mjs';
import { checkOptionNames, checkSignal, formatValue } from './options.mjs';
/** @import { Model, TrainOptions, TrainSettings, TrainStep, TrainingRun as TrainingRunType } from './glassbox.js' */

// The options' names by type. Their defaults are `glassbox train`'s, applied by the engine
// (glassbox/training_setup.h, docs/training.md), so that the same settings train the same model,
// bit for bit, natively and here.
const INTEGERS = [
  'vocabSize',
  'nLayer',
  'nEmbd',
  'nHead',
  'nPositions',
  'seqLen',
  'batchSize',
  'steps',
  'warmup',
  'threads',
  'evalEvery',
  'evalTokens',
]; // C++ ints
const INT_MAX = 2 ** 31 - 1;
const NUMBERS = ['learningRate', 'minLearningRate', 'weightDecay', 'gradClip', 'dropout', 'validFraction'];
const OPTIONS = [...INTEGERS, ...NUMBERS, 'seed', 'tokenizer', 'signal', 'worker']; // (worker: glassbox.mjs's)

// texts: a string or an array of strings; options: OPTIONS, and signal (an AbortSignal). Returns
// the options given, checked for type; the engine fills in the defaults of the others and checks
// the values' sense (a width that the heads do not divide, a text too short for one sequence, ...).
/**
 * @param {string | string[]} texts
 * @param {Omit<TrainOptions, 'worker'>} options
 * @returns {{ texts: string[], settings: Partial<TrainSettings>, signal: AbortSignal | undefined }}
 */
export function trainingSettings(texts, options) {
  const list = typeof texts === 'string' ? [texts] : texts;
  if (!Array.isArray(list)) throw new InvalidArgumentError('texts must be a string or an array of strings');
  list.forEach((t, i) => {
    if (typeof t !== 'string')
      throw new InvalidArgumentError(`texts[${i}] must be a string, got ${t === null ? 'null' : typeof t}`);
  });
  const { signal, worker, ...given } = checkOptionNames(options, OPTIONS, 'train');
  const rest = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)); // undefined: the default
  /** @type {Record<string, any>} */
  const settings = { tokenizer: null, ...rest }; // null: learn one
  for (const name of INTEGERS.filter((n) => n in settings))
    if (!Number.isInteger(settings[name]) || settings[name] < 0 || settings[name] > INT_MAX)
      throw new InvalidArgumentError(
        `${name} must be an integer from 0 to ${INT_MAX}, got ${formatValue(settings[name])}`,
      );
  if ('seed' in settings && (!Number.isSafeInteger(settings.seed) || settings.seed < 0))
    throw new InvalidArgumentError(`seed must be a non-negative integer, got ${formatValue(settings.seed)}`);
  for (const name of NUMBERS.filter((n) => n in settings))
    if (typeof settings[name] !== 'number' || !Number.isFinite(settings[name]))
      throw new InvalidArgumentError(`${name} must be a finite number, got ${formatValue(settings[name])}`);
  const t = settings.tokenizer;
  if (t !== null && (typeof t !== 'object' || typeof t.vocab !== 'string' || typeof t.merges !== 'string'))
    throw new InvalidArgumentError('tokenizer must be {vocab, merges}: the texts of vocab.json and merges.txt');
  checkSignal(signal);
  return { texts: list, settings: /** @type {Partial<TrainSettings>} */ (settings), signal };
}

// A training run: iterate it for its steps ({step, loss, learningRate, gradNorm, tokens,
// validLoss?, validTokens?, tokensPerSecond, elapsedMs}). Leaving a loop early, or pause(), stops
// after the step under way and keeps everything: iterating again goes on from the next step.
// After the last step the iteration's return value (next()'s {done: true, value}) is the trained
// model, which the run owns: dispose() frees both (model() gives copies of one's own). The signal
// ends the run for good (stopReason 'cancelled'), as dispose() does; an error in a step ends it
// too ('failed'). Where it trains is its backend's business: this thread (LocalTraining) or a
// worker (glassbox.mjs).
/** @implements {TrainingRunType} */
export class TrainingRun {
  #backend;
  #settings; // the options given, then (once the first step has begun) the engine's complete settings
  #complete = false; // whether #settings are the engine's
  #signal;
  #onAbort = () => {
    if (!this.#busy) this.dispose();
  };
  #pausing = false;
  #busy = false;
  #step = 0;
  #final = null; // the trained model, once the last step is done
  #freed = false; // disposed, aborted or failed: nothing left to give
  /** 'done', 'cancelled' or 'failed' once it has ended.
   *  @type {TrainingRunType['stopReason']} */
  stopReason;

  /**
   * @param {string | string[]} texts
   * @param {Omit<TrainOptions, 'worker'>} options
   * @param {TrainingBackend} [backend]
   */
  constructor(texts, options, backend = new LocalTraining()) {
    let list;
    ({ texts: list, settings: this.#settings, signal: this.#signal } = trainingSettings(texts, options));
    this.#backend = backend;
    this.#backend.texts = list;
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get settings() {
    return this.#settings;
  }
  get step() {
    return this.#step;
  }

  [Symbol.asyncIterator]() {
    this.#pausing = false;
    return this;
  }

  // Stops the iteration after the step under way (its next() gives {done: true}); the run stays.
  pause() {
    this.#pausing = true;
  }

  async next() {
    if (this.#busy) throw new StateError('a step of this training is already running: await it first');
    this.#busy = true;
    try {
      return await this.#next();
    } catch (e) {
      if (!this.stopReason) await this.#free('failed');
      throw e;
    } finally {
      this.#busy = false;
      if (this.#signal?.aborted) await this.dispose(); // aborted during the step
    }
  }

  async #next() {
    if (this.stopReason || this.#signal?.aborted) return { done: true, value: undefined };
    if (this.#pausing) {
      this.#pausing = false;
      return { done: true, value: undefined };
    }
    const step = await this.#backend.step(this.#settings);
    if (this.stopReason) return { done: true, value: undefined }; // disposed meanwhile
    if (!this.#complete) {
      this.#settings = { ...this.#settings, ...(await this.#backend.settings()) };
      this.#complete = true;
    }
    if (step) {
      this.#step = step.step;
      return { done: false, value: step };
    }
    this.#final = await this.#backend.model();
    this.stopReason = 'done';
    return { done: true, value: this.#final };
  }

  // Leaving a for-await loop early: the run stays, to go on later.
  async return() {
    return { done: true, value: undefined };
  }

  // A model of the current parameters (a copy of one's own: training goes on), with the run's tokenizer.
  async model() {
    return this.#backend.model(this.#live());
  }

  // The model's files in the Hugging Face layout: {config, vocab, merges} strings and weights
  // (model.safetensors, F32) a Uint8Array; the CLI and Hugging Face's GPT-2 loader read them.
  async files() {
    return this.#backend.files(this.#live());
  }

  // Ends the run (if it runs) and frees it and the model it ended with.
  async dispose() {
    this.stopReason ??= 'cancelled'; // at once: an abort's listener does not wait for the rest
    const final = this.#final;
    this.#final = null;
    await this.#free('cancelled');
    await final?.dispose();
  }

  [asyncDispose]() {
    return this.dispose();
  }

  /** @param {'cancelled' | 'failed'} reason */
  async #free(reason) {
    this.stopReason ??= reason;
    this.#freed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    await this.#backend.free();
  }

  #live() {
    if (this.#freed) throw new StateError('this training has ended');
    if (!this.#backend.started) throw new StateError('this training has not started: iterate it first');
    return this.#settings;
  }
}

/**
 * Where a run trains: LocalTraining (this thread) or glassbox.mjs's WorkerTraining (a worker).
 * @typedef {object} TrainingBackend
 * @property {string[] | null} texts  the texts, until the first step hands them to the engine
 * @property {boolean} started  whether the first step has made the run
 * @property {(settings: Partial<TrainSettings>) => Promise<TrainStep | null>} step  one step; null once every step is done
 * @property {(settings?: Partial<TrainSettings>) => Promise<Model>} model  a model of the current parameters
 * @property {(settings?: Partial<TrainSettings>) => ReturnType<TrainingRunType['files']>} files  its files
 * @property {() => Promise<void>} free  ends the run
 */

// The run in this thread (TrainingRun's default backend, and the one worker.mjs drives for a run
// in a worker): the training module's Training object, made at the first step.
/** @implements {TrainingBackend} */
export class LocalTraining {
  texts = null;
  #engine = null; // engine.mjs, once imported (its text checks; the models a run gives)
  #training = null;
  #settings = null; // the run's, from the engine: the options given and the defaults of the others
  #freed = false;
  #elapsedMs = 0; // training time, pauses left out
  #tokens = 0; // tokens trained on in that time

  get started() {
    return this.#training !== null;
  }

  // One step, its held-out loss when due; null once every step is done. given: the options.
  async step(given) {
    if (!this.#training) {
      // the vocabulary is learned here: one call, the longest
      this.#engine ??= await import('./engine.mjs');
      this.texts.forEach((t, i) => this.#engine.checkText(t, `texts[${i}]`));
      const core = await (await import('./training-core.mjs')).loadTrainingCore();
      if (this.#freed) return null;
      this.#training = core.Training.create(this.texts, given);
      this.#settings = this.#training.settings();
      this.texts = null; // the module has them now
    }
    const s = this.#settings;
    if (this.#training.stepsDone() >= s.steps) return null;
    const t0 = performance.now();
    const step = this.#training.step();
    const due = s.evalEvery > 0 && step.step % s.evalEvery === 0;
    if (due || step.step === s.steps)
      Object.assign(step, this.#training.evaluate(step.step === s.steps ? 0 : s.evalTokens));
    this.#elapsedMs += performance.now() - t0;
    this.#tokens += s.batchSize * s.seqLen;
    step.elapsedMs = this.#elapsedMs;
    step.tokensPerSecond = (1000 * this.#tokens) / this.#elapsedMs;
    await this.#engine.yieldToEventLoop(); // the page paints and the signal fires between steps
    return step;
  }

  // The engine of this thread loads the run's files (a copy: training can go on).
  async model() {
    return this.#engine.loadHere(await this.files(), { quantize: 'none' });
  }

  async files() {
    return this.#training.files();
  }

  // The run's settings, every option (tokenizer aside), once the first step has begun.
  async settings() {
    return this.#settings;
  }

  async free() {
    this.#freed = true;
    this.#training?.delete();
    this.#training = null;
  }
}
