// The Train panel's worker: one training run (the JS API's train(), its trainer in this thread)
// and, every few steps, a look at the model as it is: a sample it writes and its attention over a
// probe text, made with the engine in this thread from the run's files. Only the results go to the
// page (training-session.mjs): the page's thread does no engine work while a model trains, and
// stays free for clicks, keys and drawing. The messages, all of them:
//
//   page -> worker
//     {id, method: 'start', args: {texts, options, probe, sampleEvery}}   makes the run
//     {id, method: 'go'}      trains until the last step or 'pause'; answers {stopReason, step}
//     {method: 'pause'}       stop after the step under way (or the look under way)
//     {id, method: 'files'}   the model's four files as they are now
//   worker -> page
//     {step}                  each TrainStep
//     {look: {step, prompt, sample, attention, tokens}}   each look (attention transferred)
//     {id, result} or {id, error: {name, message}}        a call's answer
//
// Ending the run is ending the worker (the page terminates it): a step cannot be interrupted.
import { loadModel, train } from '../dist/glassbox.mjs';

const SAMPLE_TOKENS = 40;
const PROBE_TOKENS = 32; // the attention maps' tokens, at most (and at most the context)

let run = null;
let probe = '';
let sampleEvery = 1;
let looked = 0; // the step of the last look

const calls = {
  start(args) {
    ({ probe, sampleEvery } = args);
    run = train(args.texts, args.options); // checks the options: a bad one is this call's error
    return null;
  },

  // Trains until the last step or a pause, with a look every sampleEvery steps and one where it
  // stopped. The look at the last step is of the trained model the run ends with (no load).
  async go() {
    for (;;) {
      const { value, done } = await run.next();
      if (done) {
        if (run.step > looked) await look(run.step, value);
        return { stopReason: run.stopReason ?? 'paused', step: run.step };
      }
      self.postMessage({ step: value });
      if (value.step % sampleEvery === 0 && value.step < run.settings.steps) await look(value.step);
    }
  },

  pause() {
    run?.pause();
  },

  async files() {
    const files = await run.files();
    return { result: files, transfer: [files.weights.buffer] };
  },
};

// A sample and the attention over the probe text of the model given, or of one loaded from the
// run's files (on one thread: more would be workers of their own, for a model this small).
async function look(step, trained = null) {
  looked = step;
  const model = trained ?? (await loadModel(await run.files(), { threads: 1 }));
  try {
    const limit = Math.min(PROBE_TOKENS, model.shape.positions);
    const ids = (await model.tokenize(probe)).slice(0, limit);
    const { attention } = ids.length ? await model.forward(ids, { attention: true, logits: false }) : {};
    const prompt = probe.split(/\s+/).slice(0, 3).join(' ');
    let sample = '';
    const generation = model.generate(prompt, { maxTokens: SAMPLE_TOKENS, temperature: 0.8, topK: 40, seed: 1 });
    for await (const s of generation) sample += s.text;
    sample += generation.text ?? ''; // bytes held back at the end (as U+FFFD)
    self.postMessage(
      { look: { step, prompt, sample, attention, tokens: ids.length } },
      attention ? [attention.buffer] : [],
    );
  } catch (e) {
    self.postMessage({ look: { step, error: { message: e.message } } });
  } finally {
    if (!trained) await model.dispose(); // (the trained model is the run's)
  }
}

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    const answer = await calls[method](args);
    if (id !== undefined) {
      const { result = answer, transfer = [] } = method === 'files' ? answer : {};
      self.postMessage({ id, result }, transfer);
    }
  } catch (e) {
    if (id !== undefined) self.postMessage({ id, error: { name: e.name, message: e.message } });
  }
};
