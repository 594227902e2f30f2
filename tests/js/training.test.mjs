// train() of the JS API (web/dist/glassbox.mjs) in Node, with the engine in this thread: the same
// run as the native CLI's `glassbox train`, loss for loss and byte for byte; what a run gives
// (steps, the model, its files); stop and go on; abort; bad input; memory over hundreds of steps.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { InvalidArgumentError, loadModel, StateError, train } from '../../web/dist/glassbox.mjs';
import { loadCore } from '../../web/dist/engine.mjs';
import { loadTrainingCore } from '../../web/dist/training-core.mjs';
import { brownDocument } from '../../scripts/brown_text.mjs';

const cli = process.env.GLASSBOX_CLI ?? fileURLToPath(new URL('../../build/native/glassbox', import.meta.url));
const TEXT = ['ca01', 'ca02', 'ca03', 'ca04'].map(brownDocument).join('\n\n'); // ~40 KB of 1961 news
// A model small enough for dozens of steps a second, with dropout so that its masks are compared too.
const TINY = {
  vocabSize: 400,
  nLayer: 2,
  nEmbd: 64,
  nHead: 4,
  nPositions: 64,
  seqLen: 64,
  batchSize: 8,
  steps: 30,
  warmup: 5,
  evalEvery: 10,
  dropout: 0.1,
};
const CLI_FLAGS = [
  '--vocab-size',
  '400',
  '--n-layer',
  '2',
  '--n-embd',
  '64',
  '--n-head',
  '4',
  '--n-positions',
  '64',
  '--seq-len',
  '64',
  '--batch-size',
  '8',
  '--steps',
  '30',
  '--warmup',
  '5',
  '--eval-every',
  '10',
  '--dropout',
  '0.1',
];

async function run(options = TINY, text = TEXT) {
  const training = train([text], options);
  const steps = [];
  let model;
  for (;;) {
    const { value, done } = await training.next();
    if (done) {
      model = value;
      break;
    }
    steps.push(value);
  }
  return { training, steps, model };
}

const scratch = () => mkdtempSync(join(tmpdir(), 'glassbox-train-'));

