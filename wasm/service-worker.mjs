// The engine for a service worker (the package's "./service-worker" entry): loadModel and
// estimateModel with the engine in the service worker's own thread. A service worker may not use
// import() nor start a Worker, so this entry imports everything statically, the single-threaded
// module and the chat module included, and refuses { worker }. The rest of the API is glassbox.mjs's.
//
//   // sw.js, registered with navigator.serviceWorker.register('sw.js', { type: 'module' })
//   import { loadModel } from 'glassbox/service-worker';
//   const model = await loadModel('https://example.com/models/gpt2/');
import createGlassboxChat from './glassbox-chat.mjs';
import createGlassboxCore from './glassbox-core.mjs';
import { useChatFactory } from './chat.mjs';
import { estimate, loadHere, useCoreFactory } from './engine.mjs';
import { NotSupportedError } from './errors.mjs';
import { hubDirectoryUrl } from './hub.mjs';
import { checkContextLength, checkLoadOptions, checkQuantize, checkSource } from './model-source.mjs';
import { checkOptionNames, checkSignal, ESTIMATE_OPTIONS } from './options.mjs';

export { hubDirectoryUrl } from './hub.mjs';
export { listCachedModels, removeCachedModels } from './model-cache.mjs';
export { MODEL_FILES } from './model-files.mjs';
export {
  GlassboxError,
  InvalidArgumentError,
  ModelFormatError,
  NetworkError,
  NotSupportedError,
  OutOfMemoryError,
  StateError,
  TemplateError,
} from './errors.mjs';

useCoreFactory(createGlassboxCore);
useChatFactory(createGlassboxChat);

const noWorker = () =>
  new NotSupportedError('a service worker cannot start a Worker: load without { worker }, in its own thread');

// As glassbox.mjs's loadModel, in this thread only.
export async function loadModel(source, options = {}) {
  const checked = checkLoadOptions(source, options);
  options ??= {};
  if (options.worker) throw noWorker();
  options.signal?.throwIfAborted();
  return loadHere(checked.source, {
    ...options,
    quantize: checked.quantize,
    sha256: checked.sha256,
    contextLength: checked.contextLength,
  });
}

// As glassbox.mjs's estimateModel, in this thread only.
export async function estimateModel(source, options = undefined) {
  const {
    quantize,
    contextLength,
    signal,
    worker = false,
    wasmPaths,
  } = checkOptionNames(options, ESTIMATE_OPTIONS, 'estimateModel');
  checkSignal(signal);
  if (worker) throw noWorker();
  checkSource(source);
  signal?.throwIfAborted();
  return estimate(hubDirectoryUrl(source) ?? source, {
    quantize: checkQuantize(quantize),
    contextLength: checkContextLength(contextLength),
    signal,
    wasmPaths,
  });
}
