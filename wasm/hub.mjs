// Hugging Face hub ids and pages, as people name a model, -> the directory its files download from.

import { INDEX, MODEL_FILES } from './model-files.mjs';

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
    return null; // a relative path or URL
  }
  if (url.protocol !== 'https:' || !/^(huggingface\.co|hf\.co)$/.test(url.hostname)) return null;
  let path = url.pathname.replace(/\/(tree|blob)\//, '/resolve/');
  const file = [...MODEL_FILES, INDEX].find((f) => path.endsWith(`/${f}`));
  if (file) path = path.slice(0, -file.length);
  if (/^\/[^/]+(\/[^/]+)?\/?$/.test(path) && !path.includes('/resolve'))
    path = `${path.replace(/\/$/, '')}/resolve/main/`;
  return `https://huggingface.co${path.endsWith('/') ? path : `${path}/`}`;
}
