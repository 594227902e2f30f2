// A model's files, and the weights' way into the engine, whatever they are read from (a download,
// the cache, a file in Node, a Blob or buffer): model.safetensors is never held whole: its bytes
// are handed on as they arrive to the sink that openWeights gives, the engine's streaming loader.
// The readers: model-source.mjs (the files given as they are), node-files.mjs (a path in Node),
// download.mjs (a URL, with the Cache API).

import { InvalidArgumentError, ModelFormatError } from './errors.mjs';

// The tokenizer is tokenizer.json where a directory has one (vocab.json and merges.txt are then
// not used), else vocab.json + merges.txt; a model with neither runs on ids only.
// tokenizer_config.json, chat_template.jinja and generation_config.json: the chat template, its
// special tokens and the generation defaults of an instruct model.
/** @type {readonly string[]} */
export const MODEL_FILES = [
  'config.json',
  'model.safetensors',
  'vocab.json',
  'merges.txt',
  'tokenizer.json',
  'tokenizer_config.json',
  'chat_template.jinja',
  'generation_config.json',
];
// in MODEL_FILES order: the keys of the files object loadModel takes
export const KEYS = [
  'config',
  'weights',
  'vocab',
  'merges',
  'tokenizerJson',
  'tokenizerConfig',
  'chatTemplate',
  'generationConfig',
];
export const OPTIONAL = new Set(MODEL_FILES.slice(2)); // only config.json and the weights are needed
// The files asked for on the chance that a directory has them (download.mjs): most have none.
export const ON_CHANCE = new Set(MODEL_FILES.slice(4));
// The small files, each read whole before the weights.
export const SMALL_FILES = MODEL_FILES.filter((name) => name !== 'model.safetensors');
// A file's key in the files object ('tokenizer.json' -> 'tokenizerJson').
export const keyOf = (name) => KEYS[MODEL_FILES.indexOf(name)];

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
export const MAX_BYTES = {
  'config.json': 2 ** 20,
  'vocab.json': 64 * 2 ** 20,
  'merges.txt': 64 * 2 ** 20,
  'tokenizer.json': 64 * 2 ** 20,
  'tokenizer_config.json': 64 * 2 ** 20,
  'chat_template.jinja': 64 * 2 ** 20,
  'generation_config.json': 64 * 2 ** 20,
  'model.safetensors.index.json': 16 * 2 ** 20,
};

// A sharded checkpoint's index: where the weights are when model.safetensors is not there.
export const INDEX = 'model.safetensors.index.json';

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

// A sharded checkpoint's index ({weight_map: {tensor: shard file}}): {map, names (the shards, each
// once, sorted by name as the C++ API's ShardIndex::files)}. Refused as ShardIndex::parse refuses
// it, with its messages (`where`: the index's path or address): text that is not JSON, no
// "weight_map" object, a value that is not the name of a file beside the index (nothing such is
// read), a map naming no tensor. The checks of a sharded checkpoint are written twice, here and in
// core/io/shard_index.cpp, so that the WebAssembly module links none of them (its size); the
// bad-input table's rows B74-B85 hold both to the same messages.
export function parseIndex(text, where = INDEX) {
  const fail = (problem) => new ModelFormatError(`${where}: ${problem}`);
  let json;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw fail(`not valid JSON (${e.message})`);
  }
  const map = json && typeof json === 'object' && !Array.isArray(json) ? json.weight_map : undefined;
  if (!map || typeof map !== 'object' || Array.isArray(map))
    throw fail('no "weight_map" object (a sharded checkpoint\'s index maps each tensor to its file)');
  const entries = Object.entries(map);
  if (!entries.length) throw fail('"weight_map" names no tensor');
  for (const [name, file] of entries)
    if (typeof file !== 'string' || file === '' || file === '.' || file === '..' || /[/\\\0]/.test(file))
      throw fail(
        `tensor ${JSON.stringify(name)} is mapped to ${JSON.stringify(file)}, not the name of a file beside the index`,
      );
  return { map, names: [...new Set(Object.values(map))].sort() };
}

// The error for a shard the index names that is not there (`where`: its path or address).
export const noShard = (where, how = 'no such file') =>
  new ModelFormatError(`${where}: ${how}: ${INDEX} names it as a shard of the checkpoint`);

// The shards' headers (heads[i]: shard i's first bytes through its header) as the header of one
// file whose data section is theirs one after the other: {header (its bytes, for the engine's
// streaming loader), sizes (each shard's data bytes)}. Checked against the index both ways first,
// as SafeTensors::join does: every tensor of a shard is one the index places there, and every
// tensor the index names is in its shard. labels[i]: shard i's name in errors; where: the index's.
export function joinShards(heads, { map, names }, labels, where = INDEX) {
  const joined = {},
    sizes = [];
  let base = 0;
  heads.forEach((head, i) => {
    let header;
    try {
      header = JSON.parse(new TextDecoder().decode(head.subarray(8, headerLength(head))));
    } catch (e) {
      throw new ModelFormatError(`${labels[i]}: header is not valid JSON (${e.message})`);
    }
    let size = 0;
    for (const [name, info] of Object.entries(header ?? {})) {
      if (name === '__metadata__') continue;
      const placed = Object.hasOwn(map, name) ? map[name] : undefined;
      if (placed === undefined)
        throw new ModelFormatError(
          `${labels[i]}: tensor ${JSON.stringify(name)} is not in the index ${where} (are the files from one checkpoint?)`,
        );
      if (placed !== names[i])
        throw new ModelFormatError(
          `${labels[i]}: tensor ${JSON.stringify(name)} is here, but the index ${where} places it in ${placed}`,
        );
      const offsets = info?.data_offsets;
      // Offsets that are not two integers are left as they are: the engine says what is wrong.
      if (Array.isArray(offsets) && offsets.length === 2 && offsets.every(Number.isSafeInteger)) {
        size = Math.max(size, offsets[1]);
        joined[name] = { ...info, data_offsets: [offsets[0] + base, offsets[1] + base] };
      } else joined[name] = info;
    }
    sizes.push(size);
    base += size;
  });
  for (const [name, file] of Object.entries(map))
    if (!Object.hasOwn(joined, name))
      throw new ModelFormatError(
        `${where}: names tensor ${JSON.stringify(name)} in ${file}, which has no such tensor (is a shard from another checkpoint?)`,
      );
  let text = JSON.stringify(joined);
  text += ' '.repeat((8 - ((new TextEncoder().encode(text).length + 8) % 8)) % 8);
  const json = new TextEncoder().encode(text);
  const header = new Uint8Array(8 + json.length);
  new DataView(header.buffer).setBigUint64(0, BigInt(json.length), true);
  header.set(json, 8);
  return { header, sizes };
}

