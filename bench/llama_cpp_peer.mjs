// llama.cpp as a peer, through node-llama-cpp and the prebuilt CPU libraries of
// @node-llama-cpp/linux-x64 (bench/package.json pins both). Only those binaries are used:
// getLlama never builds and never downloads (build: 'never', skipDownload), and
// bench/package.json's "nodeLlamaCppPostinstall": "skip" keeps its install from doing either.
// The model runs on token ids, as glassbox's `--tokens` does: the tokenizers are not compared here.
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

let llamaPromise = null;

export function openLlama() {
  llamaPromise ??= getLlama({
    gpu: false,
    build: 'never',
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    maxThreads: 0,
  });
  return llamaPromise;
}

// A GGUF file in llama.cpp with a context of `contextSize` positions evaluated by `threads` threads.
// kvType: the KV cache's type ('F16' is llama.cpp's default; 'F32' for the cross-check's logits).
export async function loadGguf(path, { threads = 1, contextSize = 512, kvType = 'F16' } = {}) {
  const llama = await openLlama();
  const model = await llama.loadModel({ modelPath: path, gpuLayers: 0, useMmap: true });
  const context = await model.createContext({
    contextSize,
    batchSize: contextSize,
    threads: { ideal: threads, min: threads },
    experimentalKvCacheKeyType: kvType,
    experimentalKvCacheValueType: kvType,
    flashAttention: false,
  });
  return { llama, model, context, sequence: context.getSequence() };
}

// A GGUF holding only a vocabulary, for tokenizing: llama.cpp's tokenizer on the writer's metadata.
export async function loadVocab(path) {
  const llama = await openLlama();
  return llama.loadModel({ modelPath: path, vocabOnly: true, gpuLayers: 0 });
}

export async function dispose(peer) {
  await peer.context.dispose();
  await peer.model.dispose();
}

// Teacher-forced log-probabilities: evaluates `tokens` from the start of the sequence and returns,
// for every position from `from` on, llama.cpp's log-softmax over the vocabulary for the next token
// (Float64Array of nVocab). node-llama-cpp 3.21 gives the full softmax of the logits (greedy
// sampling leaves them as they are), not the logits: these equal the logits less their
// log-sum-exp, so comparing them with glassbox's log-softmax compares the logits.
export async function logProbsAlong(peer, tokens, from, nVocab) {
  await peer.sequence.clearHistory();
  const input = tokens.map((t, i) =>
    i >= from ? [t, { generateNext: { probabilities: true, options: { temperature: 0 } } }] : t,
  );
  const out = await peer.sequence.controlledEvaluate(input);
  const rows = [];
  for (let i = from; i < tokens.length; i++) {
    const probs = out[i]?.next?.probabilities;
    if (!probs) throw new Error(`llama.cpp returned no probabilities at position ${i}`);
    if (probs.size !== nVocab)
      throw new Error(`llama.cpp returned ${probs.size} probabilities at position ${i}, expected ${nVocab}`);
    const row = new Float64Array(nVocab);
    for (const [id, p] of probs) row[id] = Math.log(p);
    rows.push(row);
  }
  return rows;
}

// Greedy decoding after `prompt`, timed as glassbox_perf model times it: the prompt and the first
// argmax (prefill), then `decode` more forward passes of one token each (decode).
// -> { ids (decode + 1 of them), prefillSeconds, decodeSeconds }
export async function greedyTimed(peer, prompt, decode) {
  await peer.sequence.clearHistory();
  const ids = [];
  const t0 = process.hrtime.bigint();
  let t1 = t0;
  for await (const token of peer.sequence.evaluate(prompt, { temperature: 0 })) {
    ids.push(token);
    if (ids.length === 1) t1 = process.hrtime.bigint();
    if (ids.length > decode) break;
  }
  const t2 = process.hrtime.bigint();
  if (ids.length !== decode + 1) throw new Error(`llama.cpp stopped after ${ids.length} tokens`);
  return { ids, prefillSeconds: Number(t1 - t0) / 1e9, decodeSeconds: Number(t2 - t1) / 1e9 };
}
