// Reading a model's files (config.json, model.safetensors, the tokenizer's and chat's) from where
// they are: a URL (download.mjs: streamed with progress in bytes, and optionally kept with the
// Cache API), a path in Node (node-files.mjs), or the files themselves (strings, buffers,
// Blobs/Files); and loadModel's options about them, checked before anything starts.
//
// This runs where the engine runs. With { worker: true } that is the worker: a 500 MB download and
// its way into the WebAssembly heap never touch the page's thread, and Blobs/Files cross to the
// worker by reference (structured clone), not as bytes.

import { InvalidArgumentError, ModelFormatError } from './errors.mjs';
import { download, readDirectoryUrl, readSmallBody } from './download.mjs';
import { hubDirectoryUrl } from './hub.mjs';
import { cacheName } from './model-cache.mjs';
import {
  asText,
  byteLength,
  checkSmall,
  directoryUrl,
  givenShards,
  INDEX,
  keyOf,
  KEYS,
  ON_CHANCE,
  MODEL_FILES,
  piecesOf,
  parseIndex,
  pourShards,
  pourWeights,
  SMALL_FILES,
} from './model-files.mjs';
import { isLocalPath, nodeDirectory, readDirectoryNode, readSmallFile } from './node-files.mjs';
import { checkFunction, checkInteger, checkOptionNames, checkSignal, formatValue, LOAD_OPTIONS } from './options.mjs';
import { importNode } from './platform.mjs';

// config.json's text, parsed as the engine reads it: a UTF-8 byte order mark before it is allowed.
// (The engine has read it before this: a text that is not JSON is its ModelFormatError first.)
export function parseConfig(text) {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new ModelFormatError(`config.json: not valid JSON (${e.message})`);
  }
}

// Throws an InvalidArgumentError for a source loadModel cannot read, a ModelFormatError for a small
// file given as bytes larger than its cap (checked before any work is started).
export function checkSource(source) {
  if (source === null || source === undefined)
    throw new InvalidArgumentError('loadModel needs a model directory or {config, weights, tokenizerJson, ...}');
  if (typeof source === 'string' || source instanceof URL) return;
  if (typeof source !== 'object' || !('config' in source) || !('weights' in source))
    throw new InvalidArgumentError(
      'loadModel: the files object needs at least "config" and "weights" (and "tokenizerJson", or "vocab" and "merges", for text)',
    );
  // here too, so that a worker is not handed a copy of bytes it would refuse
  for (const [i, key] of KEYS.entries()) if (key !== 'weights') checkSmall(source[key], key, MODEL_FILES[i]);
  checkSmall(source.index, 'index', INDEX);
  // A sharded checkpoint: weights an array of its shards, with the index that names them.
  if (Array.isArray(source.weights) !== (source.index !== undefined))
    throw new InvalidArgumentError(
      `loadModel: "index" (${INDEX}) goes with "weights" as an array of the shards it names: give both, or one model.safetensors as "weights" alone`,
    );
}

// loadModel's source and options, checked before anything starts (every entry checks the same):
// {source (a hub id made its directory), quantize, sha256, contextLength} normalised; throws InvalidArgumentError
// for an unknown option or one of the wrong type (options.mjs).
export function checkLoadOptions(source, options) {
  checkSource(source);
  const { cache, quantize, sha256, contextLength, onProgress, onTokenizer, signal, worker, threads } = checkOptionNames(
    options,
    LOAD_OPTIONS,
    'loadModel',
  );
  cacheName(cache);
  const checked = {
    source: hubDirectoryUrl(source) ?? source,
    quantize: checkQuantize(quantize),
    sha256: checkSha256(sha256),
    contextLength: checkContextLength(contextLength),
  };
  checkFunction('onProgress', onProgress);
  checkFunction('onTokenizer', onTokenizer);
  checkSignal(signal);
  checkInteger('threads', threads, 1, Number.MAX_SAFE_INTEGER, 'an integer >= 1');
  if (worker !== undefined && typeof worker !== 'boolean' && (worker === null || typeof worker !== 'object'))
    throw new InvalidArgumentError(
      `worker must be true, false or a Worker running glassbox's worker.mjs, got ${formatValue(worker)}`,
    );
  return checked;
}

