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
} from './glassbox.js';
export type * from './glassbox.js';
