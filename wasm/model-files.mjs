// A model's files, and the weights' way into the engine, whatever they are read from (a download,
// the cache, a file in Node, a Blob or buffer): model.safetensors is never held whole: its bytes
// are handed on as they arrive to the sink that openWeights gives, the engine's streaming loader.
// The readers: model-source.mjs (the files given as they are), node-files.mjs (a path in Node),
// download.mjs (a URL, with the Cache API).

import { InvalidArgumentError, ModelFormatError } from './errors.mjs';

/** @type {readonly string[]} */
export const MODEL_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
export const KEYS = ['config', 'weights', 'vocab', 'merges']; // in MODEL_FILES order
export const OPTIONAL = new Set(['vocab.json', 'merges.txt']); // a model without them runs on ids only

// Throws unless the SHA-256 the sink computed is `want` (lower-case hex); nothing to do without one.
function verifySha256(sink, want, what) {
  if (!want) return;
  const got = sink.sha256();
  if (got !== want)
    throw new ModelFormatError(
      `${what} has SHA-256 ${got}, not the ${want} that was asked for: it is not the expected file (nothing was cached)`,
    );
}

// The most bytes each small file may have, the CLI's and the C++ API's rules (config.json:
// core/model/model_loader.cpp; vocab.json and merges.txt: core/io/mapped_file.h's read_file), so
// that a device such as /dev/zero, a FIFO's endless stream or a huge sparse file is refused before
// it is read, whatever it comes from (a path, a download, a Blob or buffer). model.safetensors
// has no cap: it is streamed into the engine, which plans the load from its header.
export const MAX_BYTES = { 'config.json': 2 ** 20, 'vocab.json': 64 * 2 ** 20, 'merges.txt': 64 * 2 ** 20 };

// The error for `what` (a path, an address, a file given), of `size` bytes, larger than `name`'s
// cap; atLeast: the size is only what has been read so far (a stream without a length, a file
// that grew), which is past the cap.
export function tooLarge(what, name, size, atLeast = false) {
  const is = `is ${atLeast ? 'at least ' : ''}${size} bytes`;
  return new ModelFormatError(`${what}: ${is}, more than the ${MAX_BYTES[name]} allowed for this file`);
}

export function byteLength(x) {
  return x?.byteLength ?? x?.size ?? 0;
}

// How much of a file is read at a time: large enough that a read's overhead does not count, small
// enough that the piece is nothing beside the model.
export const PIECE = 4 * 2 ** 20;

// A reader ({read(): {done, value}}) of the weights given as bytes or as a Blob/File, in pieces.
export function piecesOf(x, signal) {
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
      const value = bytes.subarray(at, at + PIECE); // a view: no copy
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
export async function pourWeights(
  reader,
  { config, size, openWeights, onProgress, signal, want, what, next, onPiece, phase = 'read' },
) {
  const report = (loaded, total) => onProgress?.({ phase, file: 'model.safetensors', loaded, total });
  next ??= async () => {
    signal?.throwIfAborted();
    return reader.read();
  };
  let loaded = 0,
    reported = performance.now();
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
    if (now - reported >= 50) {
      // at most 20 reports a second: each may cross to the page and redraw
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
  verifySha256(sink, want, what); // before anything uses or keeps the model
  report(loaded, Math.max(size, loaded));
  // Every byte is in (and converted as it came): what is left is the engine making the model.
  onProgress?.({ phase: 'convert', file: 'model.safetensors', loaded, total: loaded });
  return loaded;
}

// a and b, one after the other, in a new array.
export function concat(a, b) {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

// A model directory's address, ending with "/" (relative: to the page's).
export const directoryUrl = (dir) =>
  new URL(String(dir).endsWith('/') ? String(dir) : `${dir}/`, globalThis.location?.href);

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

export async function asBytes(x, what) {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof Blob !== 'undefined' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
  throw new InvalidArgumentError(`loadModel: "${what}" must be an ArrayBuffer, a typed array or a Blob/File`);
}

const isBytes = (x) =>
  x instanceof ArrayBuffer || ArrayBuffer.isView(x) || (typeof Blob !== 'undefined' && x instanceof Blob);

// Throws (a ModelFormatError) if x, a small file given as bytes or a Blob/File as `what`, has more
// bytes than `name`'s cap (MAX_BYTES); a string is taken as it is (it is in memory already).
export function checkSmall(x, what, name) {
  if (isBytes(x) && byteLength(x) > MAX_BYTES[name]) throw tooLarge(`"${what}" (${name})`, name, byteLength(x));
}

// A small file given as a string, or as bytes or a Blob/File (refused before it is read when larger
// than its cap), as text.
export async function asText(x, what, name) {
  if (typeof x === 'string') return x;
  if (!isBytes(x))
    throw new InvalidArgumentError(`"${what}" must be a string, an ArrayBuffer, a typed array or a Blob/File`);
  checkSmall(x, what, name);
  return new TextDecoder('utf-8', { fatal: false }).decode(await asBytes(x, what));
}
