// Run inside a fresh project where the glassbox tarball is installed (tests/package): the package
// as a Node user imports it. Prints one JSON report. argv: the fixtures directory, the shipped model.
import { Worker } from 'node:worker_threads';

import { loadModel, StateError, train } from 'glassbox';
import { loadTokenizer } from 'glassbox/tokenizer';
import { readFile } from 'node:fs/promises';

const [fixtures, shipped] = process.argv.slice(2);
const report = {};
const expected = JSON.parse(await readFile(`${fixtures}/gpt2-bytes/expected.json`, 'utf8')).greedy;

async function greedy(model, g) {
  const ids = [];
  const generation = model.generate(g.prompt_text, { maxTokens: g.max_tokens, temperature: 0 });
  for await (const step of generation) ids.push(step.id);
  return { ids, stopReason: generation.stopReason };
}

for (const [mode, worker] of [
  ['page thread', false],
  ['worker', true],
  ['own worker', new Worker(new URL(import.meta.resolve('glassbox/worker.mjs')))],
]) {
  const model = await loadModel(`${fixtures}/gpt2-bytes/`, { worker });
  report[mode] = { ...(await greedy(model, expected)), threads: model.threads };
  await model.dispose();
  report[mode].afterDispose = await model.tokenize('x').then(
    () => '(no error)',
    (e) => e instanceof StateError && e.name,
  );
}

const shippedModel = await loadModel(shipped, { worker: true });
const steps = [];
for await (const step of shippedModel.generate('The old man walked into the', { maxTokens: 20, temperature: 0 }))
  steps.push(step.id);
report.shipped = steps;
await shippedModel.dispose();

// train(): the trainer's own module, in this thread and in a worker; the model a run ends with
// generates in the engine's.
const text = Array.from(
  { length: 300 },
  (_, i) => `Line ${i}: the jury said the election was ${i % 3 ? 'fair' : 'close'}.`,
).join('\n');
const TINY = {
  vocabSize: 300,
  nLayer: 1,
  nEmbd: 16,
  nHead: 2,
  nPositions: 16,
  seqLen: 16,
  batchSize: 2,
  steps: 3,
  evalEvery: 0,
};
report.training = {};
for (const [mode, worker] of [
  ['page thread', false],
  ['worker', true],
]) {
  const run = train(text, { ...TINY, worker });
  const losses = [];
  let model;
  for (;;) {
    const { value, done } = await run.next();
    if (done) {
      model = value;
      break;
    }
    losses.push(value.loss);
  }
  const generated = [];
  for await (const step of model.generate('The jury', { maxTokens: 5, temperature: 0 })) generated.push(step.id);
  report.training[mode] = { losses, generated };
  await run.dispose();
}

const cases = JSON.parse(await readFile(`${fixtures}/tokenizer/cases.json`, 'utf8'));
// A module that could not be loaded (no .wasm where wasmPaths says) is an error, and the next call
// tries again.
report.missingWasm = await loadTokenizer(`${fixtures}/tokenizer/gpt2/`, { wasmPaths: `${fixtures}/nowhere/` }).then(
  () => '(loaded)',
  (e) => `${e.name}: ${e.message}`,
);
const tokenizer = await loadTokenizer(`${fixtures}/tokenizer/gpt2/`);
report.tokenizer = {
  vocabSize: tokenizer.vocabSize,
  mismatches: [
    ...cases.ordinary
      .filter((c) => JSON.stringify(tokenizer.tokenize(c.text)) !== JSON.stringify(c.ids))
      .map((c) => c.name),
    ...cases.allow_special
      .filter((c) => JSON.stringify(tokenizer.tokenize(c.text, { allowSpecial: true })) !== JSON.stringify(c.ids))
      .map((c) => c.name),
  ],
  cases: cases.ordinary.length + cases.allow_special.length,
  roundTrip: tokenizer.detokenize(tokenizer.tokenize('naïve café 🙂')),
};
tokenizer.dispose();
console.log(JSON.stringify(report));
