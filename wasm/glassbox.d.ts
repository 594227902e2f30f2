// Types of the glassbox JS API (glassbox.mjs).

/** config.json of the model, as parsed JSON (Hugging Face names: n_embd, n_layer, n_head, ...). */
export interface ModelConfig {
  model_type: 'gpt2' | 'openai-gpt';
  vocab_size?: number;
  n_positions?: number;
  n_embd?: number;
  n_layer?: number;
  n_head?: number;
  [key: string]: unknown;
}

/** The four files of a model directory, when they are not fetched from a URL or read from a path. */
export interface ModelFiles {
  config: string | ArrayBuffer | ArrayBufferView | Blob;
  weights: ArrayBuffer | ArrayBufferView | Blob;
  vocab?: string | ArrayBuffer | ArrayBufferView | Blob;
  merges?: string | ArrayBuffer | ArrayBufferView | Blob;
}

export interface LoadOptions {
  /** Bytes of model.safetensors loaded so far, of the total (Content-Length; loaded when unknown). */
  /** Bytes of model.safetensors (file) so far, of total (0 while unknown): downloaded (phase
   *  'download'), or read from a file, a Blob, a buffer or the cache ('read'); each tensor is
   *  converted as its bytes arrive. Last, once every byte is in, 'convert' (loaded = total): the
   *  engine makes the model from them. */
  onProgress?: (progress: { phase: 'download' | 'read' | 'convert'; file: 'model.safetensors'; loaded: number; total: number }) => void;
  /** Called before the load ends, once vocab.json and merges.txt are read and the weights are still on
   *  their way (from a URL, as soon as those two have downloaded): a page can show its prompt's
   *  tokens before the model is ready. Not called for a model without a tokenizer. */
  onTokenizer?: (tokenizer: Tokenizer) => void;
  /** Run the engine in a Web Worker (browser) or worker thread (Node); the API stays the same. The worker
   *  downloads/reads the files itself, so a large model never blocks the page's thread. true: a worker
   *  is started here; or a Worker you made of glassbox's worker.mjs (a module Web Worker, or a Node
   *  worker thread), made however your bundler or Content-Security-Policy needs. It is glassbox's from then on:
   *  ended with the model, and refused if handed over again. Until you hand it over, its `error`
   *  event is yours to listen to. */
  worker?: boolean | GlassboxWorker;
  /** Cancels the load (the download, or the worker); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Threads for the engine (default: one per core, up to 8, where the page is cross-origin isolated;
   *  else 1, and in Node 1). More than the page allows is what it allows. The engine of a thread is
   *  made once: in this thread a second model keeps the first one's count (another count is an
   *  InvalidArgumentError); each worker has its own. */
  threads?: number;
  /** The directory the engine's .wasm files are served from, as a URL (a path in Node), when they
   *  are not beside the package's .mjs files (a CDN, an assets folder). */
  wasmPaths?: string | URL;
  /** For a URL source: keep the files with the Cache API (true: the cache "glassbox-models", or a
   *  cache name) and read them from there next time. Needs a secure context (https or localhost). */
  cache?: boolean | string;
  /** How the weights are held: 'none' (F32, the default) or 'int8' (blocks of 32 values with a scale,
   *  quantized at load: ~3.6x fewer bytes to read per token, so decoding is faster; the logits move by
   *  a few hundredths, and the shipped model's validation loss by 0.002%). */
  quantize?: 'none' | 'int8';
  /** The SHA-256 of model.safetensors, 64 hex digits: the load fails unless the file has it (a copy
   *  in the cache that does not is removed). A download is also held to the size the server
   *  announced (Content-Length). */
  sha256?: string;
}

/** A model's tokenizer before the model is loaded (LoadOptions.onTokenizer): the same tokens and
 *  text as the model's tokenize and detokenize, which it hands over to once the model is loaded. */
