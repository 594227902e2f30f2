// A model directory given as a path or a file: URL, read in Node: the small files whole, the weights
// in pieces into the engine (pourWeights).

import { ModelFormatError } from './errors.mjs';
import { MODEL_FILES, OPTIONAL, PIECE, pourWeights } from './model-files.mjs';
import { importNode, isNode } from './platform.mjs';

// Whether a directory source is read here as a path (Node, and not http(s)).
export const isLocalPath = (source) => isNode && !/^https?:/.test(String(source));

// A model directory given as a path or a file: URL, in Node: {base (the path), file(name)}, and the
// error for a file of it that cannot be read (the caller's signal's reason once it is aborted).
export async function nodeDirectory(dir, signal) {
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

export async function readDirectoryNode(dir, weights, tokenizerFiles) {
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
