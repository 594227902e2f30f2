// A model directory at a URL: its files downloaded (all at once, the weights streamed into the
// engine with progress), and with the `cache` option kept in the Cache API and read from there
// next time (model-cache.mjs). Errors say what went wrong with which address.

import { ModelFormatError, NetworkError, NotSupportedError } from './errors.mjs';
import {
  concat,
  directoryUrl,
  headerLength,
  INDEX,
  KEYS,
  MAX_BYTES,
  MODEL_FILES,
  noShard,
  ON_CHANCE,
  OPTIONAL,
  parseIndex,
  pourShards,
  pourWeights,
  SMALL_FILES,
  tooLarge,
} from './model-files.mjs';
import { forget } from './model-cache.mjs';

export async function readDirectoryUrl(dir, weights, cache, tokenizerFiles) {
  const { signal, want } = weights;
  const base = directoryUrl(dir);
  let store = null,
    cacheError;
  if (cache) {
    if (typeof caches !== 'object') {
      throw new NotSupportedError(
        'the Cache API is not available here (it needs a browser page or worker in a secure context: https or localhost); load without { cache }',
      );
    }
    try {
      store = await caches.open(cache);
    } catch (e) {
      // storage blocked (a privacy setting): the model loads, uncached
      cacheError = `the cache could not be opened (${e?.message ?? e}); the model will be downloaded again next time`;
    }
    const cached =
      store &&
      (await readCached(store, base, weights, tokenizerFiles).catch(async (e) => {
        if (!(e instanceof ModelFormatError) || signal?.aborted) throw e;
        await forget(store, base); // a cached copy that is not the file asked for, or broken
        throw e;
      }));
    if (cached) return cached;
  }
  // All the downloads start at once (the weights are most of the time: none of them waits for
  // another), and are taken in order: the small files, then the weights. With a cache, the weights
  // go into it piece by piece as the engine takes them, and the entry is complete only once every
  // check has passed: an entry for model.safetensors means the directory's other files are stored
  // too. Anything that fails leaves nothing in the cache.
  const files = cacheError ? { cacheError } : {};
  const order = [...SMALL_FILES, 'model.safetensors'];
  let storing = null,
    writer = null;
  // The downloads' own signal: a failure here also stops the copy streaming into the cache.
  const downloads = new AbortController();
  const stop = () => downloads.abort(signal.reason);
  signal?.addEventListener('abort', stop, { once: true });
  const responses = order.map((name) =>
    download(new URL(name, base), downloads.signal, signal, undefined, ON_CHANCE.has(name)),
  );
  for (const r of responses) r.catch(() => {}); // each is awaited below, unless an earlier one failed
  try {
    for (const [i, name] of order.entries()) {
      const url = new URL(name, base);
      if (name === 'model.safetensors') tokenizerFiles(files); // the small files are in
      const response = await responses[i];
      const sharded = !response && name === 'model.safetensors' && (await urlShards(base, signal));
      if (sharded) {
        // Each shard is downloaded in turn after every header has been read; none is cached.
        if (store && !files.cacheError)
          files.cacheError = 'a sharded checkpoint is not kept in the cache; it will be downloaded again next time';
        await pourShards(sharded.shards, { ...weights, ...sharded, config: files.config, phase: 'download' });
        continue;
      }
      if (!response) {
        if (!OPTIONAL.has(name))
          throw new NetworkError(
            `cannot download ${url}: HTTP 404 (a model directory needs config.json and model.safetensors or ${INDEX})`,
          );
        continue;
      }
      if (name !== 'model.safetensors') {
        const bytes = await readSmallBody(response, url, name, signal);
        files[KEYS[MODEL_FILES.indexOf(name)]] = new TextDecoder().decode(bytes);
        const headers = {
          'content-type': response.headers.get('content-type') ?? 'application/octet-stream',
          'content-length': String(bytes.length),
        };
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
        if (length && (response.headers.get('content-encoding') ?? 'identity') === 'identity')
          headers['content-length'] = length;
        storing = putOrFail(store, url, new Response(readable, { headers }), files);
        onPiece = async (piece) => {
          await writer.ready;
          writer.write(piece).catch(() => {}); // (a failure shows in storing)
        };
      }
      await readWithProgress(response, { ...weights, config: files.config, url, onPiece, phase: 'download' });
      await writer?.close(); // the size and the SHA-256 are right: the cache's copy may be complete
    }
    await storing;
  } catch (e) {
    downloads.abort(e);
    await writer?.abort(e).catch(() => {});
    await storing?.catch(() => {});
    if (store) await forget(store, base); // after the copy into the cache has stopped
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

// Response, or null for a 404 (an optional file may be missing). signal stops the download;
// cancelled, the caller's signal: its reason is what the caller sees. onChance: the file is asked
// for on the chance that the directory has it (ON_CHANCE): a request that fails, or is refused
// (HTTP 401, 403), is taken as its absence too, as a server of another origin may answer a
// missing file without the CORS headers that would let the page read its 404.
export async function download(url, signal, cancelled, headers = undefined, onChance = false) {
  let response;
  try {
    response = await fetch(url, { signal, headers });
  } catch (e) {
    if (cancelled?.aborted) throw cancelled.reason;
    if (onChance && !signal?.aborted) return null;
    throw new NetworkError(
      `cannot download ${url}: ${e.message} (is the address right, and does the server allow this page to read it?)`,
      { cause: e },
    );
  }
  if (response.status === 404) return null;
  if (onChance && (response.status === 401 || response.status === 403)) {
    response.body?.cancel().catch(() => {});
    return null;
  }
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
    throw new NetworkError(
      `cannot download ${url}: received ${loaded} bytes, the server announced ${announced}; nothing was cached`,
    );
}

// The body of a small file's response (config.json, tokenizer.json...: `name`) as bytes,
// refused as the CLI refuses a file larger than MAX_BYTES[name] (model-files.mjs): by its
// Content-Length before reading any of it (compressed, that is already more than the cap allows),
// and else as soon as what has arrived passes the cap, without reading the rest.
export async function readSmallBody(response, url, name, signal) {
  const max = MAX_BYTES[name];
  const announced = Number(response.headers.get('content-length'));
  if (announced > max) {
    response.body?.cancel().catch(() => {});
    throw tooLarge(url, name, announced);
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const pieces = [];
  let total = 0;
  for (;;) {
    const { done, value } = await readChunk(reader, signal, url, total, announced);
    if (done) break;
    total += value.length;
    if (total > max) {
      reader.cancel().catch(() => {});
      throw tooLarge(url, name, total, true);
    }
    pieces.push(value);
  }
  const bytes = new Uint8Array(total);
  for (let i = 0, at = 0; i < pieces.length; at += pieces[i++].length) bytes.set(pieces[i], at);
  return bytes;
}

// The next chunk of a download ({done, value}); a broken connection is a NetworkError that says
// how far it got (loaded of announced bytes; 0: not announced), a cancel the caller's reason.
async function readChunk(reader, signal, url, loaded, announced) {
  signal?.throwIfAborted();
  try {
    return await reader.read();
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw new NetworkError(
      `cannot download ${url}: the connection broke after ${loaded} of ${announced || 'an unknown number of'} bytes (${e.message}); nothing was cached`,
      { cause: e },
    );
  }
}

async function readCached(store, base, weights, tokenizerFiles) {
  const url = new URL('model.safetensors', base);
  const cached = await store.match(url);
  if (!cached) return null;
  const files = { fromCache: true };
  const { signal } = weights;
  for (const [i, name] of MODEL_FILES.entries()) {
    if (name === 'model.safetensors') continue;
    const where = new URL(name, base);
    const response = await store.match(where);
    if (response)
      files[KEYS[i]] = new TextDecoder().decode(await readSmallBody(response, `${where} (cached)`, name, signal));
    else if (!OPTIONAL.has(name)) return null;
  }
  tokenizerFiles(files);
  await readWithProgress(cached, { ...weights, config: files.config, url: `${url} (cached)` });
  return files;
}

// The first bytes of the safetensors file at `url` through the end of its header, and the file's
// size: {prefix, size}, or null for a 404. One ranged request for the first 64 KB (a second one
// for a longer header); a server that ignores ranges sends the whole file, of which only the
// start is read.
export async function fetchHead(url, signal) {
  let prefix = new Uint8Array(0),
    size = 0;
  for (let want = 64 * 1024; prefix.length < headerLength(prefix) && prefix.length < want;) {
    const response = await download(url, signal, signal, { range: `bytes=${prefix.length}-${want - 1}` });
    if (!response) return null;
    const ranged = response.status === 206;
    size = ranged
      ? Number(response.headers.get('content-range')?.split('/')[1]) || 0
      : Number(response.headers.get('content-length')) || 0;
    const reader = response.body.getReader();
    const start = ranged ? prefix.length : 0;
    let got = ranged ? prefix : new Uint8Array(0);
    // A range is read to its end; a whole file (a server without ranges) only to its header's.
    while (ranged || got.length < headerLength(got)) {
      const { done, value } = await readChunk(reader, signal, url, got.length, 0);
      if (done) break;
      got = concat(got, value);
    }
    if (!ranged) reader.cancel().catch(() => {});
    prefix = got;
    if (!ranged || got.length === start) break; // the whole file's start was read, or it ended
    want = headerLength(prefix);
  }
  return { prefix: prefix.subarray(0, headerLength(prefix)), size };
}

// A directory at a URL whose weights are a sharded checkpoint: {index (its text), shards (for
// pourShards: each shard's header from a ranged request, then the whole file downloaded when its
// turn comes), parsed (parseIndex's), where (the index's address)}; null when there is no index
// (HTTP 404).
export async function urlShards(base, signal) {
  const where = new URL(INDEX, base);
  const response = await download(where, signal, signal);
  if (!response) return null;
  const index = new TextDecoder().decode(await readSmallBody(response, where, INDEX, signal));
  const parsed = parseIndex(index, String(where));
  const shards = parsed.names.map((name) => {
    const url = new URL(name, base);
    const shard = {
      name: String(url),
      size: 0,
      async head() {
        const head = await fetchHead(url, signal);
        if (!head) throw noShard(url, 'no such file (HTTP 404)');
        shard.size = head.size;
        return head.prefix;
      },
      async reader() {
        const file = await download(url, signal, signal);
        if (!file) throw noShard(url, 'no such file (HTTP 404)');
        const reader = file.body.getReader();
        let loaded = 0;
        return {
          async read() {
            const piece = await readChunk(reader, signal, url, loaded, 0);
            loaded += piece.value?.length ?? 0;
            return piece;
          },
          cancel: (e) => reader.cancel(e),
        };
      },
    };
    return shard;
  });
  return { shards, parsed, where: String(where) };
}
