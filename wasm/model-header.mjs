// A model's size before it is loaded (estimateModel, and the engine's check that a model fits):
// config.json and the header of model.safetensors, without the rest of the weights.

import { checkSource } from './model-source.mjs';
import { download, fetchHead, readSmallBody, urlShards } from './download.mjs';
import {
  asBytes,
  asText,
  directoryUrl,
  givenShards,
  headerLength,
  INDEX,
  MODEL_FILES,
  parseIndex,
  shardHeads,
} from './model-files.mjs';
import { isLocalPath, nodeDirectory, nodeShards, openRegular, readSmallFile } from './node-files.mjs';
import { NetworkError } from './errors.mjs';

// -> {config: string, prefix: Uint8Array, size}: config.json, the first bytes of model.safetensors
// through the end of its header, and the file's size, read without the rest of the weights (a
// sharded checkpoint: the shards' headers joined into one, size the bytes of all its files). From a
// URL: config.json and one ranged request for the file's first 64 KB (a second one for a longer
// header); a server that ignores ranges sends the whole file, of which only the start is read.
export async function readModelHeader(source, { signal } = {}) {
  checkSource(source);
  if (typeof source === 'string' || source instanceof URL) {
    if (isLocalPath(source)) {
      const { file: pathOf, cannotRead } = await nodeDirectory(source, signal);
      const config = (
        await readSmallFile(pathOf('config.json'), 'config.json', signal).catch((e) => {
          throw cannotRead('config.json', e);
        })
      ).toString('utf8');
      const sharded = await nodeShards(pathOf, signal);
      if (sharded) {
        try {
          return { config, ...(await shardHeads(sharded.shards, sharded.parsed, sharded.where)) };
        } finally {
          await sharded.close();
        }
      }
      const { file, size } = await openRegular(pathOf('model.safetensors')).catch((e) => {
        throw cannotRead('model.safetensors', e);
      });
      try {
        const read = async (n) => {
          const bytes = new Uint8Array(Math.min(n, size));
          await file.read(bytes, 0, bytes.length, 0);
          return bytes;
        };
        return { config, prefix: await read(headerLength(await read(8))), size };
      } finally {
        await file.close();
      }
    }
    const base = directoryUrl(source);
    const missing = (name) =>
      new NetworkError(
        `cannot download ${new URL(name, base)}: HTTP 404 (a model directory needs ${MODEL_FILES.join(', ')})`,
      );
    const configResponse = await download(new URL('config.json', base), signal, signal);
    if (!configResponse) throw missing('config.json');
    const config = new TextDecoder().decode(
      await readSmallBody(configResponse, new URL('config.json', base), 'config.json', signal),
    );
    const head = await fetchHead(new URL('model.safetensors', base), signal);
    if (head) return { config, ...head };
    const shards = await urlShards(base, signal);
    if (!shards) throw missing('model.safetensors');
    return { config, ...(await shardHeads(shards.shards, shards.parsed, shards.where)) };
  }
  const config = await asText(source.config, 'config', 'config.json');
  const weights = source.weights;
  if (Array.isArray(weights)) {
    const index = await asText(source.index, 'index', INDEX);
    const parsed = parseIndex(index);
    return { config, ...(await shardHeads(givenShards(weights, parsed.names), parsed)) };
  }
  if (typeof Blob !== 'undefined' && weights instanceof Blob) {
    const first = new Uint8Array(await weights.slice(0, 8).arrayBuffer());
    return {
      config,
      prefix: new Uint8Array(await weights.slice(0, headerLength(first)).arrayBuffer()),
      size: weights.size,
    };
  }
  const bytes = await asBytes(weights, 'weights');
  return { config, prefix: bytes.subarray(0, headerLength(bytes)), size: bytes.length };
}
