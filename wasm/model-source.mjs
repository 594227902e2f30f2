// Reading a model's four files (config.json, model.safetensors, vocab.json, merges.txt) from where
// they are: a URL (streamed with progress in bytes, and optionally kept with the Cache API), a path
// in Node, or the files themselves (strings, buffers, Blobs/Files).
//
// This runs where the engine runs. With { worker: true } that is the worker: a 500 MB download, its
// assembly into one buffer and its copy into the WebAssembly heap never touch the page's thread, and
// Blobs/Files cross to the worker by reference (structured clone), not as bytes.

import { InvalidArgumentError, ModelFormatError, NetworkError, NotSupportedError } from './errors.mjs';

export const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
export const DEFAULT_CACHE = 'glassbox-models';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const KEYS = ['config', 'weights', 'vocab', 'merges'];   // in MODEL_FILES order
const OPTIONAL = new Set(['vocab.json', 'merges.txt']);  // a model without them runs on ids only

// Throws an InvalidArgumentError for a source loadModel cannot read (checked before any work is started).
export function checkSource(source) {
  if (source === null || source === undefined) throw new InvalidArgumentError('loadModel needs a model directory or {config, weights, vocab, merges}');
  if (typeof source === 'string' || source instanceof URL) return;
  if (typeof source !== 'object' || !('config' in source) || !('weights' in source))
    throw new InvalidArgumentError('loadModel: the files object needs at least "config" and "weights" (and "vocab", "merges" for text)');
}

// The `sha256` option: 64 hex digits (any case), returned in lower case; undefined: no check.
export function checkSha256(sha256) {
  if (sha256 === undefined || sha256 === null || sha256 === '') return undefined;
  if (typeof sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256.trim()))
    throw new InvalidArgumentError(`loadModel: sha256 must be 64 hexadecimal digits (the SHA-256 of model.safetensors), got ${JSON.stringify(sha256)}`);
  return sha256.trim().toLowerCase();
}

// Throws unless the bytes' SHA-256 is `want` (lower-case hex); nothing to do without one.
async function verifySha256(bytes, want, what) {
  if (!want) return;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  const got = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  if (got !== want) throw new ModelFormatError(`${what} has SHA-256 ${got}, not the ${want} that was asked for: it is not the expected file (nothing was cached)`);
}

// The Cache Storage name of the `cache` option (true: the default name), or null for no caching.
export function cacheName(cache) {
  if (cache === undefined || cache === false || cache === null) return null;
  if (cache === true) return DEFAULT_CACHE;
  if (typeof cache === 'string' && cache) return cache;
  throw new InvalidArgumentError(`loadModel: cache must be true or the name of a cache, got ${JSON.stringify(cache)}`);
}

// -> {config: string, weights: Uint8Array, vocab?: string, merges?: string, fromCache?: true, cacheError?: string}
// onProgress({loaded, total}): bytes of model.safetensors. signal: an AbortSignal that cancels the reading.
// sha256 (checked by checkSha256): model.safetensors must have this SHA-256, else the load fails
// (and a cached copy that does not match is removed). onTokenizerFiles({config, vocab, merges}):
// called once the three are read, before the weights are (from a URL: as soon as they have downloaded).
// onWeightsHeader({config, prefix, size}): called (and awaited) with the first bytes of
// model.safetensors up to the end of its header and the file's size, before the rest is read or a
// buffer of its size is allocated; what it throws ends the load (a model that cannot fit is
// refused without downloading it). Not called for weights given as a buffer: they are in memory.
export async function readModelFiles(source, { onProgress, signal, cache, sha256, onTokenizerFiles, onWeightsHeader } = {}) {
  checkSource(source);
  const want = checkSha256(sha256);
  const tokenizerFiles = (files) => {
    if (typeof files.vocab === 'string' && typeof files.merges === 'string')
      onTokenizerFiles?.({ config: files.config, vocab: files.vocab, merges: files.merges });
  };
  if (typeof source === 'string' || source instanceof URL) {
    const local = isNode && !/^https?:/.test(String(source));
    if (!local) return readDirectoryUrl(source, onProgress, signal, cacheName(cache), want, tokenizerFiles, onWeightsHeader);
    const files = await readDirectoryNode(source, onProgress, signal, onWeightsHeader);
    tokenizerFiles(files);
    await verifySha256(files.weights, want, 'model.safetensors');
    return files;
  }
  const total = byteLength(source.weights);
  const config = await asText(source.config, 'config');
  if (typeof Blob !== 'undefined' && source.weights instanceof Blob && onWeightsHeader) {   // a file on this device
    const prefix = await headerOfBlob(source.weights);
    await onWeightsHeader({ config, prefix, size: source.weights.size });
  }
  const files = {
    config,
    weights: await asBytes(source.weights, 'weights'),
    vocab: source.vocab === undefined ? undefined : await asText(source.vocab, 'vocab'),
    merges: source.merges === undefined ? undefined : await asText(source.merges, 'merges'),
  };
  signal?.throwIfAborted();
  tokenizerFiles(files);
  await verifySha256(files.weights, want, 'the weights (model.safetensors)');
  onProgress?.({ loaded: total, total });
  return files;
}