export interface Tokenizer {
  /** The model's config.json, parsed (as Model.config will be). */
  readonly config: ModelConfig;
  tokenize(text: string, options?: { allowSpecial?: boolean }): Promise<number[]>;
  detokenize(ids: ArrayLike<number>): Promise<string>;
}

/** One of a next-token distribution's most probable tokens. */
export interface TokenProbability {
  id: number;
  probability: number;
}

/** Heads to switch off, as [layer, head] pairs: Hugging Face's head_mask with 0 for them, 1 for
 *  every other head (their attention probabilities are multiplied by it before they weigh the
 *  values, so a silenced head adds nothing, and its attention reads as zeros). */
export type HeadMask = [number, number][];

export interface ForwardOptions {
  /** Include the attention probabilities (default false). */
  attention?: boolean;
  /** false leaves the (T, V) logits out (and their cost: T x V x n_embd multiply-adds); 'last'
   *  gives the last position's alone, (V), and runs the LM head on that row only. */
  logits?: boolean | 'last';
  /** 'bidirectional': every position attends to every other, with the same weights (default 'causal'). */
  mask?: 'causal' | 'bidirectional';
  /** Include the residual stream (Hugging Face's hidden_states). */
  hiddenStates?: boolean;
  /** Include the logit lens: each layer's `lens` most probable next tokens at every position
   *  (an integer from 1 to the vocabulary's size). Costs one norm and one LM head per layer and position. */
  lens?: number;
  /** Heads to switch off. */
  headMask?: HeadMask;
}

export interface ForwardResult {
  /** (T, V) row-major, or (V) with { logits: 'last' }; absent with { logits: false }. */
  logits?: Float32Array;
  /** (n_layer, n_head, T, T) row-major, zero above the diagonal; only with { attention: true }. */
  attention?: Float32Array;
  /** (n_layer + 1, T, n_embd) row-major: the embeddings, then each block's output, the last one
   *  after the final norm (gpt2; openai-gpt has none); only with { hiddenStates: true }. */
  hiddenStates?: Float32Array;
  /** [layer][position]: the `lens` most probable next tokens of each block's output put through
   *  the final norm and the LM head (the logit lens), most probable first; only with { lens }. */
  lens?: TokenProbability[][][];
}

export interface ClassifyResult {
  /** The name of the label with the largest logit (the first of equal ones). */
  label: string;
  /** Every label's name, by id (a copy of Model.labels). */
  labels: string[];
  /** (n_labels): the classification head's logits at the last token. */
  logits: Float32Array;
  /** (n_labels): softmax of the logits (computed in JS, in doubles, then stored as float32). */
  probabilities: Float32Array;
}

export interface GenerateOptions {
  maxTokens?: number;      // default 64
  temperature?: number;    // default 1; 0 is greedy
  topK?: number;           // default 0 (all tokens)
  topP?: number;           // default 1 (all tokens)
  seed?: number;           // default: random
  signal?: AbortSignal;    // stops generation within one token
  attention?: boolean;     // include each step's attention row
  top?: number;            // include each step's `top` most probable tokens (default 0: none)
  lens?: number;           // include each step's logit lens, `lens` tokens per layer (default: none)
  headMask?: HeadMask;     // heads switched off for the whole generation
  allowSpecial?: boolean;  // read <|endoftext|> in a text prompt as the special token
  /** When the context (n_positions) is full: 'slide' (default) keeps its most recent half and goes
   *  on (the model then sees only the window, see GenerateStep.windowStart); 'stop' ends with
   *  stopReason 'context_full'. */
  contextFull?: 'slide' | 'stop';
  /** With { worker: true }: how many steps the worker may compute beyond those the iterator has
   *  yielded (default 8). The worker runs ahead and posts steps in batches, so generation goes at
   *  the engine's speed whatever the caller does between steps; an abort or leaving the loop drops
   *  what is queued. Without a worker the engine computes each step when it is asked for. */
  ahead?: number;
}

