// Conversions of the safetensors floating-point dtypes to float.
#pragma once

#include <cstdint>

#include "glassbox/safetensors.h"

namespace glassbox {

// IEEE 754 half -> float, exact for every value: subnormals, infinities and NaN included.
float f16_to_f32(std::uint16_t h);
// bfloat16 -> float: bfloat16 is the top half of a float.
float bf16_to_f32(std::uint16_t h);
// float -> IEEE half, rounded to nearest even; overflow gives infinity, NaN stays NaN.
std::uint16_t f32_to_f16(float f);
// float -> bfloat16, rounded to nearest even (NaN stays NaN).
std::uint16_t f32_to_bf16(float f);
// A whole F32, F16 or BF16 tensor (little-endian bytes, any alignment) -> n floats.
void to_f32(const TensorInfo& tensor, float* out);
// A (rows, cols) F32, F16 or BF16 tensor -> its (cols, rows) transpose as floats, in one pass;
// when given, only the tensor's columns col0 .. col1-1: the transpose's rows col0 .. col1-1, with
// row col0 at out (so that threads can share a transposition, or take it a few rows at a time).
void to_f32_transposed(const TensorInfo& tensor, std::int64_t rows, std::int64_t cols, float* out,
                       std::int64_t col0 = 0, std::int64_t col1 = -1);

}   // namespace glassbox
