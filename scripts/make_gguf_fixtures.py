#!/usr/bin/env python3
"""Expected Q8_0 and Q4_0 blocks for the GGUF writer's test (tests/fixtures/gguf/quant_blocks.json).

The reference is ggml's (ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref), written here
with numpy in float32 as ggml computes it:
  Q8_0: d = max|x| / 127, q = roundf(x * (1/d))          (round half away from zero)
  Q4_0: d = (the value of largest magnitude, first if tied) / -8,
        q = min(15, (int)(x * (1/d) + 8.5)), byte j = q[j] | q[j + 16] << 4
  d is stored as IEEE half (round to nearest even), little-endian, before the 32 or 16 bytes.
Inputs are stored as float32 bit patterns so nothing is lost in JSON. Deterministic: rerun with
    /usr/bin/python3 scripts/make_gguf_fixtures.py
"""

import json
import pathlib

import numpy as np

QK = 32
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests/fixtures/gguf/quant_blocks.json"


def roundf(v):
    # C's roundf without a float32 sum that could round up (0.49999997 + 0.5 is 1 in float32).
    a = np.abs(v)
    f = np.floor(a)
    return np.sign(v) * (f + np.floor(2 * (a - f)))


def q8_0(block):
    amax = np.max(np.abs(block))
    d = np.float32(amax / np.float32(127))
    inv = np.float32(1) / d if d != 0 else np.float32(0)
    q = roundf((block * inv).astype(np.float32)).astype(np.int8)
    return np.float16(d).tobytes() + q.tobytes()


def q4_0(block):
    i = int(np.argmax(np.abs(block)))
    d = np.float32(block[i] / np.float32(-8))
    inv = np.float32(1) / d if d != 0 else np.float32(0)
    x = (block * inv).astype(np.float32) + np.float32(8.5)
    q = np.minimum(np.trunc(x.astype(np.float32)), 15).astype(np.uint8)
    packed = (q[: QK // 2] | (q[QK // 2 :] << 4)).astype(np.uint8)
    return np.float16(d).tobytes() + packed.tobytes()


def blocks():
    rng = np.random.default_rng(42)
    out = [rng.standard_normal(QK).astype(np.float32) * np.float32(s) for s in (1, 0.02, 30, 1e-6)]
    out.append(np.zeros(QK, np.float32))
    # Ties: values landing exactly on .5 after scaling (half away from zero for Q8_0; Q4_0's 8.5).
    out.append(np.array([127 if i == 0 else (i % 8) - 3.5 for i in range(QK)], np.float32))
    out.append(np.array([-8 if i == 5 else (i % 16) - 7.5 for i in range(QK)], np.float32))
    # The largest magnitude twice with opposite signs: the first one sets Q4_0's sign.
    out.append(np.array([3 if i == 2 else -3 if i == 9 else 0.25 * i for i in range(QK)], np.float32))
    out.append(np.array([-3 if i == 2 else 3 if i == 9 else -0.1 * i for i in range(QK)], np.float32))
    return out


def main():
    cases = []
    for b in blocks():
        cases.append(
            {
                "input_f32_bits": [int(v) for v in b.view(np.uint32)],
                "q8_0": q8_0(b).hex(),
                "q4_0": q4_0(b).hex(),
            }
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    OUT.write_text(f'{{"block":{QK},"cases":[\n{lines}\n]}}\n')


if __name__ == "__main__":
    main()
