// Reading a model's four files (config.json, model.safetensors, vocab.json, merges.txt) from where
// they are: a URL (streamed with progress in bytes, and optionally kept with the Cache API), a path
// in Node, or the files themselves (strings, buffers, Blobs/Files).
//
// This runs where the engine runs. With { worker: true } that is the worker: a 500 MB download and
// its way into the WebAssembly heap never touch the page's thread, and Blobs/Files cross to the
// worker by reference (structured clone), not as bytes.
//
// model.safetensors is never held whole: its bytes are handed on as they arrive (4 MB pieces from a
// file) to the sink that openWeights gives, the engine's streaming loader.

import { InvalidArgumentError, ModelFormatError, NetworkError, NotSupportedError } from './errors.mjs';
import { importNode, isNode } from './platform.mjs';

/** @type {readonly string[]} */
export const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
export const DEFAULT_CACHE = 'glassbox-models';

const KEYS = ['config', 'weights', 'vocab', 'merges'];   // in MODEL_FILES order
const OPTIONAL = new Set(['vocab.json', 'merges.txt']);  // a model without them runs on ids only

// Throws an InvalidArgumentError for a source loadModel cannot read (checked before any work is started).
// A model on the Hugging Face hub, named as people name it, -> the directory its files resolve
// from (https://huggingface.co/OWNER/NAME/resolve/main/); null for anything else. Accepted: an id
// "owner/name" (exactly two parts, the owner without dots: write "./owner/name" or "owner/name/"
// for a local directory of that name), a repository page (https://huggingface.co/owner/name, also
// hf.co), a tree/ or blob/ page, a file in it, or a resolve/ directory.
export function hubDirectoryUrl(source) {
  const text = source instanceof URL ? source.href : typeof source === 'string' ? source.trim() : null;
  if (text === null) return null;
  if (/^[\w-]+\/[\w.-]+$/.test(text) && !text.includes('..')) return `https://huggingface.co/${text}/resolve/main/`;
  let url;
  try {
    url = new URL(text);
  } catch {
    return null;   // a relative path or URL
  }
  if (url.protocol !== 'https:' || !/^(huggingface\.co|hf\.co)$/.test(url.hostname)) return null;
  let path = url.pathname.replace(/\/(tree|blob)\//, '/resolve/');
  const file = MODEL_FILES.find((f) => path.endsWith(`/${f}`));
  if (file) path = path.slice(0, -file.length);
  if (/^\/[^/]+(\/[^/]+)?\/?$/.test(path) && !path.includes('/resolve')) path = `${path.replace(/\/$/, '')}/resolve/main/`;
  return `https://huggingface.co${path.endsWith('/') ? path : `${path}/`}`;
}

export function checkSource(source) {
  if (source === null || source === undefined) throw new InvalidArgumentError('loadModel needs a model directory or {config, weights, vocab, merges}');
  if (typeof source === 'string' || source instanceof URL) return;
  if (typeof source !== 'object' || !('config' in source) || !('weights' in source))
    throw new InvalidArgumentError('loadModel: the files object needs at least "config" and "weights" (and "vocab", "merges" for text)');
}

// loadModel's source and options, checked before anything starts (every entry checks the same):
// {source (a hub id made its directory), quantize, sha256} normalised; throws InvalidArgumentError.
export function checkLoadOptions(source, { cache, quantize, sha256, onTokenizer } = {}) {
  checkSource(source);
  cacheName(cache);
  const checked = { source: hubDirectoryUrl(source) ?? source, quantize: checkQuantize(quantize), sha256: checkSha256(sha256) };
  if (onTokenizer !== undefined && typeof onTokenizer !== 'function') throw new InvalidArgumentError('onTokenizer must be a function');
  return checked;
}

export function checkQuantize(quantize) {
  if (quantize === undefined) return 'none';
  if (quantize !== 'none' && quantize !== 'int8') throw new InvalidArgumentError(`quantize must be 'none' or 'int8', got ${JSON.stringify(quantize)}`);
  return quantize;
}

// The `sha256` option: 64 hex digits (any case), returned in lower case; undefined: no check.
export function checkSha256(sha256) {
  if (sha256 === undefined || sha256 === null || sha256 === '') return undefined;
  if (typeof sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256.trim()))
    throw new InvalidArgumentError(`loadModel: sha256 must be 64 hexadecimal digits (the SHA-256 of model.safetensors), got ${JSON.stringify(sha256)}`);
  return sha256.trim().toLowerCase();
}

