// Type-checked with `tsc --noEmit --strict` in a fresh project where the glassbox tarball is
// installed (tests/package), with lib es2022 and dom alone (no esnext.disposable, no @types/node)
// and with esnext.disposable: the package's types as a TypeScript user sees them. Not run.
import {
  estimateModel,
  loadModel,
  train,
  type GenerateStep,
  InvalidArgumentError,
  type Model,
  type ModelShape,
  type TrainStep,
} from 'glassbox';
import { loadTokenizer, type Tokenizer } from 'glassbox/tokenizer';

export async function run(signal: AbortSignal): Promise<string> {
  await using model: Model = await loadModel('openai-community/gpt2', {
    worker: true,
    quantize: 'int8',
    signal,
    onProgress: ({ phase, loaded, total }) => console.log(phase, loaded, total),
    onTokenizer: (tokenizer) => console.log(tokenizer.shape.positions),
  });
  const shape: ModelShape = model.shape;
  const perHead: number = shape.width / shape.heads;
  const generation = model.generate('Hello', { maxTokens: 20, attention: true, top: 5 });
  let text = '';
  for await (const step of generation) {
    const s: GenerateStep = step;
    text += s.text;
  }
  const reason: 'max_tokens' | 'end_of_text' | 'context_full' | 'cancelled' | undefined = generation.stopReason;
  const inside = await model.forward([1, 2], { hiddenStates: true, lens: 3, headMask: [[0, 1]], logits: false });
  const first: number | undefined = inside.lens?.[0]?.[0]?.[0]?.id;
  const states: Float32Array | undefined = inside.hiddenStates;
  const estimate = await estimateModel('openai-community/gpt2');
  using tokenizer: Tokenizer = await loadTokenizer({ vocab: '{}', merges: '' });
  const ids: number[] = tokenizer.tokenize(text, { allowSpecial: true });
  return (
    `${reason} ${estimate.fits} ${ids.length} ${first} ${states?.length} ${new InvalidArgumentError('x').name} ` +
    `${shape.modelType} ${shape.positions} ${shape.layers} ${shape.kvHeads} ${shape.vocabulary} ${perHead}`
  );
}

export async function trainOne(text: string, signal: AbortSignal): Promise<number> {
  await using training = train([text], { nLayer: 2, nEmbd: 64, nHead: 4, steps: 100, evalEvery: 20, signal });
  let last = NaN;
  for await (const step of training) {
    const s: TrainStep = step;
    last = s.validLoss ?? s.loss;
    if (s.step === 50) training.pause();
  }
  const model: Model = await training.model();
  const files: { config: string; weights: Uint8Array } = await training.files();
  await model.dispose();
  return last + files.weights.length;
}