// contextLength: the most positions a sequence holds (1 .. the model's n_positions, which the
// engine checks); 0 for undefined: the engine's default, min(n_positions, 4096).
export function checkContextLength(contextLength) {
  checkInteger('contextLength', contextLength, 1, Number.MAX_SAFE_INTEGER, 'an integer >= 1');
  return contextLength ?? 0;
}

export function checkQuantize(quantize) {
  if (quantize === undefined) return 'none';
  if (quantize !== 'none' && quantize !== 'int8' && quantize !== 'int4')
    throw new InvalidArgumentError(`quantize must be 'none', 'int8' or 'int4', got ${formatValue(quantize)}`);
  return quantize;
}

// The `sha256` option: 64 hex digits (any case), returned in lower case; undefined: no check.
export function checkSha256(sha256) {
  if (sha256 === undefined || sha256 === null || sha256 === '') return undefined;
  if (typeof sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256.trim()))
    throw new InvalidArgumentError(
      `loadModel: sha256 must be 64 hexadecimal digits (the SHA-256 of model.safetensors), got ${formatValue(sha256)}`,
    );
  return sha256.trim().toLowerCase();
}

// -> {config: string, vocab?, merges?, tokenizerJson?, tokenizerConfig?, chatTemplate?,
// generationConfig? (strings: the files a directory has), fromCache?: true, cacheError?: string}, once
// every byte of model.safetensors has gone to the sink of openWeights.
// openWeights({config, prefix, size, sha256}): called (and awaited) with config.json, the first bytes
// of model.safetensors up to the end of its header, the file's size as its source says (0: not
// known) and whether a SHA-256 is wanted, before the rest is read; it returns the sink {write(bytes),
// sha256()} that receives every byte of the file from its first, in order (write copies them before
// it returns), or throws to end the load (a model that cannot fit is refused without downloading it).
// onProgress({phase, file, loaded, total}): bytes of model.safetensors (file), downloaded (phase
// 'download') or read from a file, a Blob, a buffer or the cache ('read'). signal: an AbortSignal that cancels the
// reading. sha256 (checked by checkSha256): model.safetensors must have this SHA-256, else the load
// fails (and a cached copy that does not match is removed). onTokenizerFiles({config, tokenizerJson}
// or {config, vocab, merges}): called once the small files are read, before the weights are (from
// a URL: as soon as they have downloaded), when there is a tokenizer; tokenizer.json is preferred.
export async function readModelFiles(
  source,
  { onProgress, signal, cache, sha256, onTokenizerFiles, openWeights } = {},
) {
  checkSource(source);
  const want = checkSha256(sha256);
  // Called by each reader once the small files are in, before the weights are read.
  const tokenizerFiles = (files) => {
    const { config, vocab, merges, tokenizerJson } = files;
    if (typeof tokenizerJson === 'string') onTokenizerFiles?.({ config, tokenizerJson });
    else {
      checkTokenizerPair(source, files);
      if (typeof vocab === 'string' && typeof merges === 'string') onTokenizerFiles?.({ config, vocab, merges });
    }
  };
  const weights = { openWeights, onProgress, signal, want };
  if (typeof source === 'string' || source instanceof URL) {
    if (!isLocalPath(source)) return readDirectoryUrl(source, weights, cacheName(cache), tokenizerFiles);
    return readDirectoryNode(source, weights, tokenizerFiles);
  }
  const files = {};
  for (const name of SMALL_FILES) {
    const key = keyOf(name);
    if (name === 'config.json' || source[key] !== undefined) files[key] = await asText(source[key], key, name);
  }
  tokenizerFiles(files);
  if (Array.isArray(source.weights)) {
    const index = await asText(source.index, 'index', INDEX);
    const parsed = parseIndex(index);
    await pourShards(givenShards(source.weights, parsed.names, signal), { ...weights, config: files.config, parsed });
    return files;
  }
  await pourWeights(piecesOf(source.weights, signal), {
    ...weights,
    config: files.config,
    size: byteLength(source.weights),
    what: 'the weights (model.safetensors)',
  });
  return files;
}