// Throws unless the SHA-256 the sink computed is `want` (lower-case hex); nothing to do without one.
function verifySha256(sink, want, what) {
  if (!want) return;
  const got = sink.sha256();
  if (got !== want) throw new ModelFormatError(`${what} has SHA-256 ${got}, not the ${want} that was asked for: it is not the expected file (nothing was cached)`);
}

// The Cache Storage name of the `cache` option (true: the default name), or null for no caching.
export function cacheName(cache) {
  if (cache === undefined || cache === false || cache === null) return null;
  if (cache === true) return DEFAULT_CACHE;
  if (typeof cache === 'string' && cache) return cache;
  throw new InvalidArgumentError(`loadModel: cache must be true or the name of a cache, got ${JSON.stringify(cache)}`);
}

// -> {config: string, vocab?: string, merges?: string, fromCache?: true, cacheError?: string}, once
// every byte of model.safetensors has gone to the sink of openWeights.
// openWeights({config, prefix, size, sha256}): called (and awaited) with config.json, the first bytes
// of model.safetensors up to the end of its header, the file's size as its source says (0: not
// known) and whether a SHA-256 is wanted, before the rest is read; it returns the sink {write(bytes),
// sha256()} that receives every byte of the file from its first, in order (write copies them before
// it returns), or throws to end the load (a model that cannot fit is refused without downloading it).
// onProgress({phase, file, loaded, total}): bytes of model.safetensors (file), downloaded (phase
// 'download') or read from a file, a Blob, a buffer or the cache ('read'). signal: an AbortSignal that cancels the
// reading. sha256 (checked by checkSha256): model.safetensors must have this SHA-256, else the load
// fails (and a cached copy that does not match is removed). onTokenizerFiles({config, vocab, merges}):
// called once the three are read, before the weights are (from a URL: as soon as they have downloaded).
export async function readModelFiles(source, { onProgress, signal, cache, sha256, onTokenizerFiles, openWeights } = {}) {
  checkSource(source);
  const want = checkSha256(sha256);
  const tokenizerFiles = (files) => {
    if (typeof files.vocab === 'string' && typeof files.merges === 'string')
      onTokenizerFiles?.({ config: files.config, vocab: files.vocab, merges: files.merges });
  };
  const weights = { openWeights, onProgress, signal, want };
  if (typeof source === 'string' || source instanceof URL) {
    const local = isNode && !/^https?:/.test(String(source));
    if (!local) return readDirectoryUrl(source, weights, cacheName(cache), tokenizerFiles);
    return readDirectoryNode(source, weights, tokenizerFiles);
  }
  const files = {
    config: await asText(source.config, 'config'),
    vocab: source.vocab === undefined ? undefined : await asText(source.vocab, 'vocab'),
    merges: source.merges === undefined ? undefined : await asText(source.merges, 'merges'),
  };
  tokenizerFiles(files);
  await pourWeights(piecesOf(source.weights, signal), { ...weights, config: files.config, size: byteLength(source.weights),
                                                         what: 'the weights (model.safetensors)' });
  return files;
}

function byteLength(x) {
  return x?.byteLength ?? x?.size ?? 0;
}

// How much of a file is read at a time: large enough that a read's overhead does not count, small
// enough that the piece is nothing beside the model.
const PIECE = 4 * 2 ** 20;