function byteLength(x) {
  return x?.byteLength ?? x?.size ?? 0;
}

async function asBytes(x, what) {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof Blob !== 'undefined' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
  throw new InvalidArgumentError(`loadModel: "${what}" must be an ArrayBuffer, a typed array or a Blob/File`);
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

async function headerOfBlob(blob) {
  const first8 = new Uint8Array(await blob.slice(0, 8).arrayBuffer());
  return new Uint8Array(await blob.slice(0, headerLength(first8)).arrayBuffer());
}

async function asText(x, what) {
  if (typeof x === 'string') return x;
  return new TextDecoder('utf-8', { fatal: false }).decode(await asBytes(x, what));
}

async function readDirectoryNode(dir, onProgress, signal, onWeightsHeader) {
  const { open, readFile, stat } = await import('node:fs/promises');
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const base = dir instanceof URL || String(dir).startsWith('file:') ? fileURLToPath(dir) : String(dir);
  const read = async (name) => {
    try {
      return await readFile(path.join(base, name), { signal });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (OPTIONAL.has(name) && e.code === 'ENOENT') return undefined;
      throw new ModelFormatError(`cannot read ${path.join(base, name)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
    }
  };
  const info = await stat(base).catch(() => null);
  if (!info?.isDirectory()) throw new ModelFormatError(`${base} is not a model directory (${MODEL_FILES.join(', ')})`);
  if (onWeightsHeader) {   // the header first: a model that cannot fit is refused before it is read
    const config = await read('config.json');
    const file = await open(path.join(base, 'model.safetensors')).catch(() => null);
    if (file) {
      try {
        const { size } = await file.stat();
        const first8 = new Uint8Array(8);
        await file.read(first8, 0, 8, 0);
        const prefix = new Uint8Array(Math.min(size, headerLength(first8)));
        await file.read(prefix, 0, prefix.length, 0);
        await onWeightsHeader({ config: config.toString('utf8'), prefix, size });
      } finally {
        await file.close();
      }
    }
  }
  const [config, weights, vocab, merges] = await Promise.all(MODEL_FILES.map(read));
  onProgress?.({ loaded: weights.length, total: weights.length });
  return { config: config.toString('utf8'), weights, vocab: vocab?.toString('utf8'), merges: merges?.toString('utf8') };
}

// --- a directory URL, with the Cache API

async function readDirectoryUrl(dir, onProgress, signal, cache, sha256, tokenizerFiles, onWeightsHeader) {
  const base = new URL(String(dir).endsWith('/') ? String(dir) : `${dir}/`, globalThis.location?.href);
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
    const cached = store && await readCached(store, base, onProgress, signal, tokenizerFiles, onWeightsHeader);
    if (cached) {
      try {
        await verifySha256(cached.weights, sha256, `${new URL('model.safetensors', base)} (cached)`);
      } catch (e) {
        await forget(store, base);
        throw e;
      }
      return cached;
    }
  }
  // All four downloads start at once (the weights are most of the time: none of them waits for
  // another), and are taken in order: the small files, then the weights. With a cache, the weights
  // stream into it while they are read (a clone of the response), and an entry for
  // model.safetensors therefore means the directory's other files are stored too. Anything that
  // fails leaves nothing in the cache.
  const files = cacheError ? { cacheError } : {};
  const order = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];
  let storing = null;
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
      if (store && !files.cacheError) storing = putOrFail(store, url, response.clone(), files);
      const onHeader = onWeightsHeader && ((prefix, size) => onWeightsHeader({ config: files.config, prefix, size }));
      files.weights = await readWithProgress(response, onProgress, signal, url, onHeader);
      await verifySha256(files.weights, sha256, String(url));   // before anything uses or keeps it
    }
    await storing;
  } catch (e) {
    downloads.abort(e);
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
async function download(url, signal, cancelled) {
  let response;
  try {
    response = await fetch(url, { signal });
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

// Streams a response into one buffer, reporting bytes as they arrive. With a Content-Length the
// buffer is allocated once and filled in place: a 500 MB download never needs twice its size, and
// a download that ends short of it (or breaks off) is an error, not a truncated model.
// onHeader(prefix, size): awaited once the safetensors header is in (the first chunks are held
// until then), before that buffer is allocated; what it throws cancels the download.
async function readWithProgress(response, onProgress, signal, url, onHeader) {
  const total = Number(response.headers.get('content-length')) || 0;
  // Compressed, the announced length is that of the compressed bytes: only a plain body can be held to it.
  const encoding = (response.headers.get('content-encoding') ?? 'identity').toLowerCase();
  const announced = encoding === 'identity' ? total : 0;
  let loaded = 0, reported = performance.now();
  onProgress?.({ loaded, total });
  const reader = response.body.getReader();
  let bytes;
  if (onHeader) {
    const head = await readHeader(reader, signal, url, announced);
    try {
      await onHeader(head, Math.max(total, head.length));
    } catch (e) {
      reader.cancel(e).catch(() => {});
      throw e;
    }
    bytes = new Uint8Array(Math.max(total, head.length));
    bytes.set(head);
    loaded = head.length;
  } else {
    bytes = new Uint8Array(total);
  }
  for (;;) {
    const { done, value } = await readChunk(reader, signal, url, loaded, announced);
    if (done) break;
    if (loaded + value.length > bytes.length) {   // no (or a wrong) Content-Length: grow
      const grown = new Uint8Array(Math.max(2 * bytes.length, loaded + value.length));
      grown.set(bytes.subarray(0, loaded));
      bytes = grown;
    }
    bytes.set(value, loaded);
    loaded += value.length;
    const now = performance.now();
    if (now - reported >= 50) {   // at most 20 reports a second: each may cross to the page and redraw
      reported = now;
      onProgress?.({ loaded, total: Math.max(total, loaded) });
    }
  }
  if (announced && loaded !== announced)
    throw new NetworkError(`cannot download ${url}: received ${loaded} bytes, the server announced ${announced}; nothing was cached`);
  onProgress?.({ loaded, total: Math.max(total, loaded) });
  return loaded === bytes.length ? bytes : bytes.slice(0, loaded);
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

// The first bytes of a safetensors download up to the end of its header (fewer if the body ends
// first), read from the stream.
async function readHeader(reader, signal, url, announced) {
  let head = new Uint8Array(0);
  while (head.length < headerLength(head)) {
    const chunk = await readChunk(reader, signal, url, head.length, announced);
    if (chunk.done) break;
    const grown = new Uint8Array(head.length + chunk.value.length);
    grown.set(head);
    grown.set(chunk.value, head.length);
    head = grown;
  }
  return head;
}

async function readCached(store, base, onProgress, signal, tokenizerFiles, onWeightsHeader) {
  const weights = await store.match(new URL('model.safetensors', base));
  if (!weights) return null;
  const files = { fromCache: true };
  for (const [i, name] of MODEL_FILES.entries()) {
    if (name === 'model.safetensors') continue;
    const response = await store.match(new URL(name, base));
    if (response) files[KEYS[i]] = await response.text();
    else if (!OPTIONAL.has(name)) return null;
  }
  tokenizerFiles(files);
  const onHeader = onWeightsHeader && ((prefix, size) => onWeightsHeader({ config: files.config, prefix, size }));
  files.weights = await readWithProgress(weights, onProgress, signal, undefined, onHeader);
  return files;
}

// --- what is in the cache, for a page that shows it

// -> [{url, bytes}]: the model directories in the cache, with their size.
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
export async function removeCachedModels(url = null, cache = true) {
  const store = await openExisting(cache);
  if (!store) return;
  if (url === null) {
    await caches.delete(cacheName(cache));
    return;
  }
  const base = new URL(String(url).endsWith('/') ? String(url) : `${url}/`, globalThis.location?.href);
  await Promise.all(MODEL_FILES.map((name) => store.delete(new URL(name, base))));
}

async function openExisting(cache) {
  const name = cacheName(cache);
  if (!name) throw new InvalidArgumentError('a cache name is needed');
  if (typeof caches !== 'object') throw new NotSupportedError('the Cache API is not available here (it needs a browser page or worker in a secure context: https or localhost)');
  return (await caches.has(name)) ? caches.open(name) : null;
}