// Reads a sharded checkpoint into the engine as pourWeights reads one file: shards [{name (in
// errors), size (known once head() is done), head(), reader()}] in the index's order (parsed:
// parseIndex's); head() -> the shard's first bytes through its header, reader() -> a reader of the
// whole file ({read(), cancel()}). The engine is given the shards' headers joined (joinShards),
// then each shard's data after its header; each shard must be exactly as long as its header says,
// and its header must not change between the two reads.
export async function pourShards(
  shards,
  { config, parsed, where, openWeights, onProgress, signal, want, phase = 'read' },
) {
  if (want)
    throw new InvalidArgumentError(
      'loadModel: sha256 is the SHA-256 of one model.safetensors; a sharded checkpoint has none (leave it out)',
    );
  const report = (loaded, total, step = phase) => onProgress?.({ phase: step, file: INDEX, loaded, total });
  const heads = [];
  for (const shard of shards) heads.push(await shard.head());
  const total = shards.reduce((n, s) => n + s.size, 0);
  report(0, total);
  const { header, sizes } = joinShards(
    heads,
    parsed,
    shards.map((s) => s.name),
    where,
  );
  const sink = await openWeights({ config, prefix: header, size: header.length + sizes.reduce((a, b) => a + b, 0) });
  sink.write(header);
  let loaded = 0,
    reported = performance.now();
  for (const [i, shard] of shards.entries()) {
    const head = heads[i],
      end = head.length + sizes[i];
    const reader = await shard.reader();
    let at = 0;
    try {
      for (;;) {
        signal?.throwIfAborted();
        const piece = await reader.read();
        if (piece.done) break;
        const bytes = piece.value;
        if (at + bytes.length > end)
          throw new ModelFormatError(
            `${shard.name}: ${at + bytes.length - end} bytes after the last tensor belong to no tensor`,
          );
        const inHead = Math.max(0, Math.min(bytes.length, head.length - at));
        for (let k = 0; k < inHead; k++)
          if (bytes[k] !== head[at + k])
            throw new ModelFormatError(
              `${shard.name}: its header changed while the file was being read (was it replaced?)`,
            );
        if (inHead < bytes.length) sink.write(bytes.subarray(inHead));
        at += bytes.length;
        loaded += bytes.length;
        if (performance.now() - reported >= 50) {
          reported = performance.now();
          report(loaded, Math.max(total, loaded));
        }
      }
    } catch (e) {
      reader.cancel?.(e)?.catch?.(() => {});
      throw e;
    }
    if (at < end)
      throw new ModelFormatError(`${shard.name}: the file ends after ${at} of its ${end} bytes (file truncated?)`);
  }
  report(loaded, loaded);
  report(loaded, loaded, 'convert');
  return loaded;
}

// {prefix, size} for estimateModel: the shards' headers joined (joinShards), and the bytes of all
// the shards' files. shards, parsed, where: as pourShards'.
export async function shardHeads(shards, parsed, where) {
  const heads = [];
  for (const shard of shards) heads.push(await shard.head());
  const { header } = joinShards(
    heads,
    parsed,
    shards.map((s) => s.name),
    where,
  );
  return { prefix: header, size: shards.reduce((n, s) => n + s.size, 0) };
}

// The shards given in a files object: `weights` an array of buffers or Blobs/Files in the
// index's order (a File whose name is another shard's is refused).
export function givenShards(weights, names, signal) {
  if (weights.length !== names.length)
    throw new ModelFormatError(
      `${INDEX} names ${names.length} shards (${names.join(', ')}), the files object's "weights" has ${weights.length}`,
    );
  return names.map((name, i) => {
    const x = weights[i];
    if (typeof x?.name === 'string' && x.name !== name)
      throw new ModelFormatError(
        `the files object's "weights"[${i}] is the file ${x.name}; ${INDEX} names ${name} there (give the shards in the order of their names)`,
      );
    const blob = typeof Blob !== 'undefined' && x instanceof Blob;
    return {
      name: `"weights"[${i}] (${name})`,
      size: byteLength(x),
      head: async () => {
        const n = headerLength(await asBytes(blob ? x.slice(0, 8) : x, 'weights'));
        return (await asBytes(blob ? x.slice(0, n) : x, 'weights')).subarray(0, n);
      },
      reader: async () => piecesOf(x, signal),
    };
  });
}
