#include "io/dtype.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "glassbox/error.h"

namespace glassbox {
namespace {

// std::bit_cast, which Emscripten 3.1.6's libc++ lacks.
float as_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t bits_of(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}   // namespace

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = bits_of(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;    // NaN
  if (abs >= 0x47800000u) return sign | 0x7c00u;   // >= 65536 (or inf): rounds to infinity
  if (abs < 0x38800000u) {                         // below 2^-14: a subnormal half (or zero)
    // value = abs as float; half subnormal unit is 2^-24: round(value * 2^24) to nearest even
    const std::uint32_t exp = abs >> 23;
    if (exp < 102) return sign;   // below 2^-25: rounds to zero
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(exp);   // 24-bit mantissa -> units of 2^-24
    const std::uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    return sign | static_cast<std::uint16_t>(q + (rem > half || (rem == half && (q & 1u))));
  }
  // normal: rebias the exponent, round the 23-bit mantissa to 10 bits (a carry may bump the exponent)
  const std::uint32_t h = ((abs >> 13) - ((127 - 15) << 10));
  const std::uint32_t rem = abs & 0x1fffu;
  return sign | static_cast<std::uint16_t>(h + (rem > 0x1000u || (rem == 0x1000u && (h & 1u))));
}

std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);   // quiet NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Without branches on the value, so that converting a model's tensors is a plain loop the compiler
// vectorises (in WebAssembly too, where loading a model's F16 weights is on the way to its first
// token). Each case is computed exactly and one is selected: a normal half's exponent rebiased in
// place (+112), a subnormal's mantissa as a float times 2^-24 (no subnormal float on the way, so a
// host that flushes subnormals to zero gets it right too), and for exponent 31 the float's
// all-ones exponent with the payload kept (infinities, NaNs).
float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = h & 0x7c00u, magnitude = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  const std::uint32_t normal = magnitude + (112u << 23);
  const std::uint32_t subnormal = bits_of(static_cast<float>(h & 0x3ffu) * 0x1p-24f);
  const std::uint32_t special = 0x7f800000u | magnitude;
  return as_float(sign | (exp == 0x7c00u ? special : exp == 0 ? subnormal : normal));
}

float bf16_to_f32(std::uint16_t h) { return as_float(static_cast<std::uint32_t>(h) << 16); }

void to_f32(const TensorInfo& t, float* out) {
  const std::byte* p = t.bytes.data();
  const auto n = static_cast<std::size_t>(t.numel);
  switch (t.dtype) {
    case DType::F32:
      std::memcpy(out, p, n * 4);
      return;
    case DType::F16:   // one loop per type, each a plain loop the compiler vectorises
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = f16_to_f32(h);
      }
      return;
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = bf16_to_f32(h);
      }
      return;
    default:
      throw Error("to_f32: tensor '" + t.name + "' is not F32, F16 or BF16");
  }
}

namespace {

template <typename Read>
void transpose_tiles(std::int64_t rows, std::int64_t cols, std::int64_t col0, std::int64_t col1, float* out,
                     Read read) {
  // One pass (convert and transpose together, no temporary), in 32 x 32 tiles: a plain loop strides
  // its writes by a whole row, a new cache line per element; a tile's reads and writes stay within
  // 32 lines each. (Loading a model, the cost is mostly the first touch of the fresh memory the
  // transposed copies live in, not this loop: docs/performance.md, Memory.)
  constexpr std::int64_t kTile = 32;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const std::int64_t r1 = std::min(rows, r0 + kTile);
    for (std::int64_t c0 = col0; c0 < col1; c0 += kTile) {
      const std::int64_t c1 = std::min(col1, c0 + kTile);
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) out[(c - col0) * rows + r] = read(r * cols + c);
    }
  }
}

}   // namespace

void to_f32_transposed(const TensorInfo& t, std::int64_t rows, std::int64_t cols, float* out, std::int64_t col0,
                       std::int64_t col1) {
  if (rows * cols != t.numel)
    throw Error("to_f32_transposed: tensor '" + t.name + "' is not " + std::to_string(rows) + " x " +
                std::to_string(cols));
  if (col1 < 0) col1 = cols;
  const std::byte* p = t.bytes.data();
  auto half = [p](std::int64_t i) {
    std::uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return h;
  };
  switch (t.dtype) {
    case DType::F32:
      transpose_tiles(rows, cols, col0, col1, out, [p](std::int64_t i) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        return f;
      });
      return;
    case DType::F16:
      transpose_tiles(rows, cols, col0, col1, out, [&](std::int64_t i) { return f16_to_f32(half(i)); });
      return;
    case DType::BF16:
      transpose_tiles(rows, cols, col0, col1, out, [&](std::int64_t i) { return bf16_to_f32(half(i)); });
      return;
    default:
      throw Error("to_f32_transposed: tensor '" + t.name + "' is not F32, F16 or BF16");
  }
}

}   // namespace glassbox