export interface GenerateStep {
  id: number;
  /** Text that became complete with this token: only ever whole characters ('' while one is split). */
  text: string;
  /** Position of this token in the sequence (prompt length + index). */
  position: number;
  /** Position of the first token the model still sees: 0 until the context has slid. */
  windowStart: number;
  /** (n_layer, n_head, position - windowStart): the attention row of the query that produced this
   *  token, over the keys windowStart .. position - 1. */
  attention?: Float32Array;
  /** With { top: n }: the n most probable tokens of the distribution this token was drawn from
   *  (softmax of the logits, before temperature), most probable first. */
  top?: TokenProbability[];
  /** With { lens: k }: [layer] -> the k most probable next tokens of each block's output at the
   *  position that produced this token (the last layer's is the model's own distribution). */
  lens?: TokenProbability[][];
}

export interface GenerateResult {
  stopReason: 'max_tokens' | 'end_of_text' | 'context_full' | 'cancelled';
  /** Bytes still held back when generation stopped, as U+FFFD. */
  text?: string;
}

export interface Model {
  readonly config: ModelConfig;
  /** The weights' form in memory, as loaded: 'none' (F32) or 'int8'. */
  readonly quantize: 'none' | 'int8';
  /** Threads the engine computes with: one per core (up to 8) where the page is cross-origin isolated
   *  (the threaded WebAssembly module, on Web Workers), else 1. */
  readonly threads: number;
  /** A classifier's label names by id (config.json's id2label, or LABEL_0.. from num_labels, for an
   *  architectures *ForSequenceClassification); [] for a language model. */
  readonly labels: readonly string[];
  /** true for an encoder (config.json "bidirectional": every position sees every other); such a
   *  model cannot generate text. */
  readonly bidirectional: boolean;
  /** The [MASK] token id of a masked-LM model (config.json "mask_token_id"), or -1. */
  readonly maskTokenId: number;
  /** With { cache }: true when the files came from the cache instead of the network. */
  readonly fromCache?: boolean;
  /** With { cache }: why the downloaded files could not be stored (e.g. the quota); the model works. */
  readonly cacheError?: string;
  tokenize(text: string, options?: { allowSpecial?: boolean }): Promise<number[]>;
  detokenize(ids: ArrayLike<number>): Promise<string>;
  /** The logits of every position, and what else the options ask for (ForwardOptions). */
  forward(ids: ArrayLike<number>, options?: ForwardOptions): Promise<ForwardResult>;
  /**
   * Several sequences of different lengths in one pass (right-padded, with a padding mask):
   * logits[b] is (T_b, V), exactly what forward(batch[b]) gives.
   */
  forwardBatch(batch: ArrayLike<number>[]): Promise<{ logits: Float32Array[] }>;
  /**
   * A classifier's verdict on a text or ids, read at the last token. A string is tokenized and ends
   * with <|endoftext|> (if the vocabulary has it), as `glassbox train --task classify` made the
   * examples; ids are used as given. Rejects for a model without a classification head (labels []),
   * or without a tokenizer for a string. headMask: heads switched off, as in forward.
   */
  classify(input: string | ArrayLike<number>, options?: { headMask?: HeadMask }): Promise<ClassifyResult>;
  /** The steps, one per token, for `for await`; once it has ended, the iterator's stopReason and
   *  text say how (next()'s last result carries them too). */
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): Generation;
  dispose(): Promise<void>;
  /** `await using model = await loadModel(...)`: disposed at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** What generate() returns: an async iterator of steps that keeps how the generation ended. */
export interface Generation extends AsyncIterableIterator<GenerateStep> {
  next(): Promise<IteratorResult<GenerateStep, GenerateResult>>;
  /** Ends the generation (what leaving a `for await` loop early calls); stopReason 'cancelled'. */
  return(value?: unknown): Promise<IteratorResult<GenerateStep, GenerateResult>>;
  throw(error?: unknown): Promise<IteratorResult<GenerateStep, GenerateResult>>;
  [Symbol.asyncIterator](): Generation;
  /** How it ended, once it has: undefined while it runs or if it failed; 'cancelled' after an abort
   *  or leaving the loop early. */
  readonly stopReason: GenerateResult['stopReason'] | undefined;
  /** Bytes still held back when it ended, as U+FFFD. */
  readonly text: string | undefined;
}