// A model's tokenizer is both of vocab.json and merges.txt, or neither (a model run on ids only):
// one without the other would make a tokenizer without merges (wrong ids), so it is an error
// naming the missing file. files: {vocab?, merges?} as read (undefined: absent).
function checkTokenizerPair(source, { vocab, merges }) {
  if ((vocab === undefined) === (merges === undefined)) return;
  const [have, missing] = vocab === undefined ? ['merges.txt', 'vocab.json'] : ['vocab.json', 'merges.txt'];
  const where =
    typeof source === 'string' || source instanceof URL
      ? String(source)
      : `the files object (its "${missing === 'vocab.json' ? 'vocab' : 'merges'}" is absent)`;
  throw new ModelFormatError(
    `${where}: no ${missing} beside ${have}: the tokenizer needs both (a model run on token ids alone has neither)`,
  );
}

// The tokenizer's files as text, for the tokenizer alone (tokenizer.mjs): {tokenizerJson} or
// {vocab, merges}, from a directory (a model's, whose weights are not read; a URL, a hub id, or a
// path in Node: its tokenizer.json where it has one, else vocab.json and merges.txt) or from
// {tokenizerJson} or {vocab, merges} (strings, buffers or Blobs).
export async function readTokenizerFiles(source, { signal } = {}) {
  const needs = 'a directory with tokenizer.json or vocab.json and merges.txt, or {tokenizerJson} or {vocab, merges}';
  if (source === null || source === undefined) throw new InvalidArgumentError(`loadTokenizer needs ${needs}`);
  if (typeof source !== 'string' && !(source instanceof URL)) {
    if (typeof source === 'object' && source.tokenizerJson !== undefined)
      return { tokenizerJson: await asText(source.tokenizerJson, 'tokenizerJson', 'tokenizer.json') };
    if (typeof source !== 'object' || !('vocab' in source) || !('merges' in source))
      throw new InvalidArgumentError(
        'loadTokenizer: the files object needs "tokenizerJson" (tokenizer.json), or "vocab" (vocab.json) and "merges" (merges.txt)',
      );
    return {
      vocab: await asText(source.vocab, 'vocab', 'vocab.json'),
      merges: await asText(source.merges, 'merges', 'merges.txt'),
    };
  }
  source = hubDirectoryUrl(source) ?? source;
  // read(name): the file's text, or undefined when there is no such file.
  let read;
  if (isLocalPath(source)) {
    const { file, cannotRead } = await nodeDirectory(source, signal);
    read = async (name) => {
      try {
        return (await readSmallFile(file(name), name, signal)).toString('utf8');
      } catch (e) {
        if (e.code === 'ENOENT' && !signal?.aborted) return undefined;
        throw cannotRead(name, e);
      }
    };
  } else {
    const base = directoryUrl(source);
    read = async (name) => {
      const response = await download(new URL(name, base), signal, signal, undefined, ON_CHANCE.has(name));
      if (!response) return undefined;
      return new TextDecoder().decode(await readSmallBody(response, new URL(name, base), name, signal));
    };
  }
  const names = ['tokenizer.json', 'vocab.json', 'merges.txt'];
  const [tokenizerJson, vocab, merges] = await Promise.all(names.map(read));
  if (tokenizerJson !== undefined) return { tokenizerJson };
  const missing = names.filter((name, i) => i > 0 && [vocab, merges][i - 1] === undefined);
  if (missing.length)
    throw new ModelFormatError(
      `${source}: no tokenizer.json, and no ${missing.join(' or ')}: the tokenizer needs tokenizer.json, or vocab.json and merges.txt`,
    );
  return { vocab, merges };
}
