#include "dtype.h"

#include <cstring>

#include "glassbox/error.h"

namespace glassbox {
namespace {

// std::bit_cast, which Emscripten 3.1.6's libc++ lacks.
float as_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0 && mant == 0) {
    bits = sign;
  } else if (exp == 0) {   // subnormal m * 2^-24: shift the mantissa up to an implicit leading 1
    exp = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  } else if (exp == 31) {  // inf / NaN (payload kept)
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return as_float(bits);
}

float bf16_to_f32(std::uint16_t h) { return as_float(static_cast<std::uint32_t>(h) << 16); }

void to_f32(const TensorInfo& t, float* out) {
  const std::byte* p = t.bytes.data();
  const auto n = static_cast<std::size_t>(t.numel);
  switch (t.dtype) {
    case DType::F32:
      std::memcpy(out, p, n * 4);
      return;
    case DType::F16:
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = t.dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      return;
    default:
      throw Error("to_f32: tensor '" + t.name + "' is not F32, F16 or BF16");
  }
}

}  // namespace glassbox