/** train()'s options: those of `glassbox train`, with its defaults (docs/training.md). */
/** train()'s options: glassbox train's, camel-cased, and with its defaults, which the engine fills
 *  in for those left out (the table in docs/training.md#options). */
export interface TrainOptions {
  /** Learn a byte-level BPE vocabulary of this many tokens from the training part... */
  vocabSize?: number;
  /** ...or use this one: the texts of vocab.json and merges.txt. */
  tokenizer?: { vocab: string; merges: string } | null;
  nLayer?: number;
  nEmbd?: number;
  nHead?: number;
  nPositions?: number;        // the context
  seqLen?: number;            // tokens per sequence, at most nPositions
  batchSize?: number;         // sequences per step
  steps?: number;
  learningRate?: number;      // peak (linear warmup, then cosine decay)
  minLearningRate?: number;
  warmup?: number;            // steps
  weightDecay?: number;       // AdamW
  gradClip?: number;          // max gradient norm (0: off)
  dropout?: number;
  seed?: number;
  /** The batch is computed as this many shards (as the CLI's --threads: the same bits). */
  threads?: number;
  /** The end of the texts held out for the held-out loss. */
  validFraction?: number;
  /** The held-out loss every this many steps (0: only at the end)... */
  evalEvery?: number;
  /** ...over at most this many tokens (0: all); the last step's covers all of them. */
  evalTokens?: number;
  /** Ends the run for good (stopReason 'cancelled'). */
  signal?: AbortSignal;
  /** Train in a worker: true (one started here) or a Worker made of worker.mjs (as loadModel's).
   *  Its model() and final model are loaded from its files into workers of their own. */
  worker?: boolean | GlassboxWorker;
}

export interface TrainStep {
  step: number;               // steps done
  loss: number;               // the batch's mean cross-entropy before the update, in nats
  learningRate: number;
  gradNorm: number;           // before clipping
  tokens: number;             // trained on so far
  validLoss?: number;         // on the steps where it is due
  validTokens?: number;
  tokensPerSecond: number;    // over the training time of this run, pauses left out
  elapsedMs: number;
}

/** What train() returns: the steps for `for await`; the iteration's return value is the trained
 *  model. Leaving the loop early or pause() stops after the current step and keeps the run:
 *  iterating again goes on. */
