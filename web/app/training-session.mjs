// One training run of the Train panel: the JS API's train() in a worker of its own, its losses
// into the loss chart, and every few steps a look at the model as it is: a sample it writes and
// its attention over a probe text. A look copies the model's files out of the training worker and
// loads them into an engine in the page's thread (one thread, made once): a small model loads in
// milliseconds there, and the training worker is held up only for the copy, unless the last look
// is still under way when the next is due (a model small enough to take fewer milliseconds a step).
import { loadModel, train } from '../dist/glassbox.mjs';

const SAMPLE_TOKENS = 40;
const PROBE_TOKENS = 32; // the attention maps' tokens, at most (and at most the context)

// Looks run one at a time (two runs side by side share the page's thread).
let looking = Promise.resolve();

export class TrainingSession {
  #run;
  #sampleEvery;
  #probe;
  #looked = 0; // the step of the last look
  #look = null; // the look under way
  #ended = false; // disposed: looks still under way show nothing
  #onStep;
  #onLook;
  name; // what the Model select calls its model
  stopReason; // the run's, once iterating has ended ('done', 'cancelled', 'failed') or 'paused'

  // texts, options: train()'s; name: the model's in the Model select; probe: the text whose
  // attention the maps show (its first words start the samples); sampleEvery: steps between looks;
  // onStep(step): each TrainStep; onLook({step, prompt, sample, attention, tokens} or {step, error}):
  // each look.
  constructor(texts, options, { name, probe, sampleEvery, onStep, onLook }) {
    this.name = name;
    this.#run = train(texts, { ...options, worker: true });
    this.#sampleEvery = sampleEvery;
    this.#probe = probe;
    this.#onStep = onStep;
    this.#onLook = onLook;
  }

  get settings() {
    return this.#run.settings;
  }
  get step() {
    return this.#run.step;
  }

  // Trains until the last step or pause(); resolves once the look at where it stopped is shown.
  // A failed step rejects (the run has ended then, and its worker with it).
  async go() {
    this.stopReason = undefined;
    const { steps } = this.#run.settings;
    try {
      for await (const s of this.#run) {
        this.#onStep(s);
        if (s.step % this.#sampleEvery === 0 || s.step === steps) {
          await this.#look; // one look at a time: training waits only when looks take longer than its steps
          this.#lookAt(s.step, await this.#run.files());
        }
      }
    } catch (e) {
      if (!this.#ended) throw e; // else disposed during a step, which then ends this way
    }
    this.stopReason = this.#run.stopReason ?? 'paused';
    await this.#look;
    if (this.#looked !== this.#run.step && this.stopReason !== 'cancelled') {
      // where it stopped
      await this.#lookAt(this.#run.step, await this.#run.files());
    }
  }

  // Stops after the step under way; go() resolves then and can be called again to go on.
  pause() {
    this.#run.pause();
  }

  files() {
    return this.#run.files();
  }

  dispose() {
    this.#ended = true;
    return this.#run.dispose();
  }

  #lookAt(step, files) {
    this.#looked = step;
    looking = looking
      .then(() => this.#lookNow(step, files))
      .catch((e) => {
        if (!this.#ended) this.#onLook({ step, error: e });
      });
    const look = looking.finally(() => {
      if (this.#look === look) this.#look = null;
    });
    this.#look = look;
    return look;
  }

  async #lookNow(step, files) {
    if (this.#ended) return;
    const model = await loadModel(files, { threads: 1 });
    try {
      const limit = Math.min(PROBE_TOKENS, model.shape.positions);
      const ids = (await model.tokenize(this.#probe)).slice(0, limit);
      const { attention } = ids.length ? await model.forward(ids, { attention: true, logits: false }) : {};
      const prompt = this.#probe.split(/\s+/).slice(0, 3).join(' ');
      let sample = '';
      const steps = model.generate(prompt, { maxTokens: SAMPLE_TOKENS, temperature: 0.8, topK: 40, seed: 1 });
      for (;;) {
        const { value, done } = await steps.next();
        sample += value.text ?? '';
        if (done) break;
      }
      if (!this.#ended) this.#onLook({ step, prompt, sample, attention, tokens: ids.length });
    } finally {
      await model.dispose();
    }
  }
}
