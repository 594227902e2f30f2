// The tokenizer alone (the package's "./tokenizer" entry): byte-level BPE from tokenizer.json (as
// Hugging Face's tokenizers library encodes) or from GPT-2's vocab.json + merges.txt (byte-exact
// with tiktoken's "gpt2" encoding), without the model or its engine. Its
// module (glassbox-tokenizer.mjs/.wasm) is a fraction of the engine's size: for pages that count
// tokens or show them, and for servers that check a prompt's length.
//
//   const tokenizer = await loadTokenizer('models/brown-small/');   // or 'owner/name', a path, {vocab, merges}
//   tokenizer.tokenize('Hello world');  // -> [15496, 995]
//   tokenizer.detokenize([15496, 995]); // -> 'Hello world'
//
// Unlike the model's, these methods are synchronous: the tokenizer runs in the calling thread.
import { errorClasses, InvalidArgumentError, StateError } from './errors.mjs';
import { checkIds, checkText } from './input.mjs';
import { readTokenizerFiles } from './model-source.mjs';
import { checkOptionNames, checkSignal, checkTokenizeOptions } from './options.mjs';
import { isNode } from './platform.mjs';
import { makeModule } from './wasm-module.mjs';

export { GlassboxError, InvalidArgumentError, ModelFormatError, NetworkError, StateError } from './errors.mjs';

// `using tokenizer = ...` calls it; where the runtime has no Symbol.dispose yet, the name
// TypeScript's and Babel's helpers look for.
/** @type {typeof Symbol.dispose} */
const dispose = /** @type {typeof Symbol.dispose} */ (Symbol.dispose ?? Symbol.for('Symbol.dispose'));

let modulePromise = null; // one instance per thread, shared by every tokenizer made in it

// The Emscripten module (wasm-module.mjs), its .wasm beside the glue (where a bundler puts it:
// its URL is written out for bundlers to see) or in wasmPaths (a directory; the first call's is used).
function loadModule(wasmPaths) {
  modulePromise ??= (async () => {
    const dir = wasmPaths === undefined ? null : String(wasmPaths).replace(/\/?$/, '/');
    const { default: create } = await import('./glassbox-tokenizer.mjs');
    return makeModule(create, {
      file: 'glassbox-tokenizer.wasm',
      glue: 'glassbox-tokenizer.mjs',
      needs: 'Tokenizer',
      bundled: new URL('./glassbox-tokenizer.wasm', import.meta.url),
      wasmPaths: dir === null || isNode ? dir : new URL(dir, globalThis.location?.href).href,
      options: { errors: errorClasses },
    });
  })();
  modulePromise.catch(() => {
    modulePromise = null;
  }); // reported to the caller; tried again next time
  return modulePromise;
}

// source: a directory holding tokenizer.json, or vocab.json and merges.txt (a model's: its weights
// are not read; a URL, a hub id 'owner/name', or a path in Node; tokenizer.json is preferred), or
// {tokenizerJson} or {vocab, merges} as strings, buffers or Blobs.
// options: signal, an AbortSignal that cancels reading the files; wasmPaths, the directory
// glassbox-tokenizer.wasm is served from (default: beside its glue, where a bundler puts it).
/**
 * @param {import('./tokenizer.js').TokenizerSource} source
 * @param {{ signal?: AbortSignal, wasmPaths?: string | URL }} [options]
 * @returns {Promise<Tokenizer>}
 */
export async function loadTokenizer(source, options = {}) {
  const { signal, wasmPaths } = checkOptionNames(options, ['signal', 'wasmPaths'], 'loadTokenizer');
  checkSignal(signal);
  if (wasmPaths !== undefined && typeof wasmPaths !== 'string' && !(wasmPaths instanceof URL))
    throw new InvalidArgumentError(
      'wasmPaths must be the URL (or, in Node, the path) of the directory holding the .wasm files',
    );
  const [files, module] = await Promise.all([readTokenizerFiles(source, { signal }), loadModule(wasmPaths)]);
  signal?.throwIfAborted();
  return new Tokenizer(
    files.tokenizerJson !== undefined
      ? module.Tokenizer.fromJson(files.tokenizerJson)
      : module.Tokenizer.create(files.vocab, files.merges),
  );
}

export class Tokenizer {
  #handle;

  // (loadTokenizer makes them.)
  constructor(handle) {
    this.#handle = handle;
    this.vocabSize = handle.vocabSize();
  }

  // Text -> token ids. Special tokens such as "<|endoftext|>" are ordinary text unless
  // allowSpecial is true (tiktoken's encode_ordinary and encode(..., allowed_special='all'));
  // addSpecial adds a tokenizer.json's post-processor tokens (BOS...): both true give what
  // transformers' tokenizer(text) gives.
  tokenize(text, options = {}) {
    const { allowSpecial = false, addSpecial = false } = checkTokenizeOptions(options);
    checkText(text, 'text');
    return Array.from(this.#live().tokenize(text, allowSpecial, addSpecial));
  }

  // Token ids -> text; bytes that are not whole UTF-8 characters become U+FFFD, as in tiktoken.
  detokenize(ids) {
    return this.#live().detokenize(checkIds(ids));
  }

  // Frees its memory; calls after it throw a StateError.
  dispose() {
    this.#handle?.delete();
    this.#handle = null;
  }

  [dispose]() {
    this.dispose();
  }

  #live() {
    if (!this.#handle) throw new StateError('this tokenizer has been disposed');
    return this.#handle;
  }
}