export interface TrainingRun extends AsyncIterableIterator<TrainStep> {
  next(): Promise<IteratorResult<TrainStep, Model | undefined>>;
  [Symbol.asyncIterator](): TrainingRun;
  pause(): void;
  /** Steps done so far. */
  readonly step: number;
  /** The options, with the defaults of those left out (glassbox train's, docs/training.md#options)
   *  filled in by the engine once the first step has begun; before that, the options as given. */
  readonly settings: Omit<TrainOptions, 'signal' | 'worker'>;
  /** 'done' after the last step, 'cancelled' after an abort or dispose(); undefined before. */
  readonly stopReason: 'done' | 'cancelled' | undefined;
  /** A model of the current parameters (training can go on), with the run's tokenizer. */
  model(): Promise<Model>;
  /** The Hugging Face layout: config.json, model.safetensors (F32), vocab.json, merges.txt. */
  files(): Promise<{ config: string; weights: Uint8Array; vocab: string; merges: string }>;
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Trains a GPT on texts with the engine in this thread, step by step as it is iterated. The same
 *  texts and options give the native `glassbox train`'s losses and files, bit for bit. */
export function train(texts: string | string[], options?: TrainOptions): TrainingRun;

/** source: a model directory (URL in the browser; path or file: URL in Node), a hub model
 *  ('owner/name', or a huggingface.co page of it: see hubDirectoryUrl), or its files. */
export function loadModel(source: string | URL | ModelFiles, options?: LoadOptions): Promise<Model>;

/** A Hugging Face hub model, as people name it ('owner/name'; https://huggingface.co/owner/name and
 *  its tree/, blob/ and file pages, also hf.co) -> the directory its files resolve from
 *  ('https://huggingface.co/owner/name/resolve/main/'); null for any other source. */
export function hubDirectoryUrl(source: string | URL | ModelFiles): string | null;

/** The files of a model directory: config.json, model.safetensors, vocab.json, merges.txt. */
export const MODEL_FILES: readonly string[];

/** The model directories in a cache (default "glassbox-models"), with their size in bytes. */
/** What loading and running a model would take, from config.json and the header of model.safetensors alone (a URL: its first 64 KB). */
export interface ModelEstimate {
  /** model.safetensors' size (0: the server did not say). */
  fileBytes: number;
  /** The weights as the engine holds them (F32 or int8), and loading them. */
  loadBytes: number;
  /** A generation's keys and values at the model's full context. */
  cacheBytes: number;
  totalBytes: number;
  /** What a thread's 4 GB WebAssembly heap can give a model. */
  limitBytes: number;
  fits: boolean;
}
/** A Worker running glassbox's worker.mjs: a module Web Worker, or a Node worker_threads Worker. */
export interface GlassboxWorker {
  postMessage(message: unknown, transfer?: any): void;
  terminate(): unknown;
}
/** worker: true counts in a worker of its own, or in the GlassboxWorker given, ended once it has answered. */
export function estimateModel(source: string | URL | ModelFiles, options?: { quantize?: 'none' | 'int8'; signal?: AbortSignal; worker?: boolean | GlassboxWorker; wasmPaths?: string | URL }): Promise<ModelEstimate>;
export function listCachedModels(cache?: true | string): Promise<{ url: string; bytes: number }[]>;

/** Removes one directory's files from the cache (url as listCachedModels gives it), or everything. */
export function removeCachedModels(url?: string | null, cache?: true | string): Promise<void>;

/**
 * Every error the API rejects with is one of these classes, with a stable `name` that is the same
 * whether the engine runs in this thread or in a worker: branch on `error.name` or `instanceof`.
 * A cancelled load, or a generate() whose signal was aborted before it started, rejects with the
 * AbortSignal's reason instead (a DOMException named "AbortError" unless another reason was
 * given); a generation aborted while it runs ends with stopReason 'cancelled'.
 */
export class GlassboxError extends Error {
  readonly name: 'GlassboxError' | 'InvalidArgumentError' | 'ModelFormatError' | 'NetworkError' | 'OutOfMemoryError' |
    'StateError' | 'NotSupportedError';
}
/** An argument is wrong: its type, a setting out of range, an id outside the vocabulary, a prompt
 *  longer than the context, text that is not valid Unicode. */
export class InvalidArgumentError extends GlassboxError {
  readonly name: 'InvalidArgumentError';
}
/** A model's files are missing, malformed, or not the expected ones (sha256). */
export class ModelFormatError extends GlassboxError {
  readonly name: 'ModelFormatError';
}
/** A download failed: an HTTP error status (404 included), a broken connection, a refused request. */
export class NetworkError extends GlassboxError {
  readonly name: 'NetworkError';
}
/** The WebAssembly heap (at most 4 GB per thread) cannot hold what was asked for. */
export class OutOfMemoryError extends GlassboxError {
  readonly name: 'OutOfMemoryError';
}
/** The model cannot do this now: it was disposed, its worker is gone, or a generation is running. */
export class StateError extends GlassboxError {
  readonly name: 'StateError';
}
/** This environment lacks what the call needs (the Cache API outside a secure browser context). */
export class NotSupportedError extends GlassboxError {
  readonly name: 'NotSupportedError';
}
