// F16 and BF16 -> float at the values where conversions go wrong: subnormals, the largest
// finite values, infinities, NaN, signed zero.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "io/dtype.h"
#include "glassbox/error.h"

namespace glassbox {
namespace {

TEST(DType, HalfToFloat) {
  EXPECT_EQ(f16_to_f32(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));      // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));   // largest subnormal
  EXPECT_EQ(f16_to_f32(0x8200), -std::ldexp(512.0f, -24));
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));   // smallest normal
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);   // largest finite
  EXPECT_EQ(f16_to_f32(0x7c00), INFINITY);
  EXPECT_EQ(f16_to_f32(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e01)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));
}

// Every half, against the value its fields give (IEEE 754 binary16), computed in double.
TEST(DType, HalfToFloatEveryValue) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    const float got = f16_to_f32(static_cast<std::uint16_t>(h));
    if (exp == 31) {
      if (mant == 0) {
        ASSERT_EQ(got, sign ? -INFINITY : INFINITY) << std::hex << h;
      } else {
        ASSERT_TRUE(std::isnan(got)) << std::hex << h;
        std::uint32_t bits;
        std::memcpy(&bits, &got, 4);
        ASSERT_EQ(bits & 0x7fffffu, std::uint32_t(mant) << 13) << "payload of " << std::hex << h;
      }
      continue;
    }
    const double magnitude = exp == 0 ? std::ldexp(double(mant), -24) : std::ldexp(double(1024 + mant), exp - 25);
    ASSERT_EQ(double(got), sign ? -magnitude : magnitude) << std::hex << h;
    ASSERT_EQ(std::signbit(got), sign == 1) << std::hex << h;
  }
}

TEST(DType, BFloat16ToFloat) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc0a0), -5.0f);
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));   // a float subnormal
  EXPECT_EQ(bf16_to_f32(0x7f80), INFINITY);
  EXPECT_EQ(bf16_to_f32(0xff80), -INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));
  EXPECT_TRUE(std::signbit(bf16_to_f32(0x8000)));
}

TEST(DType, FloatToHalfRoundsToNearestEven) {
  // every finite half value converts back to itself
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
    }
  }
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);              // tie between 1 and 1+2^-10: even (1)
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);          // tie: even (1 + 2^-9)
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);   // above the tie: up
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);                     // the largest half
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                     // rounds to infinity
  EXPECT_EQ(f32_to_f16(-INFINITY), 0xfc00);
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);     // the smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);     // half of it: tie to even (0)
  EXPECT_EQ(f32_to_f16(0x1.8p-25f), 0x0001);   // above the tie
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
}

TEST(DType, FloatToBFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);              // tie: even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);          // tie: even
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);   // above the tie
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  for (std::uint32_t h = 0; h < 0x10000; ++h) {   // every bf16 value converts back to itself
    const float f = bf16_to_f32(static_cast<std::uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), h) << std::hex << h;
    }
  }
}

TEST(DType, WholeTensorsAtAnyAlignment) {
  // Bytes at an odd offset: conversion must not assume alignment.
  const unsigned char raw[] = {0xff, 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7c};
  TensorInfo t{"x", DType::F16, {3}, 3, std::as_bytes(std::span(raw + 1, 6))};
  float out[3];
  to_f32(t, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], INFINITY);
}

TEST(DType, TransposedTensorsOfEveryDType) {
  // A (37, 70) matrix: sizes that are not multiples of the 32 x 32 tiles, at an odd offset.
  const std::int64_t rows = 37, cols = 70;
  for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    const std::size_t width = dtype == DType::F32 ? 4 : 2;
    std::vector<std::byte> raw(1 + rows * cols * width);
    for (std::int64_t i = 0; i < rows * cols; ++i) {
      const float v = static_cast<float>(i % 200) - 100.0f;   // exact in every dtype (bf16: 8 bits)
      if (dtype == DType::F32) {
        std::memcpy(raw.data() + 1 + 4 * i, &v, 4);
      } else {
        const std::uint16_t h = dtype == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
        std::memcpy(raw.data() + 1 + 2 * i, &h, 2);
      }
    }
    TensorInfo t{"w", dtype, {rows, cols}, rows * cols, std::span(raw).subspan(1)};
    std::vector<float> out(rows * cols);
    to_f32_transposed(t, rows, cols, out.data());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(out[c * rows + r], static_cast<float>((r * cols + c) % 200) - 100.0f)
            << dtype_name(dtype) << " " << r << "," << c;
  }
  TensorInfo wrong{"w", DType::F32, {4}, 4, {}};
  EXPECT_THROW(to_f32_transposed(wrong, 3, 2, nullptr), Error);
}

}   // namespace
}   // namespace glassbox
