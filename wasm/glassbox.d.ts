// Types of the glassbox JS API (glassbox.mjs). tests/types checks the .mjs sources against them.

/** The architectures the engine runs (config.json's model_type): GPT-2 and the original GPT;
 *  Llama, Mistral, Qwen2 and Qwen3 (RMSNorm, rotary positions, gated MLP, grouped-query attention);
 *  GPT-NeoX (Pythia) and GPT-Neo (TinyStories). */
export type ModelType = 'gpt2' | 'openai-gpt' | 'llama' | 'mistral' | 'qwen2' | 'qwen3' | 'gpt_neox' | 'gpt_neo';

/** config.json of the model, as parsed JSON (Hugging Face names: n_embd, n_layer, n_head, ... for
 *  GPT-2; hidden_size, num_hidden_layers, num_attention_heads, ... for the other types),
 *  exactly as the file gives it: a field it leaves out is absent here. What the engine made of
 *  it, defaults included, is ModelShape. */
export interface ModelConfig {
  /** Absent in old configs that name only their class in "architectures" (GPT2LMHeadModel). */
  model_type?: ModelType;
  vocab_size?: number;
  n_positions?: number;
  n_embd?: number;
  n_layer?: number;
  n_head?: number;
  [key: string]: unknown;
}

/** A model's shape as the engine's config loader parsed config.json, with the defaults of the
 *  model type for what the file leaves out (openai-gpt: 512 positions; gpt2: 1,024; n_ctx is not
 *  read), whatever names the model type gives its fields (n_layer, num_hidden_layers, num_layers).
 *  Read this, not config.json, for a model's sizes. */
export interface ModelShape {
  /** The context: positions the model has embeddings for (n_positions). */
  readonly positions: number;
  /** Transformer blocks (n_layer). */
  readonly layers: number;
  /** Attention heads per layer (n_head, num_attention_heads): query heads. Every head-level result
   *  counts these: attention [layer][head], headMask's [layer, head] pairs, the page's heatmaps. */
  readonly heads: number;
  /** Key/value heads per layer (num_key_value_heads): equal to heads, except with grouped-query
   *  attention (fewer: query head h reads KV head floor(h / (heads / kvHeads))) and multi-query
   *  attention (1). gpt2, openai-gpt, gpt_neox and gpt_neo always have heads. */
  readonly kvHeads: number;
  /** The residual stream's width (n_embd). */
  readonly width: number;
  /** Tokens in the vocabulary (vocab_size): the logits of a position are this many. */
  readonly vocabulary: number;
  /** The architecture (model_type, or the class "architectures" names in an old config). */
  readonly modelType: ModelType;
}

/** Token ids, integers >= 0: an array or a typed array (an array-like object that is neither is
 *  refused with an InvalidArgumentError). */
export type TokenIds = readonly number[] | (ArrayBufferView & ArrayLike<number>);

/** The files of a model directory, when they are not fetched from a URL or read from a path.
 *  The tokenizer is tokenizerJson (tokenizer.json) when given; else vocab and merges come together,
 *  or are both left out (a model run on token ids alone): one without the other is a
 *  ModelFormatError naming the missing one. tokenizerConfig (tokenizer_config.json), chatTemplate
 *  (chat_template.jinja) and generationConfig (generation_config.json): an instruct model's chat
 *  template, its special tokens and its generation defaults. A sharded
 *  checkpoint: weights is an array of its shards, in the order of their names (as the index names
 *  them), with index, its model.safetensors.index.json. */
export interface ModelFiles {
  config: string | ArrayBuffer | ArrayBufferView | Blob;
  weights: ArrayBuffer | ArrayBufferView | Blob | readonly (ArrayBuffer | ArrayBufferView | Blob)[];
  index?: string | ArrayBuffer | ArrayBufferView | Blob;
  vocab?: string | ArrayBuffer | ArrayBufferView | Blob;
  merges?: string | ArrayBuffer | ArrayBufferView | Blob;
  tokenizerJson?: string | ArrayBuffer | ArrayBufferView | Blob;
  tokenizerConfig?: string | ArrayBuffer | ArrayBufferView | Blob;
  chatTemplate?: string | ArrayBuffer | ArrayBufferView | Blob;
  generationConfig?: string | ArrayBuffer | ArrayBufferView | Blob;
}

