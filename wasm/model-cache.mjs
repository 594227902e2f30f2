// The Cache API's store of downloaded models (the `cache` option; download.mjs writes it): its name,
// and what is in it, for a page that shows it.

import { InvalidArgumentError, NotSupportedError } from './errors.mjs';
import { directoryUrl, MODEL_FILES } from './model-files.mjs';
import { formatValue } from './options.mjs';

export const DEFAULT_CACHE = 'glassbox-models';

// The Cache Storage name of the `cache` option (true: the default name), or null for no caching.
export function cacheName(cache) {
  if (cache === undefined || cache === false || cache === null) return null;
  if (cache === true) return DEFAULT_CACHE;
  if (typeof cache === 'string' && cache) return cache;
  throw new InvalidArgumentError(`loadModel: cache must be true or the name of a cache, got ${formatValue(cache)}`);
}

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
  return [...dirs.values()]
    .filter((d) => d.names.has('model.safetensors') && d.names.has('config.json'))
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

// A directory's files out of the store (after a failed or cancelled download, or a cached copy
// that is not the file asked for).
export async function forget(store, base) {
  await Promise.all(MODEL_FILES.map((name) => store.delete(new URL(name, base)))).catch(() => {});
}

async function openExisting(cache) {
  const name = cacheName(cache);
  if (!name) throw new InvalidArgumentError('a cache name is needed');
  if (typeof caches !== 'object')
    throw new NotSupportedError(
      'the Cache API is not available here (it needs a browser page or worker in a secure context: https or localhost)',
    );
  return (await caches.has(name)) ? caches.open(name) : null;
}
