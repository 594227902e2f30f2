// A model from a URL (a Hugging Face-layout directory), downloaded once with progress in bytes and
// kept with the Cache API under each file's URL, so that the next visit reads it from disk. The
// files are handed to loadModel as Blobs: nothing is downloaded twice.
import { MODEL_FILES } from './model-files.mjs';

const CACHE = 'glassbox-models';
const SIZE_HEADER = 'x-glassbox-bytes';
const KEYS = ['config', 'weights', 'vocab', 'merges'];   // in MODEL_FILES order

export const cacheAvailable = typeof caches === 'object' && globalThis.isSecureContext !== false;

// What a person typed -> the directory URL (ending in '/'). Accepts a directory URL, a hub repository
// page (https://huggingface.co/owner/name, made .../resolve/main/), or "owner/name" for the hub.
export function modelDirectoryUrl(input, base = location.href) {
  const text = input.trim();
  if (!text) throw new Error('Enter the address of a model directory.');
  if (/^[\w.-]+(\/[\w.-]+)?$/.test(text) && !text.includes('..') && !/^[\w-]+\.[a-z]{2,}$/i.test(text))
    return `https://huggingface.co/${text}/resolve/main/`;
  let url;
  try {
    // "example.org/path" (a host without a scheme) means https://example.org/path.
    url = new URL(/^[\w-]+(\.[\w-]+)*\.[a-z]{2,}(:\d+)?(\/|$)/i.test(text) ? `https://${text}` : text, base);
  } catch {
    throw new Error(`“${text}” is not a web address.`);
  }
  if (url.protocol !== 'https:' && url.origin !== new URL(base).origin)
    throw new Error('Remote models are loaded over https:// only.');
  url.search = '';
  url.hash = '';
  const hub = /^(huggingface\.co|hf\.co)$/.test(url.hostname);
  let path = url.pathname;
  const file = MODEL_FILES.find((f) => path.endsWith(`/${f}`));
  if (file) path = path.slice(0, -file.length);
  if (hub && /^\/[^/]+(\/[^/]+)?\/?$/.test(path) && !path.includes('/resolve/')) path = `${path.replace(/\/$/, '')}/resolve/main/`;
  if (hub && /\/(tree|blob)\//.test(path)) path = path.replace(/\/(tree|blob)\//, '/resolve/');
  url.pathname = path.endsWith('/') ? path : `${path}/`;
  return url.href;
}

// Cached models: [{url, bytes}], only directories with all four files.
export async function listCached() {
  if (!cacheAvailable) return [];
  const cache = await caches.open(CACHE);
  const dirs = new Map();
  for (const request of await cache.keys()) {
    const name = MODEL_FILES.find((f) => request.url.endsWith(`/${f}`));
    if (!name) continue;
    const dir = request.url.slice(0, -name.length);
    const entry = dirs.get(dir) ?? { url: dir, bytes: 0, files: 0 };
    const response = await cache.match(request);
    entry.bytes += Number(response?.headers.get(SIZE_HEADER)) || 0;
    entry.files += 1;
    dirs.set(dir, entry);
  }
  return [...dirs.values()].filter((d) => d.files === MODEL_FILES.length).map(({ url, bytes }) => ({ url, bytes }));
}

// {config, weights, vocab, merges} as Blobs from the cache, or null when not (completely) cached.
export async function readCached(dir) {
  if (!cacheAvailable) return null;
  const cache = await caches.open(CACHE);
  const responses = await Promise.all(MODEL_FILES.map((f) => cache.match(dir + f)));
  if (responses.some((r) => !r)) return null;
  const blobs = await Promise.all(responses.map((r) => r.blob()));
  return Object.fromEntries(KEYS.map((k, i) => [k, blobs[i]]));
}

export async function removeCached(dir) {
  if (!cacheAvailable) return;
  const cache = await caches.open(CACHE);
  await Promise.all(MODEL_FILES.map((f) => cache.delete(dir + f)));
}

export async function clearCache() {
  if (cacheAvailable) await caches.delete(CACHE);
}

// Downloads the four files of dir. onProgress({file, loaded, total}) in bytes (total 0: unknown).
// Resolves with {files: {config, weights, vocab, merges} as Blobs, cacheError?}; the files are put
// in the cache only when all four arrived.
export async function download(dir, { onProgress, signal } = {}) {
  const blobs = [];
  for (const name of MODEL_FILES) blobs.push(await fetchFile(dir + name, name, onProgress, signal));
  let cacheError;
  if (cacheAvailable) {
    try {
      const cache = await caches.open(CACHE);
      for (let i = 0; i < MODEL_FILES.length; ++i) {
        await cache.put(dir + MODEL_FILES[i], new Response(blobs[i], {
          headers: { 'content-type': blobs[i].type || 'application/octet-stream', [SIZE_HEADER]: String(blobs[i].size) },
        }));
      }
    } catch (e) {
      cacheError = e;
      await removeCached(dir).catch(() => {});   // never leave a partial model in the cache
    }
  }
  return { files: Object.fromEntries(KEYS.map((k, i) => [k, blobs[i]])), cacheError };
}

async function fetchFile(url, name, onProgress, signal) {
  let response;
  try {
    response = await fetch(url, { signal, credentials: 'omit' });
  } catch (e) {
    if (signal?.aborted) throw new DOMException('The download was cancelled.', 'AbortError');
    throw new Error(`Cannot download ${url}: ${e.message} (is the address right, and does the server allow this page to read it?)`);
  }
  if (!response.ok) {
    throw new Error(`Cannot download ${url}: HTTP ${response.status}${response.status === 404 ? ` — a model directory needs ${MODEL_FILES.join(', ')}` : ''}${response.status === 401 ? ' — the repository may be private or gated' : ''}.`);
  }
  const total = Number(response.headers.get('content-length')) || 0;
  const type = response.headers.get('content-type') ?? '';
  const chunks = [];
  let loaded = 0;
  onProgress?.({ file: name, loaded, total });
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onProgress?.({ file: name, loaded, total });
  }
  return new Blob(chunks, { type });
}