// A reader ({read(): {done, value}}) of the weights given as bytes or as a Blob/File, in pieces.
function piecesOf(x, signal) {
  if (typeof Blob !== 'undefined' && x instanceof Blob) return x.stream().getReader();
  let bytes;
  if (x instanceof ArrayBuffer) bytes = new Uint8Array(x);
  else if (ArrayBuffer.isView(x)) bytes = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  else throw new InvalidArgumentError('loadModel: "weights" must be an ArrayBuffer, a typed array or a Blob/File');
  let at = 0;
  return {
    async read() {
      signal?.throwIfAborted();
      if (at >= bytes.length) return { done: true };
      const value = bytes.subarray(at, at + PIECE);   // a view: no copy
      at += value.length;
      return { done: false, value };
    },
    async cancel() {},
  };
}

// Reads model.safetensors through `next(loaded)` ({done, value}: its next piece) into the sink that
// openWeights makes from its header (see readModelFiles), reporting progress, and checks its
// SHA-256. onPiece(piece): awaited for each piece once the engine has it (a copy into a cache).
// size: the file's size as its source announces it (0: not known); what: the file, in errors.
async function pourWeights(reader, { config, size, openWeights, onProgress, signal, want, what, next, onPiece, phase = 'read' }) {
  const report = (loaded, total) => onProgress?.({ phase, file: 'model.safetensors', loaded, total });
  next ??= async () => {
    signal?.throwIfAborted();
    return reader.read();
  };
  let loaded = 0, reported = performance.now();
  report(loaded, size);
  // The header first (the first pieces gathered until it is whole): the engine plans the load from it.
  let head = new Uint8Array(0);
  while (head.length < headerLength(head)) {
    const piece = await next(head.length);
    if (piece.done) break;
    head = concat(head, piece.value);
  }
  let sink;
  try {
    sink = await openWeights({ config, prefix: head, size, sha256: Boolean(want) });
  } catch (e) {
    reader.cancel?.(e)?.catch?.(() => {});
    throw e;
  }
  const pour = async (piece) => {
    sink.write(piece);
    loaded += piece.length;
    await onPiece?.(piece);
    const now = performance.now();
    if (now - reported >= 50) {   // at most 20 reports a second: each may cross to the page and redraw
      reported = now;
      report(loaded, Math.max(size, loaded));
    }
  };
  try {
    if (head.length) await pour(head);
    for (;;) {
      const piece = await next(loaded);
      if (piece.done) break;
      await pour(piece.value);
    }
  } catch (e) {
    reader.cancel?.(e)?.catch?.(() => {});
    throw e;
  }
  verifySha256(sink, want, what);   // before anything uses or keeps the model
  report(loaded, Math.max(size, loaded));
  // Every byte is in (and converted as it came): what is left is the engine making the model.
  onProgress?.({ phase: 'convert', file: 'model.safetensors', loaded, total: loaded });
  return loaded;
}

