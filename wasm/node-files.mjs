// A model directory given as a path or a file: URL, read in Node: the small files whole, the weights
// in pieces into the engine (pourWeights).

import { GlassboxError, ModelFormatError } from './errors.mjs';
import {
  headerLength,
  INDEX,
  keyOf,
  MAX_BYTES,
  MODEL_FILES,
  noShard,
  OPTIONAL,
  PIECE,
  parseIndex,
  pourShards,
  pourWeights,
  SMALL_FILES,
  tooLarge,
} from './model-files.mjs';
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
    if (e instanceof GlassboxError) return e; // already says what is wrong with which file
    return new ModelFormatError(`cannot read ${file(name)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  };
  return { base, file, cannotRead };
}

// A file of a model directory opened for reading as the CLI opens it (core/io/mapped_file.cpp): a
// regular file, or a ModelFormatError "PATH: not a regular file". It is checked before it is opened
// (opening a FIFO waits for a writer, holding one of Node's I/O threads, and process.exit with it),
// then opened without waiting and checked again (it may have been replaced in between). Other
// failures (no such file, no permission, a loop of symbolic links) are Node's errors, thrown as
// they are. -> {file (a FileHandle), size}.
export async function openRegular(path) {
  const { constants } = await importNode('fs');
  const { open, stat } = await importNode('fs/promises');
  const notRegular = () => new ModelFormatError(`${path}: not a regular file`);
  if (!(await stat(path)).isFile()) throw notRegular();
  const file = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  const info = await file.stat().catch(async (e) => {
    await file.close();
    throw e;
  });
  if (!info.isFile()) {
    await file.close();
    throw notRegular();
  }
  return { file, size: info.size };
}

// A small file of a model directory (config.json, tokenizer.json...: `name`) read whole, as a
// Buffer: a regular file (openRegular) of at most MAX_BYTES[name] bytes, refused before it is read
// when larger, and read no further than that when it grows while it is read.
export async function readSmallFile(path, name, signal) {
  const max = MAX_BYTES[name];
  const { file, size } = await openRegular(path);
  try {
    if (size > max) throw tooLarge(path, name, size);
    const pieces = [];
    let total = 0;
    for (;;) {
      signal?.throwIfAborted();
      // What is left of the size it had, and 64 KB more (it may have grown, or, as files in /proc
      // do, say 0): the loop ends at most a piece past the cap. (Pieces of whole 64 KB: some
      // files of /proc read only in multiples of 8 bytes.)
      const piece = Buffer.allocUnsafe(Math.min(Math.max(size - total, 0) + 2 ** 16, PIECE));
      const { bytesRead } = await file.read(piece, 0, piece.length, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > max) throw tooLarge(path, name, total, true);
      pieces.push(piece.subarray(0, bytesRead));
    }
    return Buffer.concat(pieces, total);
  } finally {
    await file.close();
  }
}

export async function readDirectoryNode(dir, weights, tokenizerFiles) {
  const { stat } = await importNode('fs/promises');
  const { signal } = weights;
  const { base, file: pathOf, cannotRead } = await nodeDirectory(dir, signal);
  const fail = (name, e) => {
    throw cannotRead(name, e);
  };
  const read = async (name) => {
    try {
      return (await readSmallFile(pathOf(name), name, signal)).toString('utf8');
    } catch (e) {
      if (OPTIONAL.has(name) && e.code === 'ENOENT' && !signal?.aborted) return undefined;
      fail(name, e);
    }
  };
  const info = await stat(base).catch(() => null);
  if (!info?.isDirectory()) throw new ModelFormatError(`${base} is not a model directory (${MODEL_FILES.join(', ')})`);
  const texts = await Promise.all(SMALL_FILES.map(read));
  const files = Object.fromEntries(SMALL_FILES.map((name, i) => [keyOf(name), texts[i]]));
  const { config } = files;
  tokenizerFiles(files);
  const sharded = await nodeShards(pathOf, signal);
  if (sharded) {
    try {
      await pourShards(sharded.shards, { ...weights, config, parsed: sharded.parsed, where: sharded.where });
    } finally {
      await sharded.close();
    }
    return files;
  }
  const name = pathOf('model.safetensors');
  const { file, size } = await openRegular(name).catch((e) => fail('model.safetensors', e));
  try {
    const reader = fileReader(file, size, (e) => fail('model.safetensors', e), signal);
    await pourWeights(reader, { ...weights, config, size, what: name });
  } finally {
    await file.close();
  }
  return files;
}

// The weights in pieces, each read into the same buffer and copied on by the sink before the next.
// fail(e): throws the error for a read that failed.
function fileReader(file, size, fail, signal) {
  const buffer = new Uint8Array(Math.min(PIECE, Math.max(size, 1)));
  let at = 0;
  return {
    async read() {
      signal?.throwIfAborted();
      const { bytesRead } = await file.read(buffer, 0, buffer.length, at).catch(fail);
      at += bytesRead;
      return bytesRead ? { done: false, value: buffer.subarray(0, bytesRead) } : { done: true };
    },
  };
}

// A directory without model.safetensors whose weights are the shards its index names: {parsed
// (parseIndex's), where (the index's path), shards (for pourShards, each opened: a regular file),
// close()}; null when model.safetensors is there or there is no index (the single file's errors
// then say what is missing).
export async function nodeShards(pathOf, signal) {
  const { stat } = await importNode('fs/promises');
  const exists = (name) =>
    stat(pathOf(name)).then(
      () => true,
      () => false,
    );
  if ((await exists('model.safetensors')) || !(await exists(INDEX))) return null;
  const index = (await readSmallFile(pathOf(INDEX), INDEX, signal)).toString('utf8');
  const where = pathOf(INDEX);
  const parsed = parseIndex(index, where);
  const names = parsed.names;
  const opened = [];
  const close = () => Promise.all(opened.map(({ file }) => file.close()));
  try {
    for (const name of names) {
      const path = pathOf(name);
      opened.push(
        await openRegular(path).catch((e) => {
          throw e.code === 'ENOENT' ? noShard(path) : e;
        }),
      );
    }
  } catch (e) {
    await close();
    throw e;
  }
  const shards = names.map((name, i) => {
    const { file, size } = opened[i];
    const path = pathOf(name);
    const read = async (n) => {
      const bytes = new Uint8Array(Math.min(n, size));
      await file.read(bytes, 0, bytes.length, 0);
      return bytes;
    };
    return {
      name: path,
      size,
      head: async () => read(headerLength(await read(8))),
      reader: async () =>
        fileReader(
          file,
          size,
          (e) => {
            throw signal?.aborted ? signal.reason : new ModelFormatError(`cannot read ${path}: ${e.message}`);
          },
          signal,
        ),
    };
  });
  return { parsed, where, shards, close };
}