test("train() computes the native CLI's run bit for bit: every loss, the held-out losses, the four files", async () => {
  const dir = scratch();
  try {
    writeFileSync(join(dir, 'text.txt'), TEXT);
    execFileSync(cli, ['train', join(dir, 'text.txt'), '-o', join(dir, 'native'), ...CLI_FLAGS], { stdio: 'ignore' });
    const log = readFileSync(join(dir, 'native', 'training_log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const { training, steps, model } = await run();
    assert.deepEqual(
      steps.map((s) => s.step),
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    for (const s of steps) {
      const native = log.find((r) => r.step === s.step && r.loss !== undefined);
      assert.equal(s.loss, native.loss, `loss at step ${s.step}`);
      assert.equal(s.gradNorm, native.grad_norm, `gradient norm at step ${s.step}`);
      assert.equal(s.learningRate, native.lr, `learning rate at step ${s.step}`);
      const validation = log.find((r) => r.step === s.step && r.val_loss !== undefined);
      assert.equal(s.validLoss, validation?.val_loss, `held-out loss at step ${s.step}`);
      assert.ok(s.tokensPerSecond > 0 && s.elapsedMs > 0);
    }
    assert.deepEqual(
      steps.filter((s) => s.validLoss !== undefined).map((s) => s.step),
      [10, 20, 30],
    );
    const files = await training.files();
    assert.equal(files.vocab, readFileSync(join(dir, 'native', 'vocab.json'), 'utf8'));
    assert.equal(files.merges, readFileSync(join(dir, 'native', 'merges.txt'), 'utf8'));
    assert.equal(Buffer.compare(Buffer.from(files.weights), readFileSync(join(dir, 'native', 'model.safetensors'))), 0);
    assert.deepEqual(JSON.parse(files.config), JSON.parse(readFileSync(join(dir, 'native', 'config.json'), 'utf8')));

    // The files load back, here and in the CLI, and give the trained model's logits.
    const saved = join(dir, 'saved');
    execFileSync('mkdir', [saved]);
    writeFileSync(join(saved, 'config.json'), files.config);
    writeFileSync(join(saved, 'model.safetensors'), files.weights);
    writeFileSync(join(saved, 'vocab.json'), files.vocab);
    writeFileSync(join(saved, 'merges.txt'), files.merges);
    const ids = await model.tokenize('The jury said the election was');
    const { logits } = await model.forward(ids);
    const reloaded = await loadModel(files);
    assert.deepEqual((await reloaded.forward(ids)).logits, logits);
    await reloaded.dispose();
    const out = execFileSync(cli, ['forward', '-m', saved, '--tokens', ids.join(','), '--arithmetic', 'portable'], {
      maxBuffer: 1 << 26,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const native = Float32Array.from(JSON.parse(out).logits.flat());
    assert.equal(
      logits.findIndex((x, i) => !Object.is(x, native[i])),
      -1,
    );
    await model.dispose();
    await training.dispose();

    // In a worker: the same steps, the same files, and a model that answers there.
    const inWorker = await run({ ...TINY, worker: true });
    assert.deepEqual(
      inWorker.steps.map(({ elapsedMs, tokensPerSecond, ...rest }) => rest),
      steps.map(({ elapsedMs, tokensPerSecond, ...rest }) => rest),
    );
    const workerFiles = await inWorker.training.files();
    assert.equal(Buffer.compare(Buffer.from(workerFiles.weights), Buffer.from(files.weights)), 0);
    assert.deepEqual((await inWorker.model.forward(ids)).logits, logits);
    await inWorker.model.dispose();
    await inWorker.training.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run learns: the loss falls, and the model it returns generates at once', async () => {
  const { training, steps, model } = await run({ ...TINY, steps: 60, dropout: 0 });
  const first = steps[0].loss,
    last = steps.at(-1).validLoss;
  assert.ok(first > Math.log(400) - 0.5, `the first loss ${first} is near log(vocabulary)`);
  assert.ok(last < first - 0.8, `held-out loss ${last} after 60 steps, first loss ${first}`);
  assert.equal(training.stopReason, 'done');
  assert.equal((await training.files()).vocab.length > 0, true); // still there after the last step
  const text = [];
  for await (const s of model.generate('The jury', { maxTokens: 12, temperature: 0 })) text.push(s.text);
  assert.equal(text.length, 12);
  await model.dispose();
  await training.dispose();
  await assert.rejects(training.files(), (e) => e instanceof StateError && /this training has ended/.test(e.message));
  assert.equal(training.stopReason, 'done');
});

for (const worker of [false, true]) {
  const mode = worker ? 'worker' : 'this thread';

  test(`${mode}: leaving the loop, or pause(), stops after a step; iterating again goes on with the same losses`, async () => {
    const { steps: whole } = await run({ ...TINY, steps: 12 });
    const training = train([TEXT], { ...TINY, steps: 12, worker });
    const seen = [];
    for await (const s of training) {
      seen.push(s);
      if (s.step === 4) break;
    }
    assert.equal(training.step, 4);
    for await (const s of training) {
      seen.push(s);
      if (s.step === 8) training.pause();
    }
    assert.equal(training.step, 8);
    assert.equal(training.stopReason, undefined);
    for await (const s of training) seen.push(s);
    assert.deepEqual(
      seen.map((s) => [s.step, s.loss]),
      whole.map((s) => [s.step, s.loss]),
    );
    assert.equal(training.stopReason, 'done');
    await training.dispose();
  });

  test(`${mode}: an AbortSignal ends a run for good and frees it`, async () => {
    const controller = new AbortController();
    const training = train([TEXT], { ...TINY, signal: controller.signal, worker });
    const seen = [];
    for await (const s of training) {
      seen.push(s.step);
      if (s.step === 3) controller.abort();
    }
    assert.deepEqual(seen, [1, 2, 3]);
    assert.equal(training.stopReason, 'cancelled');
    await assert.rejects(training.files(), (e) => e instanceof StateError && /this training has ended/.test(e.message));
    for await (const s of training) assert.fail(`a step after the abort: ${s.step}`);
  });

  test(`${mode}: bad input found at the first step is an error of its class`, async () => {
    await assert.rejects(
      train([''], { ...TINY, worker }).next(),
      (e) => e instanceof InvalidArgumentError && /the training text is empty/.test(e.message),
    );
    await assert.rejects(
      train([TEXT], { ...TINY, nEmbd: 30, worker }).next(),
      (e) => e instanceof InvalidArgumentError && /n_embd 30 is not divisible by n_head 4/.test(e.message),
    );
  });
}

test('bad input is a clear error, at the call or at the first step', async () => {
  const first = (texts, options) => train(texts, options).next();
  await assert.rejects(
    first([''], TINY),
    (e) => e instanceof InvalidArgumentError && /the training text is empty/.test(e.message),
  );
  await assert.rejects(first([], TINY), /the training text is empty/);
  await assert.rejects(first(['The jury said.'], TINY), /the training text is \d+ tokens, too few for sequences of 64/);
  await assert.rejects(
    first([TEXT], { ...TINY, nEmbd: 30 }),
    (e) => e instanceof InvalidArgumentError && /n_embd 30 is not divisible by n_head 4/.test(e.message),
  );
  await assert.rejects(
    first([TEXT], { ...TINY, seqLen: 128 }),
    /sequence length must be 1\.\.64 \(the context\), got 128/,
  );
  assert.throws(() => train([TEXT], { ...TINY, stepz: 3 }), /train: unknown option "stepz" \(did you mean "steps"\?\)/);
  assert.throws(() => train([TEXT], { ...TINY, steps: -1 }), /steps must be an integer from 0 to 2147483647, got -1/);
  assert.throws(
    () => train([TEXT], { ...TINY, nEmbd: 2 ** 31 }),
    /nEmbd must be an integer from 0 to 2147483647, got 2147483648/,
  );
  for (const seed of ['abc', -1, null, 1.5])
    assert.throws(() => train([TEXT], { ...TINY, seed }), /seed must be a non-negative integer/);
  assert.throws(() => train([TEXT], { ...TINY, learningRate: 'fast' }), /learningRate must be a finite number/);
  assert.throws(() => train([42], TINY), /texts\[0\] must be a string, got number/);
  assert.throws(() => train(TEXT, { ...TINY, tokenizer: {} }), /tokenizer must be \{vocab, merges\}/);
  await assert.rejects(
    first([TEXT], { ...TINY, validFraction: 1 }),
    /validFraction must be at least 0 and less than 1/,
  );
  // gpt2-xl's shape: refused from its shape before anything is made (the vocabulary not learned yet)
  const t0 = performance.now();
  await assert.rejects(
    first([TEXT], { ...TINY, vocabSize: 50257, nLayer: 48, nEmbd: 1600, nHead: 25, nPositions: 1024, seqLen: 1024 }),
    (e) =>
      e instanceof InvalidArgumentError &&
      /training this model needs about \d+ MB, more than the \d+ MB this WebAssembly heap can still give \(4095 MB at most\)/.test(
        e.message,
      ),
  );
  assert.ok(performance.now() - t0 < 5000, 'refused at once');
  // A text without a line to cut the held-out part at is cut between characters, never inside one.
  const accents = train(['é '.repeat(3000) + 'a'], { ...TINY, vocabSize: 300, nPositions: 16, seqLen: 8, steps: 2 });
  for await (const s of accents) assert.ok(Number.isFinite(s.loss));
  await accents.dispose();
});

test("options left out (or undefined) take the CLI's defaults, filled in by the engine at the first step", async () => {
  // glassbox train --help: "--lr FLOAT=0.001" and so on
  const help = execFileSync(cli, ['train', '--help'], { encoding: 'utf8' });
  const cliDefault = (flag) => Number(new RegExp(`${flag} \\S+=(\\S+)`).exec(help)[1]);
  const flags = {
    vocabSize: '--vocab-size',
    nLayer: '--n-layer',
    nEmbd: '--n-embd',
    nHead: '--n-head',
    nPositions: '--n-positions',
    seqLen: '--seq-len',
    batchSize: '--batch-size',
    steps: '--steps',
    learningRate: '--lr',
    minLearningRate: '--min-lr',
    warmup: '--warmup',
    weightDecay: '--weight-decay',
    gradClip: '--grad-clip',
    dropout: '--dropout',
    seed: '--seed',
    threads: '--threads',
    validFraction: '--valid-fraction',
    evalEvery: '--eval-every',
    evalTokens: '--eval-tokens',
  };
  const expected = Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, cliDefault(flag)]));
  // No option given: every setting is the CLI's default (the module's Training, without a step).
  const core = await loadTrainingCore(); // the trainer's module
  const defaults = core.Training.create([TEXT], {});
  try {
    assert.deepEqual(defaults.settings(), expected);
  } finally {
    defaults.delete();
  }
  for (const worker of [false, true]) {
    const training = train([TEXT], { ...TINY, seed: undefined, worker });
    assert.deepEqual(training.settings, { ...TINY, tokenizer: null }, 'before the first step: the options given');
    await training.next();
    assert.deepEqual(training.settings, { ...expected, ...TINY, tokenizer: null }, `worker: ${worker}`);
    assert.equal(training.settings.seed, 1);
    await training.dispose();
  }
});

test('a step that fails ends the run: a loss that is no number', async () => {
  const training = train([TEXT], { ...TINY, learningRate: 1e9, warmup: 0, gradClip: 0, steps: 50 });
  await assert.rejects(async () => {
    for await (const s of training) assert.ok(s.step < 50);
  }, /the loss became (NaN|infinite) at step \d+; try a lower learningRate \(the run has ended\)/);
  assert.equal(training.stopReason, 'failed');
  assert.deepEqual(await training.next(), { done: true, value: undefined });
  await assert.rejects(training.files(), StateError);
});

test('memory: flat over hundreds of steps, and all of it back once a run is disposed', async () => {
  // The trainer's module, and the engine's, which holds the models runs end with.
  const core = await loadTrainingCore();
  const engine = await loadCore();
  const warm = train([TEXT], { ...TINY, steps: 3 }); // what stays made once (the module's own)
  for await (const s of warm) assert.ok(s);
  await warm.dispose();
  const before = core.heapBytesInUse(),
    engineBefore = engine.heapBytesInUse();
  const finished = train([TEXT], { ...TINY, steps: 3 });
  for await (const s of finished) assert.ok(s); // the model it ends with is the run's
  await finished.dispose();
  const early = train([TEXT], TINY);
  const first = early.next();
  await early.dispose(); // during the first step (the vocabulary being learned)
  assert.deepEqual(await first, { done: true, value: undefined });
  const controller = new AbortController();
  const left = train([TEXT], { ...TINY, signal: controller.signal });
  for await (const s of left) if (s.step === 2) break;
  controller.abort(); // with no step running: freed at once
  assert.equal(left.stopReason, 'cancelled');
  assert.equal(core.heapBytesInUse(), before, 'heap bytes in use after three disposed runs');
  assert.equal(engine.heapBytesInUse(), engineBefore, "the engine's heap: the model a run ended with went with it");

  const training = train([TEXT], {
    ...TINY,
    nEmbd: 32,
    seqLen: 16,
    batchSize: 4,
    steps: 400,
    evalEvery: 50,
    evalTokens: 2000,
  });
  let after20;
  for await (const s of training) {
    if (s.step === 20) after20 = core.heapBytesInUse();
    if (s.step === 400)
      assert.equal(core.heapBytesInUse(), after20, 'heap bytes in use after 400 steps against after 20');
  }
  await training.dispose();
});

test('the trainer is a module of its own: without its .wasm, a run fails at its first step and says which file', async () => {
  // web/dist's JS and the engine, but no glassbox-training.wasm.
  const dir = scratch();
  try {
    const dist = fileURLToPath(new URL('../../web/dist/', import.meta.url));
    for (const f of readdirSync(dist).filter((f) => /\.mjs$|^glassbox-core\.wasm$/.test(f)))
      copyFileSync(join(dist, f), join(dir, f));
    const { train: trainThere, GlassboxError } = await import(pathToFileURL(join(dir, 'glassbox.mjs')).href);
    await assert.rejects(
      trainThere([TEXT], TINY).next(),
      (e) =>
        e instanceof GlassboxError &&
        /^cannot read the trainer's glassbox-training\.wasm beside glassbox-training\.mjs: no such file$/.test(
          e.message,
        ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