// a and b, one after the other, in a new array.
function concat(a, b) {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

// A model directory's address, ending with "/" (relative: to the page's).
const directoryUrl = (dir) => new URL(String(dir).endsWith('/') ? String(dir) : `${dir}/`, globalThis.location?.href);

// A model directory given as a path or a file: URL, in Node: {base (the path), file(name)}, and the
// error for a file of it that cannot be read (the caller's signal's reason once it is aborted).
async function nodeDirectory(dir, signal) {
  const { fileURLToPath } = await importNode('url');
  const path = await importNode('path');
  const base = dir instanceof URL || String(dir).startsWith('file:') ? fileURLToPath(dir) : String(dir);
  const file = (name) => path.join(base, name);
  const cannotRead = (name, e) => {
    if (signal?.aborted) return signal.reason;
    return new ModelFormatError(`cannot read ${file(name)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  };
  return { base, file, cannotRead };
}

// The longest header the engine reads: a file claiming a longer one gets its error from the
// engine, which reads this much of it.
const MAX_HEADER = 16 * 2 ** 20;

// How many of a safetensors file's first bytes hold its header (the 8-byte length and the JSON,
// at most MAX_HEADER), given at least its first 8 (else 8).
export function headerLength(first8) {
  if (first8.length < 8) return 8;
  const n = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  return 8 + Number(n < BigInt(MAX_HEADER) ? n : BigInt(MAX_HEADER));
}

async function asBytes(x, what) {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof Blob !== 'undefined' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
  throw new InvalidArgumentError(`loadModel: "${what}" must be an ArrayBuffer, a typed array or a Blob/File`);
}

async function asText(x, what) {
  if (typeof x === 'string') return x;
  if (!(x instanceof ArrayBuffer) && !ArrayBuffer.isView(x) && !(typeof Blob !== 'undefined' && x instanceof Blob))
    throw new InvalidArgumentError(`"${what}" must be a string, an ArrayBuffer, a typed array or a Blob/File`);
  return new TextDecoder('utf-8', { fatal: false }).decode(await asBytes(x, what));
}

async function readDirectoryNode(dir, weights, tokenizerFiles) {
  const { open, readFile, stat } = await importNode('fs/promises');
  const { signal } = weights;
  const { base, file: pathOf, cannotRead } = await nodeDirectory(dir, signal);
  const fail = (name, e) => {
    throw cannotRead(name, e);
  };
  const read = async (name) => {
    try {
      return (await readFile(pathOf(name), { signal })).toString('utf8');
    } catch (e) {
      if (OPTIONAL.has(name) && e.code === 'ENOENT' && !signal?.aborted) return undefined;
      fail(name, e);
    }
  };
  const info = await stat(base).catch(() => null);
  if (!info?.isDirectory()) throw new ModelFormatError(`${base} is not a model directory (${MODEL_FILES.join(', ')})`);
  const [config, vocab, merges] = await Promise.all(['config.json', 'vocab.json', 'merges.txt'].map(read));
  const files = { config, vocab, merges };
  tokenizerFiles(files);
  // The weights in pieces, each read into the same buffer and copied on by the sink before the next.
  const name = pathOf('model.safetensors');
  const file = await open(name).catch((e) => fail('model.safetensors', e));
  try {
    const { size } = await file.stat();
    const buffer = new Uint8Array(Math.min(PIECE, Math.max(size, 1)));
    let at = 0;
    const reader = {
      async read() {
        signal?.throwIfAborted();
        const { bytesRead } = await file.read(buffer, 0, buffer.length, at).catch((e) => fail('model.safetensors', e));
        at += bytesRead;
        return bytesRead ? { done: false, value: buffer.subarray(0, bytesRead) } : { done: true };
      },
    };
    await pourWeights(reader, { ...weights, config, size, what: name });
  } finally {
    await file.close();
  }
  return files;
}

// --- a directory URL, with the Cache API

async function readDirectoryUrl(dir, weights, cache, tokenizerFiles) {
  const { signal, want } = weights;
  const base = directoryUrl(dir);
  let store = null, cacheError;
  if (cache) {
    if (typeof caches !== 'object') {
      throw new NotSupportedError('the Cache API is not available here (it needs a browser page or worker in a secure context: https or localhost); load without { cache }');
    }
    try {
      store = await caches.open(cache);
    } catch (e) {   // storage blocked (a privacy setting): the model loads, uncached
      cacheError = `the cache could not be opened (${e?.message ?? e}); the model will be downloaded again next time`;
    }
    const cached = store && await readCached(store, base, weights, tokenizerFiles).catch(async (e) => {
      if (!(e instanceof ModelFormatError) || signal?.aborted) throw e;
      await forget(store, base);   // a cached copy that is not the file asked for, or broken
      throw e;
    });
    if (cached) return cached;
  }
  // All four downloads start at once (the weights are most of the time: none of them waits for
  // another), and are taken in order: the small files, then the weights. With a cache, the weights
  // go into it piece by piece as the engine takes them, and the entry is complete only once every
  // check has passed: an entry for model.safetensors means the directory's other files are stored
  // too. Anything that fails leaves nothing in the cache.
  const files = cacheError ? { cacheError } : {};
  const order = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];
  let storing = null, writer = null;
  // The downloads' own signal: a failure here also stops the copy streaming into the cache.
  const downloads = new AbortController();
  const stop = () => downloads.abort(signal.reason);
  signal?.addEventListener('abort', stop, { once: true });
  const responses = order.map((name) => download(new URL(name, base), downloads.signal, signal));
  for (const r of responses) r.catch(() => {});   // each is awaited below, unless an earlier one failed
  try {
    for (const [i, name] of order.entries()) {
      const url = new URL(name, base);
      if (name === 'model.safetensors') tokenizerFiles(files);   // the small files are in
      const response = await responses[i];
      if (!response) {
        if (!OPTIONAL.has(name)) throw new NetworkError(`cannot download ${url}: HTTP 404 (a model directory needs ${MODEL_FILES.join(', ')})`);
        continue;
      }
      if (name !== 'model.safetensors') {
        const bytes = new Uint8Array(await response.arrayBuffer());
        files[KEYS[MODEL_FILES.indexOf(name)]] = new TextDecoder().decode(bytes);
        const headers = { 'content-type': response.headers.get('content-type') ?? 'application/octet-stream', 'content-length': String(bytes.length) };
        if (store) await putOrFail(store, url, new Response(bytes, { headers }), files);
        continue;
      }
      let onPiece;
      if (store && !files.cacheError) {
        // The cache's copy is fed the pieces the engine took, with backpressure (a tee of the
        // response would buffer without bound whenever the cache is the slower of the two).
        const { readable, writable } = new TransformStream();
        writer = writable.getWriter();
        const headers = { 'content-type': 'application/octet-stream' };
        const length = response.headers.get('content-length');
        if (length && (response.headers.get('content-encoding') ?? 'identity') === 'identity') headers['content-length'] = length;
        storing = putOrFail(store, url, new Response(readable, { headers }), files);
        onPiece = async (piece) => {
          await writer.ready;
          writer.write(piece).catch(() => {});   // (a failure shows in storing)
        };
      }
      await readWithProgress(response, { ...weights, config: files.config, url, onPiece, phase: 'download' });
      await writer?.close();   // the size and the SHA-256 are right: the cache's copy may be complete
    }
    await storing;
  } catch (e) {
    downloads.abort(e);
    await writer?.abort(e).catch(() => {});
    await storing?.catch(() => {});
    if (store) await forget(store, base);   // after the copy into the cache has stopped
    throw signal?.aborted ? signal.reason : e;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (store && files.cacheError) await forget(store, base);
  return files;
}

// Cache.put; a failure (e.g. the quota) is recorded in files.cacheError, not thrown: the model still
// loads, it is only not kept.
async function putOrFail(store, url, response, files) {
  try {
    await store.put(url, response);
  } catch (e) {
    files.cacheError ??= `the files could not be stored in the cache (${e?.message ?? e}); they will be downloaded again next time`;
  }
}

async function forget(store, base) {
  await Promise.all(MODEL_FILES.map((name) => store.delete(new URL(name, base)))).catch(() => {});
}

// Response, or null for a 404 (an optional file may be missing). signal stops the download;
// cancelled, the caller's signal: its reason is what the caller sees.
async function download(url, signal, cancelled, headers = undefined) {
  let response;
  try {
    response = await fetch(url, { signal, headers });
  } catch (e) {
    if (cancelled?.aborted) throw cancelled.reason;
    throw new NetworkError(`cannot download ${url}: ${e.message} (is the address right, and does the server allow this page to read it?)`);
  }
  if (response.status === 404) return null;
  if (!response.ok) {
    const hint = response.status === 401 || response.status === 403 ? ' (the repository may be private or gated)' : '';
    throw new NetworkError(`cannot download ${url}: HTTP ${response.status}${hint}`);
  }
  return response;
}

// Pours a response's body into the engine (pourWeights), with the download's errors: one that
// ends short of its Content-Length (or breaks off) is an error, not a truncated model.
async function readWithProgress(response, weights) {
  const { signal, url } = weights;
  const total = Number(response.headers.get('content-length')) || 0;
  // Compressed, the announced length is that of the compressed bytes: only a plain body can be held to it.
  const encoding = (response.headers.get('content-encoding') ?? 'identity').toLowerCase();
  const announced = encoding === 'identity' ? total : 0;
  const reader = response.body.getReader();
  const next = (loaded) => readChunk(reader, signal, url, loaded, announced);
  const loaded = await pourWeights(reader, { ...weights, size: total, what: String(url ?? 'model.safetensors'), next });
  if (announced && loaded !== announced)
    throw new NetworkError(`cannot download ${url}: received ${loaded} bytes, the server announced ${announced}; nothing was cached`);
}

// The next chunk of a download ({done, value}); a broken connection is a NetworkError that says
// how far it got (loaded of announced bytes; 0: not announced), a cancel the caller's reason.
async function readChunk(reader, signal, url, loaded, announced) {
  signal?.throwIfAborted();
  try {
    return await reader.read();
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw new NetworkError(`cannot download ${url}: the connection broke after ${loaded} of ${announced || 'an unknown number of'} bytes (${e.message}); nothing was cached`);
  }
}

async function readCached(store, base, weights, tokenizerFiles) {
  const url = new URL('model.safetensors', base);
  const cached = await store.match(url);
  if (!cached) return null;
  const files = { fromCache: true };
  for (const [i, name] of MODEL_FILES.entries()) {
    if (name === 'model.safetensors') continue;
    const response = await store.match(new URL(name, base));
    if (response) files[KEYS[i]] = await response.text();
    else if (!OPTIONAL.has(name)) return null;
  }
  tokenizerFiles(files);
  await readWithProgress(cached, { ...weights, config: files.config, url: `${url} (cached)` });
  return files;
}

// --- a model's size before it is loaded

// -> {config: string, prefix: Uint8Array, size}: config.json, the first bytes of model.safetensors
// through the end of its header, and the file's size, read without the rest of the weights. From a
// URL: config.json and one ranged request for the file's first 64 KB (a second one for a longer
// header); a server that ignores ranges sends the whole file, of which only the start is read.
// vocab.json and merges.txt as text, for the tokenizer alone (tokenizer.mjs): from a directory
// (a model's, whose weights are not read; a URL, a hub id, or a path in Node) or from {vocab,
// merges} (strings, buffers or Blobs).
export async function readTokenizerFiles(source, { signal } = {}) {
  if (source === null || source === undefined) throw new InvalidArgumentError('loadTokenizer needs a directory with vocab.json and merges.txt, or {vocab, merges}');
  if (typeof source !== 'string' && !(source instanceof URL)) {
    if (typeof source !== 'object' || !('vocab' in source) || !('merges' in source))
      throw new InvalidArgumentError('loadTokenizer: the files object needs "vocab" (vocab.json) and "merges" (merges.txt)');
    return { vocab: await asText(source.vocab, 'vocab'), merges: await asText(source.merges, 'merges') };
  }
  source = hubDirectoryUrl(source) ?? source;
  const names = ['vocab.json', 'merges.txt'];
  let texts;
  if (isNode && !/^https?:/.test(String(source))) {
    const { readFile } = await importNode('fs/promises');
    const { file, cannotRead } = await nodeDirectory(source, signal);
    texts = await Promise.all(names.map((name) => readFile(file(name), { encoding: 'utf8', signal }).catch((e) => {
      throw cannotRead(name, e);
    })));
  } else {
    const base = directoryUrl(source);
    texts = await Promise.all(names.map(async (name) => {
      const response = await download(new URL(name, base), signal, signal);
      if (!response) throw new ModelFormatError(`${new URL(name, base)}: no such file (HTTP 404): the tokenizer needs vocab.json and merges.txt`);
      return response.text();
    }));
  }
  return { vocab: texts[0], merges: texts[1] };
}

export async function readModelHeader(source, { signal } = {}) {
  checkSource(source);
  if (typeof source === 'string' || source instanceof URL) {
    if (isNode && !/^https?:/.test(String(source))) {
      const { open, readFile } = await importNode('fs/promises');
      const { file: pathOf, cannotRead } = await nodeDirectory(source, signal);
      const config = await readFile(pathOf('config.json'), { encoding: 'utf8', signal }).catch((e) => {
        throw cannotRead('config.json', e);
      });
      const file = await open(pathOf('model.safetensors')).catch((e) => {
        throw cannotRead('model.safetensors', e);
      });
      try {
        const { size } = await file.stat();
        const read = async (n) => {
          const bytes = new Uint8Array(Math.min(n, size));
          await file.read(bytes, 0, bytes.length, 0);
          return bytes;
        };
        return { config, prefix: await read(headerLength(await read(8))), size };
      } finally {
        await file.close();
      }
    }
    const base = directoryUrl(source);
    const missing = (name) => new NetworkError(`cannot download ${new URL(name, base)}: HTTP 404 (a model directory needs ${MODEL_FILES.join(', ')})`);
    const configResponse = await download(new URL('config.json', base), signal, signal);
    if (!configResponse) throw missing('config.json');
    const config = await configResponse.text();
    const url = new URL('model.safetensors', base);
    let prefix = new Uint8Array(0), size = 0;
    for (let want = 64 * 1024; prefix.length < headerLength(prefix) && prefix.length < want;) {
      const response = await download(url, signal, signal, { range: `bytes=${prefix.length}-${want - 1}` });
      if (!response) throw missing('model.safetensors');
      const ranged = response.status === 206;
      size = ranged ? Number(response.headers.get('content-range')?.split('/')[1]) || 0 : Number(response.headers.get('content-length')) || 0;
      const reader = response.body.getReader();
      const start = ranged ? prefix.length : 0;
      let got = ranged ? prefix : new Uint8Array(0);
      // A range is read to its end; a whole file (a server without ranges) only to its header's.
      while (ranged || got.length < headerLength(got)) {
        const { done, value } = await reader.read();
        if (done) break;
        got = concat(got, value);
      }
      if (!ranged) reader.cancel().catch(() => {});
      prefix = got;
      if (!ranged || got.length === start) break;   // the whole file's start was read, or it ended
      want = headerLength(prefix);
    }
    return { config, prefix: prefix.subarray(0, headerLength(prefix)), size };
  }
  const config = await asText(source.config, 'config');
  const weights = source.weights;
  if (typeof Blob !== 'undefined' && weights instanceof Blob) {
    const first = new Uint8Array(await weights.slice(0, 8).arrayBuffer());
    return { config, prefix: new Uint8Array(await weights.slice(0, headerLength(first)).arrayBuffer()), size: weights.size };
  }
  const bytes = await asBytes(weights, 'weights');
  return { config, prefix: bytes.subarray(0, headerLength(bytes)), size: bytes.length };
}

// --- what is in the cache, for a page that shows it

// -> [{url, bytes}]: the model directories in the cache, with their size.
/** @param {true | string} [cache] */
export async function listCachedModels(cache = true) {
  const store = await openExisting(cache);
  if (!store) return [];
  const dirs = new Map();
  for (const request of await store.keys()) {
    const name = MODEL_FILES.find((f) => request.url.endsWith(`/${f}`));
    if (!name) continue;
    const url = request.url.slice(0, -name.length);
    const entry = dirs.get(url) ?? { url, bytes: 0, names: new Set() };
    entry.bytes += Number((await store.match(request))?.headers.get('content-length')) || 0;
    entry.names.add(name);
    dirs.set(url, entry);
  }
  // What readCached can load: the weights and config.json.
  return [...dirs.values()].filter((d) => d.names.has('model.safetensors') && d.names.has('config.json'))
    .map(({ url, bytes }) => ({ url, bytes }));
}

// Removes one directory's files (url: as listCachedModels gives it), or with no url the whole cache.
/**
 * @param {string | null} [url]
 * @param {true | string} [cache]
 */
export async function removeCachedModels(url = null, cache = true) {
  const store = await openExisting(cache);
  if (!store) return;
  if (url === null) {
    await caches.delete(cacheName(cache));
    return;
  }
  const base = directoryUrl(url);
  await Promise.all(MODEL_FILES.map((name) => store.delete(new URL(name, base))));
}

async function openExisting(cache) {
  const name = cacheName(cache);
  if (!name) throw new InvalidArgumentError('a cache name is needed');
  if (typeof caches !== 'object') throw new NotSupportedError('the Cache API is not available here (it needs a browser page or worker in a secure context: https or localhost)');
  return (await caches.has(name)) ? caches.open(name) : null;
}
