// Models from a URL (a Hugging Face-layout directory): the address a person typed, made a directory
// URL; and the cache they are kept in. The engine's worker downloads a model itself (progress in
// bytes) and keeps it with the Cache API (loadModel's { cache }), so the next visit reads it from
// disk; the page only lists and removes what is cached.
import { hubDirectoryUrl, listCachedModels, MODEL_FILES, removeCachedModels } from '../dist/glassbox.mjs';

export const cacheAvailable = typeof caches === 'object' && globalThis.isSecureContext !== false;

// What a person typed -> the directory URL (ending in '/'). Accepts a directory URL, a hub repository
// page (https://huggingface.co/owner/name, made .../resolve/main/), or "owner/name" for the hub.
export function modelDirectoryUrl(input, base = location.href) {
  const text = input.trim();
  if (!text) throw new Error('Enter the address of a model directory.');
  // A hub id, "owner/name" or just "name" ("gpt2"), but not a host name ("example.org").
  if (/^[\w.-]+(\/[\w.-]+)?$/.test(text) && !text.includes('..') && !/^[\w-]+\.[a-z]{2,}$/i.test(text))
    return hubDirectoryUrl(`https://huggingface.co/${text}`);
  let url;
  try {
    // "example.org/path" (a host without a scheme) means https://example.org/path.
    url = new URL(/^[\w-]+(\.[\w-]+)*\.[a-z]{2,}(:\d+)?(\/|$)/i.test(text) ? `https://${text}` : text, base);
  } catch {
    throw new Error(`“${text}” is not a web address.`);
  }
  // http:// only from this page's origin or this computer (loopback addresses count as secure).
  const loopback = url.protocol === 'http:' && /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname);
  if (url.protocol !== 'https:' && url.origin !== new URL(base).origin && !loopback)
    throw new Error('Remote models are loaded over https:// only (or http:// from this computer).');
  const hub = hubDirectoryUrl(url); // the API's rule for the hub's pages
  if (hub) return hub;
  url.search = '';
  url.hash = '';
  let path = url.pathname;
  const file = MODEL_FILES.find((f) => path.endsWith(`/${f}`));
  if (file) path = path.slice(0, -file.length);
  url.pathname = path.endsWith('/') ? path : `${path}/`;
  return url.href;
}

// Cached models: [{url, bytes}].
export const listCached = () => (cacheAvailable ? listCachedModels() : Promise.resolve([]));
export const removeCached = (dir) => (cacheAvailable ? removeCachedModels(dir) : Promise.resolve());
export const clearCache = () => (cacheAvailable ? removeCachedModels() : Promise.resolve());
