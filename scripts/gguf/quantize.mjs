// ggml's tensor encodings that the writer emits: F32, and the Q8_0 and Q4_0 blocks of 32 values
// with one fp16 scale, bit for bit as ggml's reference quantizers (quantize_row_q8_0_ref,
// quantize_row_q4_0_ref) compute them in float32.
import { halfToFloat } from './safetensors.mjs';

export const GGML_TYPE = { F32: 0, Q4_0: 2, Q8_0: 8 };
export const QK = 32;
const BLOCK_BYTES = { [GGML_TYPE.Q8_0]: 2 + QK, [GGML_TYPE.Q4_0]: 2 + QK / 2 };

export function typeName(type) {
  return Object.keys(GGML_TYPE).find((k) => GGML_TYPE[k] === type);
}

// Bytes of a tensor of `count` values (count a multiple of 32 for the block types).
export function byteSize(type, count) {
  if (type === GGML_TYPE.F32) return count * 4;
  return (count / QK) * BLOCK_BYTES[type];
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// float32 -> IEEE half bits, rounding to nearest even (as F16C's vcvtps2ph and ggml's fallback).
export function floatToHalf(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++; // a carry into the exponent is still right
  return sign | h;
}

const fround = Math.fround;
// C's roundf: half away from zero.
const roundf = (v) => (v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5));

// x: Float32Array whose length is a multiple of 32 -> Q8_0 blocks {fp16 d; int8 q[32]}.
export function quantizeQ8_0(x) {
  const nb = x.length / QK;
  const out = Buffer.alloc(nb * BLOCK_BYTES[GGML_TYPE.Q8_0]);
  for (let b = 0; b < nb; b++) {
    const base = b * QK;
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[base + j]));
    const d = fround(amax / 127);
    const id = d ? fround(1 / d) : 0;
    const o = b * 34;
    out.writeUInt16LE(floatToHalf(d), o);
    for (let j = 0; j < QK; j++) out[o + 2 + j] = roundf(fround(x[base + j] * id)) & 0xff;
  }
  return out;
}

// x -> Q4_0 blocks {fp16 d; uint8 q[16]}: d = (value of largest magnitude) / -8,
// q = min(15, trunc(x/d + 8.5)), byte j = q[j] | q[j+16] << 4.
export function quantizeQ4_0(x) {
  const nb = x.length / QK;
  const out = Buffer.alloc(nb * BLOCK_BYTES[GGML_TYPE.Q4_0]);
  const q = new Uint8Array(QK);
  for (let b = 0; b < nb; b++) {
    const base = b * QK;
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[base + j];
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = fround(max / -8);
    const id = d ? fround(1 / d) : 0;
    for (let j = 0; j < QK; j++) q[j] = Math.min(15, Math.trunc(fround(fround(x[base + j] * id) + 8.5)));
    const o = b * 18;
    out.writeUInt16LE(floatToHalf(d), o);
    for (let j = 0; j < QK / 2; j++) out[o + 2 + j] = q[j] | (q[j + QK / 2] << 4);
  }
  return out;
}

export function encode(type, x) {
  if (type === GGML_TYPE.F32) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  if (type === GGML_TYPE.Q8_0) return quantizeQ8_0(x);
  if (type === GGML_TYPE.Q4_0) return quantizeQ4_0(x);
  throw new Error(`no encoder for ggml type ${type}`);
}

// The values a block encoding stands for (ggml's dequantize_row_q8_0 / _q4_0): d * q, and
// d * (q - 8) for Q4_0.
export function decode(type, bytes, count) {
  if (type === GGML_TYPE.F32)
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + count * 4));
  const out = new Float32Array(count);
  const size = BLOCK_BYTES[type];
  for (let b = 0; b < count / QK; b++) {
    const o = b * size;
    const d = halfToFloat(bytes[o] | (bytes[o + 1] << 8));
    for (let j = 0; j < QK; j++) {
      let q;
      if (type === GGML_TYPE.Q8_0) q = (bytes[o + 2 + j] << 24) >> 24;
      else q = (j < QK / 2 ? bytes[o + 2 + j] & 0x0f : bytes[o + 2 + j - QK / 2] >> 4) - 8;
      out[b * QK + j] = Math.fround(q * d);
    }
  }
  return out;
}
