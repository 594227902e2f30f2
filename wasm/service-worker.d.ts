// Types of the service-worker entry (service-worker.mjs, the package's "./service-worker"): the
// same loadModel and estimateModel as glassbox.mjs, with the engine in the service worker's own
// thread ({ worker } is refused with a NotSupportedError).
export {
  estimateModel,
  loadModel,
  hubDirectoryUrl,
  listCachedModels,
  removeCachedModels,
  MODEL_FILES,
  GlassboxError,
  InvalidArgumentError,
  ModelFormatError,
  NetworkError,
  NotSupportedError,
  OutOfMemoryError,
  StateError,
  TemplateError,
} from './glassbox.js';
// The types of what these give and take (train() is not here: a run loads its module with import(),
// which a service worker may not use).
export type {
  ModelType,
  ModelConfig,
  ModelShape,
  TokenIds,
  ModelFiles,
  LoadOptions,
  Tokenizer,
  TokenProbability,
  HeadMask,
  ForwardOptions,
  ForwardResult,
  ClassifyResult,
  GenerateOptions,
  GenerateStep,
  GenerateResult,
  Model,
  Generation,
  ModelEstimate,
  GlassboxWorker,
  EstimateOptions,
} from './glassbox.js';