/** tokenize's options. allowSpecial: special tokens written in the text (such as "<|endoftext|>"
 *  or "<|im_start|>") are matched as those tokens, else they are ordinary characters. addSpecial:
 *  the tokens a tokenizer.json's post-processor adds (BOS...). Both true: what transformers'
 *  tokenizer(text) gives. */
export interface TokenizeOptions {
  allowSpecial?: boolean;
  addSpecial?: boolean;
}

/** loadModel's options. As every call's options (tokenize, forward, classify, generate, train,
 *  estimateModel): a name not listed here is an InvalidArgumentError naming it (and the option it
 *  resembles), each option must have its type (a boolean true or false, a number a number, a
 *  callback a function, signal an AbortSignal), and one whose value is undefined is as if absent.
 *  A callback that throws ends the load: it rejects with an InvalidArgumentError ("onProgress
 *  threw: ...") whose cause is the callback's error. */
export interface LoadOptions {
  /** Bytes of model.safetensors (file) so far, of total (0 while unknown): downloaded (phase
   *  'download'), or read from a file, a Blob, a buffer or the cache ('read'); each tensor is
   *  converted as its bytes arrive. Last, once every byte is in, 'convert' (loaded = total): the
   *  engine makes the model from them. */
  onProgress?: (progress: {
    phase: 'download' | 'read' | 'convert';
    file: 'model.safetensors';
    loaded: number;
    total: number;
  }) => void;
  /** Called before the load ends, once the tokenizer's files are read and the weights are still on
   *  their way (from a URL, as soon as the small files have downloaded): a page can show its prompt's
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
  /** The directory the engine's .wasm files (and the chat module's, glassbox-chat.wasm) are served
   *  from, as a URL (a path in Node), when they are not beside the package's .mjs files (a CDN, an
   *  assets folder). */
  wasmPaths?: string | URL;
  /** For a URL source: keep the files with the Cache API (true: the cache "glassbox-models", or a
   *  cache name) and read them from there next time. Needs a secure context (https or localhost). */
  cache?: boolean | string;
  /** How the weights are held: 'none' (F32, the default), 'int8' (blocks of 32 values with a scale,
   *  quantized at load: ~3.6x fewer bytes to read per token, so decoding is faster; the logits move by
   *  a few hundredths, and the shipped model's validation loss by 0.002%) or 'int4' (blocks of 32
   *  values in [-8, 7] with a scale, llama.cpp's Q4_0 rule: ~6.4x fewer bytes than F32, at a larger
   *  error: the shipped model's logits move by up to 2.4). */
  quantize?: 'none' | 'int8' | 'int4';
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
  /** The model's shape, as Model.shape will be. */
  readonly shape: ModelShape;
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  detokenize(ids: TokenIds): Promise<string>;
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

/** What forward computes besides the logits (Model.forward). */
export interface ForwardOptions {
  /** Include the attention probabilities (default false). */
  attention?: boolean;
  /** false leaves the (T, V) logits out (and their cost: T x V x n_embd multiply-adds); 'last'
   *  gives the last position's alone, (V), and runs the LM head on that row only; positions
   *  (increasing) give those rows alone, (R, V), as a masked LM needs its masks'. */
  logits?: boolean | 'last' | TokenIds;
  /** 'bidirectional': every position attends to every other, with the same weights (default 'causal'). */
  mask?: 'causal' | 'bidirectional';
  /** Include the residual stream (Hugging Face's hidden_states). */
  hiddenStates?: boolean;
  /** Include the logit lens: each layer's `lens` most probable next tokens at every position
   *  (an integer from 1 to the vocabulary's size). Costs one norm and one LM head per layer and position. */
  lens?: number;
  /** Heads to switch off. */
  headMask?: HeadMask;
  /** Include the saliency (gradient x input) of `target` at every position: a pass of its own with
   *  a backward pass, for gpt2 and openai-gpt models (others reject, naming the type). */
  saliency?: boolean;
  /** The token whose log-probability at the last position the saliency is of (with { saliency:
   *  true }; default: the last position's most probable). */
  target?: Tok;
  /** Include each layer's and position's K largest MLP activations (neurons), an integer from 1 to
   *  the MLP's width. */
  neurons?: number;
  /** Include one neuron's activation at every position. */
  neuron?: { layer: number; index: number };
}

/** What forward gives: the logits, and what else the options asked for. */
export interface ForwardResult {
  /** (T, V) row-major, (V) with { logits: 'last' }, (R, V) for R positions; absent with { logits: false }. */
  logits?: Float32Array;
  /** (n_layer, n_head, T, T) row-major, zero above the diagonal; only with { attention: true }. */
  attention?: Float32Array;
  /** (n_layer + 1, T, n_embd) row-major: the embeddings, then each block's output, the last one
   *  after the final norm (gpt2; openai-gpt has none); only with { hiddenStates: true }. */
  hiddenStates?: Float32Array;
  /** [layer][position]: the `lens` most probable next tokens of each block's output put through
   *  the final norm and the LM head (the logit lens), most probable first; only with { lens }. */
  lens?: TokenProbability[][][];
  /** (T): each position's saliency, sum over d of d log p(target) / d x[d] * x[d], x the input of
   *  the first block (the embeddings as the model sums them); only with { saliency: true }. */
  saliency?: Float32Array;
  /** The token the saliency is of (the option's, or the last position's most probable). */
  target?: number;
  /** [layer][position]: the K largest MLP activations (after the nonlinearity; gated MLPs: the
   *  product that enters down_proj), largest first; only with { neurons: K }. */
  neurons?: NeuronValue[][][];
  /** (T): the neuron's activation at every position; only with { neuron }. */
  neuron?: Float32Array;
}

/** One MLP activation: the neuron's index in its layer, and its value. */
export interface NeuronValue {
  index: number;
  value: number;
}

/** A token named by a caller: its text as the tokenizer encodes it (' Mary'; it must be one token,
 *  else the call rejects naming its pieces), or its id (any id of the vocabulary). */
export type Tok = string | number;

/** Where activation patching replaces an activation: the residual stream entering a block, a
 *  block's attention or MLP output (each at one position), or one head's attention-weighted values
 *  before the output projection (TransformerLens's z, at every position). */
export type PatchSite = 'resid_pre' | 'attn_out' | 'mlp_out' | 'head';

/** One layer of one site done (PatchOptions.onProgress). */
export interface PatchProgress {
  site: PatchSite;
  layer: number;
  /** The layer's normalized results: (T) by position, or (n_head) for 'head'. */
  row: Float32Array;
  /** Layers done over every site asked for, and how many there are. */
  done: number;
  total: number;
}

/** Model.patch's arguments. */
export interface PatchOptions {
  /** The clean prompt, and the corrupted one: the same number of tokens. */
  clean: string | TokenIds;
  corrupted: string | TokenIds;
  /** The metric is logit(answer) - logit(wrong) at the last position. */
  answer: Tok;
  wrong: Tok;
  /** The sites to patch (default: all four, in this order). */
  what?: PatchSite[];
  /** Called after each layer of each site, with its row of results. */
  onProgress?: (progress: PatchProgress) => void;
  /** Stops the run after the layer it is on; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Model.patch's results: the raw metrics, and a grid per site asked for (the others are absent),
 *  normalized: (patched - corrupted) / (clean - corrupted), 1 the clean answer, 0 the corrupted. */
export interface PatchResult {
  /** logit(answer) - logit(wrong) of the clean and of the corrupted prompt. */
  clean: number;
  corrupted: number;
  /** The ids the prompts became. */
  tokens: { clean: number[]; corrupted: number[] };
  /** [layer] -> (T). */
  residPre?: Float32Array[];
  attnOut?: Float32Array[];
  mlpOut?: Float32Array[];
  /** [layer] -> (n_head). */
  head?: Float32Array[];
}

/** Model.attribute's arguments. */
export interface AttributeOptions {
  prompt: string | TokenIds;
  answer: Tok;
  /** Without it the attribution is of logit(answer) alone. */
  wrong?: Tok;
}

/** Direct logit attribution at the last position: each part of the final residual stream through
 *  the final norm's linear map (its scale from the whole stream), dotted with the unembedding of
 *  answer minus wrong's. The parts sum to total. */
export interface Attribution {
  /** The token embedding's part. */
  embed: number;
  /** The position embedding's (0 for rotary models). */
  posEmbed: number;
  /** [layer] -> (n_head): each head's output through the output projection. */
  heads: Float32Array[];
  /** (n_layer): each MLP's output, less its output bias. */
  mlp: Float32Array;
  /** Every bias (output projections', the final norm's beta). */
  bias: number;
  /** The metric, as the forward pass gives it. */
  total: number;
  /** total minus the sum of the parts (float rounding). */
  residual: number;
}

/** Steering by activation addition (GenerateOptions.steer): v = coefficient x (the residual stream
 *  entering block `layer` at the last position of plus, minus that of minus), added there at
 *  every position. */
export interface SteerOptions {
  layer: number;
  coefficient: number;
  plus: string | TokenIds;
  minus: string | TokenIds;
}

/** A classifier's verdict (Model.classify). */
export interface ClassifyResult {
  /** The name of the label with the largest logit (the first of equal ones). */
  label: string;
  /** Every label's name, by id (a copy of Model.labels). */
  labels: string[];
  /** (n_labels): the classification head's logits at the last token. */
  logits: Float32Array;
  /** (n_labels): softmax of the logits (computed in JS, in doubles, then stored as float32). */
  probabilities: Float32Array;
  /** (n_layer, n_head, T, T) of the same pass; only with { attention: true }. */
  attention?: Float32Array;
}

/** How generate samples, what each step carries, and when it stops. */
/** The sampling settings left out (temperature, topK, topP, repetitionPenalty) are the model's
 *  generation_config.json's where it has one ("do_sample": false makes its default greedy), else
 *  the defaults below; its eos_token_id (one or a list; else config.json's) ends the generation
 *  (stopReason 'end_of_text'). */
export interface GenerateOptions {
  /** Tokens to generate at most (default 64). */
  maxTokens?: number;
  /** Default 1; 0 is greedy. */
  temperature?: number;
  /** Sample from the K most probable tokens only (default 0: all tokens). */
  topK?: number;
  /** Sample from the most probable tokens whose probabilities sum to P (default 1: all tokens). */
  topP?: number;
  /** transformers' repetition penalty, > 0 (default 1: none): the logit of every token already in
   *  the sequence (prompt and generated) is divided by it where positive, multiplied where negative. */
  repetitionPenalty?: number;
  /** The random seed, an integer >= 0 (default: random). */
  seed?: number;
  /** Stops generation within one token (stopReason 'cancelled'). */
  signal?: AbortSignal;
  /** Include each step's attention row. */
  attention?: boolean;
  /** Include each step's `top` most probable tokens (default 0: none). */
  top?: number;
  /** Include each step's logit lens, `lens` tokens per layer (default: none). */
  lens?: number;
  /** Heads switched off for the whole generation. */
  headMask?: HeadMask;
  /** Read <|endoftext|> in a text prompt as the special token. */
  allowSpecial?: boolean;
  /** When the context (ModelShape.positions) is full: 'slide' (default) keeps its most recent half and goes
   *  on (the model then sees only the window, see GenerateStep.windowStart); 'stop' ends with
   *  stopReason 'context_full'. */
  contextFull?: 'slide' | 'stop';
  /** With { worker: true }: how many steps the worker may compute beyond those the iterator has
   *  yielded (default 8). The worker runs ahead and posts steps in batches, so generation goes at
   *  the engine's speed whatever the caller does between steps; an abort or leaving the loop drops
   *  what is queued. Without a worker the engine computes each step when it is asked for. */
  ahead?: number;
  /** Steer the generation (prompt included) by activation addition. */
  steer?: SteerOptions;
}

/** generation_config.json's sampling defaults and stop tokens, camel-cased. */
export interface GenerationConfig {
  readonly temperature?: number;
  readonly topK?: number;
  readonly topP?: number;
  readonly repetitionPenalty?: number;
  readonly doSample?: boolean;
  /** Its eos_token_id, one id or a list, as a list: generation stops at any of them. */
  readonly eosTokenIds?: readonly number[];
}

/** A message of a conversation: role ('system', 'user', 'assistant', or what the template knows)
 *  and content, and whatever else the model's template reads (any JSON). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** applyChatTemplate's options (and chat's). */
export interface ChatTemplateOptions {
  /** End with the header of the assistant's turn, so that the model writes the reply next (default true). */
  addGenerationPrompt?: boolean;
  /** The day the template's strftime_now gives, 'YYYY-MM-DD' (default: today). */
  date?: string;
  /** More variables for the template, such as { enable_thinking: false } or { tools: [...] }. */
  templateVars?: Record<string, unknown>;
}

/** chat's options: generate's (the rendered conversation's special tokens are always read) and the template's. */
export type ChatOptions = Omit<GenerateOptions, 'allowSpecial'> & ChatTemplateOptions;

/** One generated token, with what the options asked for. */
export interface GenerateStep {
  /** The token's id. */
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

/** How a generation ended: next()'s last result's value. */
export interface GenerateResult {
  stopReason: 'max_tokens' | 'end_of_text' | 'context_full' | 'cancelled';
  /** Bytes still held back when generation stopped, as U+FFFD. */
  text?: string;
}

/** A loaded model (loadModel), with the engine in this thread or in a worker: every method is async. */
export interface Model {
  /** config.json as the file gives it. */
  readonly config: ModelConfig;
  /** The model's sizes as the engine parsed them (defaults included). */
  readonly shape: ModelShape;
  /** The weights' form in memory, as loaded: 'none' (F32), 'int8' or 'int4'. */
  readonly quantize: 'none' | 'int8' | 'int4';
  /** The most positions a sequence holds (LoadOptions.contextLength, or its default). */
  readonly contextLength: number;
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
  /** generation_config.json as the engine read it: only the keys the file gives ({} without the
   *  file). generate and chat use them for the options left out (do_sample false: greedy). */
  readonly generationConfig: GenerationConfig;
  /** The ids of the tokenizer's special tokens (<|endoftext|>, a tokenizer.json's added tokens
   *  marked special), in increasing order; [] without a tokenizer. */
  readonly specialTokenIds: readonly number[];
  /** Whether the model came with a tokenizer (tokenizer.json, or vocab.json and merges.txt). Without one it runs on
   *  token ids: tokenize, detokenize, and generate or classify from a string reject with an
   *  InvalidArgumentError ("... no tokenizer"); forward and generate from ids work, and each step's
   *  text is ''. */
  readonly hasTokenizer: boolean;
  /** With { cache }: true when the files came from the cache instead of the network. */
  readonly fromCache?: boolean;
  /** With { cache }: why the downloaded files could not be stored (e.g. the quota); the model works. */
  readonly cacheError?: string;
  /** Text -> ids. "<|endoftext|>" in the text is ordinary characters unless allowSpecial;
   *  addSpecial adds the post-processor's tokens (BOS...). */
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  /** Ids -> text, special tokens included; bytes that are not whole UTF-8 characters become U+FFFD. */
  detokenize(ids: TokenIds): Promise<string>;
  /** The logits of every position, and what else the options ask for (ForwardOptions). */
  forward(ids: TokenIds, options?: ForwardOptions): Promise<ForwardResult>;
  /**
   * Several sequences of different lengths in one pass (right-padded, with a padding mask):
   * logits[b] is (T_b, V), exactly what forward(batch[b]) gives.
   */
  forwardBatch(batch: TokenIds[]): Promise<{ logits: Float32Array[] }>;
  /**
   * A classifier's verdict on a text or ids, read at the last token. A string is tokenized and ends
   * with <|endoftext|> (if the vocabulary has it), as `glassbox train --task classify` made the
   * examples; ids are used as given. Rejects for a model without a classification head (labels []),
   * or without a tokenizer for a string. headMask: heads switched off, as in forward; attention:
   * the attention too, from the same pass.
   */
  classify(input: string | TokenIds, options?: { headMask?: HeadMask; attention?: boolean }): Promise<ClassifyResult>;
  /** Activation patching: the corrupted prompt run again with one activation of the clean run's,
   *  for every layer and position (or head) of each site asked for. One layer at a time, returning
   *  to the event loop between them (onProgress, signal); one run at a time per model. */
  patch(options: PatchOptions): Promise<PatchResult>;
  /** Direct logit attribution at the last position. Rejects for post-norm models (openai-gpt). */
  attribute(options: AttributeOptions): Promise<Attribution>;
  /** The steps, one per token, for `for await`; once it has ended, the iterator's stopReason and
   *  text say how (next()'s last result carries them too). */
  generate(prompt: string | TokenIds, options?: GenerateOptions): Generation;
  /** Whether the model has a chat template (chat_template.jinja, or tokenizer_config.json's
   *  chat_template): applyChatTemplate and chat work. */
  readonly hasChatTemplate: boolean;
  /** The conversation as the model's chat template renders it (transformers'
   *  apply_chat_template(tokenize=False)), byte for byte. Rejects with a TemplateError when the
   *  template fails (its raise_exception's message; a syntax error's line and column), an
   *  InvalidArgumentError for malformed messages or options, or for a model without a template. */
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): Promise<string>;
  /** The model's reply to the conversation: applyChatTemplate's text tokenized with its special
   *  tokens read and no BOS added (a template that wants one writes it), then generate's steps. */
  chat(messages: readonly ChatMessage[], options?: ChatOptions): Generation;
  /** Frees the engine's memory (and ends the worker); later calls reject with a StateError. */
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

/** train()'s options: glassbox train's, camel-cased, and with its defaults, which the engine fills
 *  in for those left out (the table in docs/training.md#options). */
export interface TrainOptions {
  /** Learn a byte-level BPE vocabulary of this many tokens from the training part... */
  vocabSize?: number;
  /** ...or use this one: the texts of vocab.json and merges.txt. */
  tokenizer?: { vocab: string; merges: string } | null;
  /** Transformer blocks. */
  nLayer?: number;
  /** The residual stream's width. */
  nEmbd?: number;
  /** Attention heads per layer. */
  nHead?: number;
  /** The context. */
  nPositions?: number;
  /** Tokens per sequence, at most nPositions. */
  seqLen?: number;
  /** Sequences per step. */
  batchSize?: number;
  /** Optimisation steps. */
  steps?: number;
  /** The peak learning rate: a linear warmup, then a cosine decay. */
  learningRate?: number;
  /** Where the cosine decay ends. */
  minLearningRate?: number;
  /** Steps of linear warmup. */
  warmup?: number;
  /** AdamW's weight decay. */
  weightDecay?: number;
  /** The largest gradient norm (0: no clipping). */
  gradClip?: number;
  /** The share of the embeddings and of each residual branch dropped while training. */
  dropout?: number;
  /** The random seed. */
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

/** One optimisation step of a TrainingRun. */
export interface TrainStep {
  /** Steps done. */
  step: number;
  /** The batch's mean cross-entropy before the update, in nats. */
  loss: number;
  /** The learning rate of this step. */
  learningRate: number;
  /** The gradient's norm before clipping. */
  gradNorm: number;
  /** Tokens trained on so far. */
  tokens: number;
  /** The held-out loss, on the steps where it is due (TrainOptions.evalEvery, and the last). */
  validLoss?: number;
  /** The held-out tokens validLoss is over. */
  validTokens?: number;
  /** Over the training time of this run, pauses left out. */
  tokensPerSecond: number;
  /** The training time of this run, pauses left out. */
  elapsedMs: number;
}

/** train()'s options with the defaults filled in (TrainingRun.settings). */
export type TrainSettings = Required<Omit<TrainOptions, 'signal' | 'worker'>>;

/** What train() returns: the steps for `for await`; the iteration's return value is the trained
 *  model. Leaving the loop early or pause() stops after the current step and keeps the run:
 *  iterating again goes on. */
export interface TrainingRun extends AsyncIterableIterator<TrainStep> {
  /** The next step; after the last one {done: true, value: the trained model} (the run owns it),
   *  after a pause or once it has ended {done: true, value: undefined}. */
  next(): Promise<IteratorResult<TrainStep, Model | undefined>>;
  /** What leaving a `for await` loop early calls: the run stays, to go on when iterated again. */
  return(): Promise<IteratorResult<TrainStep, undefined>>;
  [Symbol.asyncIterator](): TrainingRun;
  /** Stops the iteration after the step under way; the run stays. */
  pause(): void;
  /** Steps done so far. */
  readonly step: number;
  /** The options, with the defaults of those left out (glassbox train's, docs/training.md#options)
   *  filled in by the engine once the first step has begun; before that, the options as given. */
  readonly settings: Readonly<Partial<TrainSettings>>;
  /** 'done' after the last step, 'cancelled' after an abort or dispose(), 'failed' after a step
   *  threw (next() rejected with its error); undefined before. */
  readonly stopReason: 'done' | 'cancelled' | 'failed' | undefined;
  /** A model of the current parameters (training can go on), with the run's tokenizer. */
  model(): Promise<Model>;
  /** The Hugging Face layout: config.json, model.safetensors (F32), vocab.json, merges.txt. */
  files(): Promise<{ config: string; weights: Uint8Array; vocab: string; merges: string }>;
  /** Ends the run and frees it and the model it ended with. */
  dispose(): Promise<void>;
  /** `await using run = train(...)`: disposed at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Trains a GPT on texts (each string a document) with the engine in this thread, or in a worker
 *  with { worker }, step by step as it is iterated. The same texts and options give the native
 *  `glassbox train`'s losses and files, bit for bit. */
export function train(texts: string | string[], options?: TrainOptions): TrainingRun;

/** source: a model directory (URL in the browser; path or file: URL in Node), a hub model
 *  ('owner/name', or a huggingface.co page of it: see hubDirectoryUrl), or its files. */
export function loadModel(source: string | URL | ModelFiles, options?: LoadOptions): Promise<Model>;

/** A Hugging Face hub model, as people name it ('owner/name'; https://huggingface.co/owner/name and
 *  its tree/, blob/ and file pages, also hf.co) -> the directory its files resolve from
 *  ('https://huggingface.co/owner/name/resolve/main/'); null for any other source. */
export function hubDirectoryUrl(source: string | URL | ModelFiles): string | null;

/** The files of a model directory: config.json, model.safetensors, vocab.json, merges.txt,
 *  tokenizer.json, tokenizer_config.json, chat_template.jinja, generation_config.json (all but the
 *  first two optional). */
export const MODEL_FILES: readonly string[];

/** What loading and running a model would take, from config.json and the header of
 *  model.safetensors alone (a URL: its first 64 KB). */
export interface ModelEstimate {
  /** model.safetensors' size (0: the server did not say). */
  fileBytes: number;
  /** The weights as the engine holds them (F32, int8 or int4), and loading them. */
  loadBytes: number;
  /** A generation's keys and values at the model's full context. */
  cacheBytes: number;
  /** loadBytes + cacheBytes. */
  totalBytes: number;
  /** What a thread's 4 GB WebAssembly heap can give a model. */
  limitBytes: number;
  /** totalBytes <= limitBytes. */
  fits: boolean;
}

/** A Worker running glassbox's worker.mjs: a module Web Worker, or a Node worker_threads Worker. */
export interface GlassboxWorker {
  postMessage(message: unknown, transfer?: any): void;
  terminate(): unknown;
}

/** What loading and running a model would take (ModelEstimate), counted by the engine without
 *  its weights. */
export function estimateModel(source: string | URL | ModelFiles, options?: EstimateOptions): Promise<ModelEstimate>;

/** estimateModel's options. */
export interface EstimateOptions {
  /** The weights' form the count is for (LoadOptions.quantize). */
  quantize?: 'none' | 'int8' | 'int4';
  /** The context the KV cache is counted for (LoadOptions.contextLength; default: the model's
   *  positions, at most 4,096). */
  contextLength?: number;
  /** Cancels the count; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** true counts in a worker of its own, or in the GlassboxWorker given; either is ended once it
   *  has answered (for a page whose Content-Security-Policy keeps the engine out of its thread). */
  worker?: boolean | GlassboxWorker;
  /** As LoadOptions.wasmPaths. */
  wasmPaths?: string | URL;
}

/** The model directories in a cache (default "glassbox-models"), with their size in bytes. */
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
  readonly name:
    | 'GlassboxError'
    | 'InvalidArgumentError'
    | 'ModelFormatError'
    | 'NetworkError'
    | 'OutOfMemoryError'
    | 'StateError'
    | 'NotSupportedError'
    | 'TemplateError';
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
/** A model's chat template failed: a syntax error (the message gives the line and column), an
 *  error while it rendered, or the template's own raise_exception(message), whose message it
 *  carries. */
export class TemplateError extends GlassboxError {
  readonly name: 'TemplateError';
}

// `await using` and `using` need these: declared here so that a project compiles with a lib
// without esnext.disposable (e.g. "es2022", "dom"), as well as with it or with @types/node, whose
// declarations merge with these.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
  interface Disposable {
    [Symbol.dispose](): void;
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>;
  }
}
