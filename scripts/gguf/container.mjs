// The GGUF v3 container (ggml's docs/gguf.md): "GGUF", version 3, tensor count (u64), metadata
// count (u64), the metadata key/values, the tensor infos (name, dims innermost first, ggml type,
// offset into the data), padding to the alignment, then each tensor's bytes at its aligned offset.
// Written to DEST.tmp-PID and renamed, so a failure never leaves a half-written DEST.
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { byteSize } from './quantize.mjs';

export const ALIGNMENT = 32;

// GGUF metadata value types.
export const T = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
};

class ByteWriter {
  constructor() {
    this.chunks = [];
    this.length = 0;
  }
  push(buf) {
    this.chunks.push(buf);
    this.length += buf.length;
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  string(s) {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  scalar(type, v) {
    const sizes = {
      [T.UINT8]: 1,
      [T.INT8]: 1,
      [T.UINT16]: 2,
      [T.INT16]: 2,
      [T.UINT32]: 4,
      [T.INT32]: 4,
      [T.FLOAT32]: 4,
      [T.BOOL]: 1,
      [T.UINT64]: 8,
      [T.INT64]: 8,
      [T.FLOAT64]: 8,
    };
    if (type === T.STRING) return this.string(v);
    const b = Buffer.alloc(sizes[type]);
    switch (type) {
      case T.UINT8:
        b.writeUInt8(v);
        break;
      case T.INT8:
        b.writeInt8(v);
        break;
      case T.UINT16:
        b.writeUInt16LE(v);
        break;
      case T.INT16:
        b.writeInt16LE(v);
        break;
      case T.UINT32:
        b.writeUInt32LE(v);
        break;
      case T.INT32:
        b.writeInt32LE(v);
        break;
      case T.FLOAT32:
        b.writeFloatLE(v);
        break;
      case T.BOOL:
        b.writeUInt8(v ? 1 : 0);
        break;
      case T.UINT64:
        b.writeBigUInt64LE(BigInt(v));
        break;
      case T.INT64:
        b.writeBigInt64LE(BigInt(v));
        break;
      case T.FLOAT64:
        b.writeDoubleLE(v);
        break;
      default:
        throw new Error(`unknown GGUF value type ${type}`);
    }
    this.push(b);
  }
  bytes() {
    return Buffer.concat(this.chunks);
  }
}

const pad = (n) => (ALIGNMENT - (n % ALIGNMENT)) % ALIGNMENT;

// metadata: [{key, type, value}] or [{key, type: T.ARRAY, elem, value: [...]}].
// tensors: [{name, dims (innermost first), type, count, data: () => Buffer}] (data made one at a
// time, while writing, so only one tensor is in memory).
export function writeGguf(dest, metadata, tensors) {
  const head = new ByteWriter();
  head.push(Buffer.from('GGUF', 'latin1'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(metadata.length);
  for (const kv of metadata) {
    head.string(kv.key);
    head.u32(kv.type);
    if (kv.type === T.ARRAY) {
      head.u32(kv.elem);
      head.u64(kv.value.length);
      for (const v of kv.value) head.scalar(kv.elem, v);
    } else head.scalar(kv.type, kv.value);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    head.string(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    offsets.push(offset);
    const size = byteSize(t.type, t.count);
    offset += size + pad(size);
  }
  const header = head.bytes();
  const tmp = `${dest}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    let pos = 0;
    const put = (buf) => {
      for (let done = 0; done < buf.length;) done += writeSync(fd, buf, done, buf.length - done);
      pos += buf.length;
    };
    put(header);
    put(Buffer.alloc(pad(header.length)));
    const dataStart = pos;
    tensors.forEach((t, i) => {
      const bytes = t.data();
      const expected = byteSize(t.type, t.count);
      if (bytes.length !== expected) throw new Error(`tensor ${t.name}: ${bytes.length} bytes, expected ${expected}`);
      if (pos - dataStart !== offsets[i]) throw new Error(`tensor ${t.name}: written at the wrong offset`);
      put(bytes);
      put(Buffer.alloc(pad(bytes.length)));
    });
    closeSync(fd);
    renameSync(tmp, dest);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {}
    rmSync(tmp, { force: true });
    throw e;
  }
}
