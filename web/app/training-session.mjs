// One training run of the Train panel, in a worker of its own (training-worker.mjs, which lists the
// messages): the run's steps for the loss chart, and every few steps a look at the model as it is
// (a sample it writes, its attention over a probe text), made there. The page's thread only
// receives results: no engine works in it for training.
export class TrainingSession {
  #worker = new Worker(new URL('./training-worker.mjs', import.meta.url), { type: 'module' });
  #calls = new Map(); // id -> {resolve, reject}
  #nextId = 1;
  #started;
  #ended = false; // the worker has been terminated
  #cancelled = false; // by dispose()
  #step = 0;
  settings; // train()'s options, as given
  name; // what the Model select calls its model
  stopReason; // once go() has resolved: 'done', 'paused' or 'cancelled' (disposed)

  // texts, options: train()'s; name: the model's in the Model select; probe: the text whose
  // attention the maps show (its first words start the samples); sampleEvery: steps between looks;
  // onStep(step): each TrainStep; onLook({step, prompt, sample, attention, tokens} or {step, error}):
  // each look.
  constructor(texts, options, { name, probe, sampleEvery, onStep, onLook }) {
    this.settings = options;
    this.name = name;
    this.#worker.onmessage = ({ data }) => {
      if (data.step) {
        this.#step = data.step.step;
        onStep(data.step);
      } else if (data.look) {
        onLook(data.look);
      } else {
        const call = this.#calls.get(data.id);
        this.#calls.delete(data.id);
        if (data.error) call?.reject(Object.assign(new Error(data.error.message), { name: data.error.name }));
        else call?.resolve(data.result);
      }
    };
    this.#worker.onerror = (e) => {
      e.preventDefault();
      this.#fail(new Error(`the training worker failed: ${e.message ?? 'it could not start'}`));
    };
    this.#started = this.#call('start', { texts, options, probe, sampleEvery });
  }

  get step() {
    return this.#step;
  }

  // Trains until the last step or pause(); resolves once the look at where it stopped is shown.
  // A failed step rejects (the run cannot go on then).
  async go() {
    this.stopReason = undefined;
    try {
      await this.#started;
      ({ stopReason: this.stopReason } = await this.#call('go'));
    } catch (e) {
      if (!this.#cancelled) throw e;
      this.stopReason = 'cancelled';
    }
  }

  // Stops after the step under way; go() resolves then and can be called again to go on.
  pause() {
    this.#worker.postMessage({ method: 'pause' });
  }

  // The model's files as they are now: {config, vocab, merges} strings and weights (a Uint8Array).
  files() {
    return this.#call('files');
  }

  // Ends the run at once, even in the middle of a step (go() resolves, stopReason 'cancelled').
  dispose() {
    if (this.#ended) return;
    this.#cancelled = true;
    this.#fail(new Error('this training has ended'));
  }

  #call(method, args) {
    if (this.#ended) return Promise.reject(new Error('this training has ended'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage({ id, method, args });
    });
  }

  // Ends the worker; every call under way rejects with error.
  #fail(error) {
    this.#ended = true;
    this.#worker.terminate();
    for (const call of this.#calls.values()) call.reject(error);
    this.#calls.clear();
  }
}
