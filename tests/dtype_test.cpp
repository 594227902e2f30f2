// F16 and BF16 -> float at the values where conversions go wrong: subnormals, the largest
// finite values, infinities, NaN, signed zero.
#include <gtest/gtest.h>

#include <cmath>

#include "dtype.h"

namespace glassbox {
namespace {

TEST(DType, HalfToFloat) {
  EXPECT_EQ(f16_to_f32(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));            // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));         // largest subnormal
  EXPECT_EQ(f16_to_f32(0x8200), -std::ldexp(512.0f, -24));
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));            // smallest normal
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);                         // largest finite
  EXPECT_EQ(f16_to_f32(0x7c00), INFINITY);
  EXPECT_EQ(f16_to_f32(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e01)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));
}

TEST(DType, BFloat16ToFloat) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc0a0), -5.0f);
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));          // a float subnormal
  EXPECT_EQ(bf16_to_f32(0x7f80), INFINITY);
  EXPECT_EQ(bf16_to_f32(0xff80), -INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));
  EXPECT_TRUE(std::signbit(bf16_to_f32(0x8000)));
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

}  // namespace
}  // namespace glassbox
