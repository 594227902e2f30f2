// The Train panel's settings: its size presets and how its fields become train()'s options (kept
// apart from the panel so that tests can give Node's train() exactly what the page gives it).

// Model sizes, with training settings that let each learn something in a minute (tiny) or three (small) on one core.
// (layers, width, heads, context: the GPT; vocab: its BPE vocabulary; batch: sequences per step;
// rate: the peak learning rate; every: steps between samples and held-out losses.)
export const PRESETS = {
  tiny: { layers: 2, width: 64, heads: 4, context: 64, vocab: 512, batch: 16, steps: 1200, rate: 0.005, every: 50 },
  small: { layers: 4, width: 128, heads: 4, context: 128, vocab: 1024, batch: 8, steps: 800, rate: 0.003, every: 50 },
};

// The held-out loss on the way covers this many tokens (the last step's, all of them).
const HELD_OUT_TOKENS = 16384;

// The panel's numbers ({layers, width, heads, context, vocab, batch, steps, rate, seed, every}) as
// train()'s options: the context is the sequence length too, the learning rate warms up over the
// first 5% of the steps and decays to a tenth of its peak, and a held-out loss comes with each sample.
export function trainOptions(f) {
  return {
    nLayer: f.layers,
    nEmbd: f.width,
    nHead: f.heads,
    nPositions: f.context,
    seqLen: f.context,
    vocabSize: f.vocab,
    batchSize: f.batch,
    steps: f.steps,
    learningRate: f.rate,
    minLearningRate: f.rate / 10,
    warmup: Math.max(1, Math.round(f.steps / 20)),
    seed: f.seed,
    evalEvery: f.every,
    evalTokens: HELD_OUT_TOKENS,
  };
}
