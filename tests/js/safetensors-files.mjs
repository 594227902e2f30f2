// safetensors files read into their tensors and written back, for tests that change a model's
// weights (shards, the bad-input table's rows).
import { readFileSync } from 'node:fs';

// A safetensors file's tensors: [{name, dtype, shape, bytes}] in name order.
export function readTensors(path) {
  const file = readFileSync(path);
  const n = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.subarray(8, 8 + n).toString('utf8'));
  delete header.__metadata__;
  return Object.keys(header)
    .sort()
    .map((name) => {
      const {
        dtype,
        shape,
        data_offsets: [a, b],
      } = header[name];
      return { name, dtype, shape, bytes: file.subarray(8 + n + a, 8 + n + b) };
    });
}

// A safetensors file holding `tensors` back to back.
export function safetensors(tensors) {
  const header = {};
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.bytes.length] };
    at += t.bytes.length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  return Buffer.concat([length, Buffer.from(text), ...tensors.map((t) => t.bytes)]);
}
