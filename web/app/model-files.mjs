// A model from local files: the four files of a Hugging Face-layout directory, picked with a file
// input (the files, or their folder) or dropped on the page (the files, or their folder).

import { MODEL_FILES } from '../dist/glassbox.mjs';

// files: File[] (any extra files are ignored) -> {files: {config, weights, vocab, merges}, name}.
// Throws an Error naming what is missing.
export function pickModelFiles(files, folder = null) {
  const byName = new Map();
  for (const f of files) byName.set(f.name, f);
  let weights = byName.get('model.safetensors');
  if (!weights) {
    const any = files.filter((f) => f.name.endsWith('.safetensors'));
    if (any.length === 1) [weights] = any;
  }
  const picked = {
    config: byName.get('config.json'),
    weights,
    vocab: byName.get('vocab.json'),
    merges: byName.get('merges.txt'),
  };
  const missing = MODEL_FILES.filter((_, i) => !Object.values(picked)[i]);
  if (missing.length) {
    const got = files.length
      ? files
          .map((f) => f.name)
          .slice(0, 6)
          .join(', ') + (files.length > 6 ? ', …' : '')
      : 'nothing';
    throw new Error(
      `A model needs config.json, model.safetensors, vocab.json and merges.txt; ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing (got: ${got}).`,
    );
  }
  return { files: picked, name: folder || files[0]?.webkitRelativePath?.split('/')[0] || 'local files' };
}

// The files of a drop: plain files, or the files at the top of a dropped folder.
export async function filesFromDataTransfer(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? [])
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.())
    .filter(Boolean);
  if (!entries.length) return { files: Array.from(dataTransfer.files ?? []), folder: null };
  const files = [];
  let folder = null;
  for (const entry of entries) {
    if (entry.isFile) files.push(await new Promise((ok, fail) => entry.file(ok, fail)));
    else if (entry.isDirectory) {
      folder ??= entry.name;
      for (const child of await readDirectory(entry)) {
        if (child.isFile) files.push(await new Promise((ok, fail) => child.file(ok, fail)));
      }
    }
  }
  return { files, folder };
}

async function readDirectory(dir) {
  const reader = dir.createReader(),
    all = [];
  for (;;) {
    // readEntries returns the entries in batches, then an empty one
    const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) return all;
    all.push(...batch);
  }
}
