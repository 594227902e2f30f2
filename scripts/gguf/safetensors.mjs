// Reads the weights of a Hugging Face model directory (model.safetensors, or the shards that
// model.safetensors.index.json names) one tensor at a time, as float32, so that a model several
// times larger than memory's comfortable share is never read whole.
import { closeSync, existsSync, openSync, readFileSync, readSync, fstatSync } from 'node:fs';
import { join } from 'node:path';

const BYTES = { F32: 4, F16: 2, BF16: 2 };

function readHeader(file) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const len = Buffer.alloc(8);
    if (size < 8 || readSync(fd, len, 0, 8, 0) !== 8) throw new Error(`${file}: too short for a safetensors header`);
    const n = Number(len.readBigUInt64LE(0));
    if (n > size - 8 || n > 100 * 1024 * 1024) throw new Error(`${file}: header length ${n} exceeds the file`);
    const text = Buffer.alloc(n);
    readSync(fd, text, 0, n, 8);
    const header = JSON.parse(text.toString('utf8'));
    return { header, dataStart: 8 + n, size };
  } finally {
    closeSync(fd);
  }
}

export class Weights {
  // dir: a model directory. Builds name -> {file, dtype, shape, begin, end} from the header(s).
  constructor(dir) {
    this.tensors = new Map();
    const index = join(dir, 'model.safetensors.index.json');
    const single = join(dir, 'model.safetensors');
    let files;
    if (existsSync(single)) files = [single];
    else if (existsSync(index)) {
      const map = JSON.parse(readFileSync(index, 'utf8')).weight_map ?? {};
      files = [...new Set(Object.values(map))].map((f) => join(dir, f));
    } else throw new Error(`${dir}: no model.safetensors or model.safetensors.index.json`);
    for (const file of files) {
      const { header, dataStart, size } = readHeader(file);
      for (const [name, t] of Object.entries(header)) {
        if (name === '__metadata__') continue;
        const [begin, end] = t.data_offsets;
        if (dataStart + end > size) throw new Error(`${file}: tensor ${name} runs past the end of the file`);
        this.tensors.set(name, {
          file,
          dtype: t.dtype,
          shape: t.shape,
          begin: dataStart + begin,
          end: dataStart + end,
        });
      }
    }
  }

  has(name) {
    return this.tensors.has(name);
  }

  shape(name) {
    return this.info(name).shape;
  }

  info(name) {
    const t = this.tensors.get(name);
    if (!t) throw new Error(`missing tensor '${name}' in the model's safetensors`);
    if (!(t.dtype in BYTES)) throw new Error(`tensor '${name}' has dtype ${t.dtype} (supported: F32, F16, BF16)`);
    return t;
  }

  // The tensor as a Float32Array in its stored (row-major) order.
  read(name) {
    const t = this.info(name);
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (t.end - t.begin !== count * BYTES[t.dtype])
      throw new Error(`tensor '${name}': byte length does not match its shape`);
    const bytes = Buffer.alloc(t.end - t.begin);
    const fd = openSync(t.file, 'r');
    try {
      for (let done = 0; done < bytes.length;) {
        const n = readSync(fd, bytes, done, Math.min(bytes.length - done, 1 << 30), t.begin + done);
        if (n <= 0) throw new Error(`tensor '${name}': short read`);
        done += n;
      }
    } finally {
      closeSync(fd);
    }
    const out = new Float32Array(count);
    if (t.dtype === 'F32') {
      out.set(new Float32Array(bytes.buffer, bytes.byteOffset, count));
    } else if (t.dtype === 'BF16') {
      const src = new Uint16Array(bytes.buffer, bytes.byteOffset, count);
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < count; i++) u[i] = src[i] << 16;
    } else {
      const src = new Uint16Array(bytes.buffer, bytes.byteOffset, count);
      for (let i = 0; i < count; i++) out[i] = halfToFloat(src[i]);
    }
    return out;
  }
}

export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
