// A model's size before it is loaded (estimateModel, and the engine's check that a model fits):
// config.json and the header of model.safetensors, without the rest of the weights.

import { checkSource } from './model-source.mjs';
import { download, readSmallBody } from './download.mjs';
import { asBytes, asText, concat, directoryUrl, headerLength, MODEL_FILES } from './model-files.mjs';
import { isLocalPath, nodeDirectory, openRegular, readSmallFile } from './node-files.mjs';
import { NetworkError } from './errors.mjs';

// -> {config: string, prefix: Uint8Array, size}: config.json, the first bytes of model.safetensors
// through the end of its header, and the file's size, read without the rest of the weights. From a
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
    const url = new URL('model.safetensors', base);
    let prefix = new Uint8Array(0),
      size = 0;
    for (let want = 64 * 1024; prefix.length < headerLength(prefix) && prefix.length < want;) {
      const response = await download(url, signal, signal, { range: `bytes=${prefix.length}-${want - 1}` });
      if (!response) throw missing('model.safetensors');
      const ranged = response.status === 206;
      size = ranged
        ? Number(response.headers.get('content-range')?.split('/')[1]) || 0
        : Number(response.headers.get('content-length')) || 0;
      const reader = response.body.getReader();
      const start = ranged ? prefix.length : 0;
      let got = ranged ? prefix : new Uint8Array(0);
      // A range is read to its end; a whole file (a server without ranges) only to its header's.
      while (ranged || got.length < headerLength(got)) {
        const { done, value } = await reader.read();
        if (done) break;
        got = concat(got, value);
      }
      if (!ranged) reader.cancel().catch(() => {});
      prefix = got;
      if (!ranged || got.length === start) break; // the whole file's start was read, or it ended
      want = headerLength(prefix);
    }
    return { config, prefix: prefix.subarray(0, headerLength(prefix)), size };
  }
  const config = await asText(source.config, 'config', 'config.json');
  const weights = source.weights;
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
