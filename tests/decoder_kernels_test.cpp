// The fast kernels the modern decoders add (kernels.h: rmsnorm, rotary, multiply, windowed masks,
// key/value heads shared by a group of query heads) against the scalar references
// (kernels/reference.h), which tests/decoder_ops_test.cpp checks against PyTorch.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reference.h"
#include "model/rotary.h"
#include "test_util.h"

namespace glassbox::kernels {
namespace {

using test::max_abs_diff;
using test::random_vector;

TEST(DecoderKernels, RmsNormMatchesReference) {
  std::mt19937 rng(11);
  for (const int C : {1, 7, 8, 12, 64, 576, 901}) {
    const int T = 3;
    const auto x = random_vector(std::size_t(T) * C, rng, 3.0f), w = random_vector(C, rng);
    std::vector<float> out(x.size()), ref(x.size()), in_place = x;
    rmsnorm(out.data(), x.data(), w.data(), T, C, 1e-6f);
    reference::rmsnorm(ref.data(), x.data(), w.data(), T, C, 1e-6f);
    EXPECT_LT(max_abs_diff(out, ref), 2e-5f) << "C=" << C;
    rmsnorm(in_place.data(), in_place.data(), w.data(), T, C, 1e-6f);   // out may alias x
    EXPECT_EQ(in_place, out) << "C=" << C;
  }
}

// The kernel takes each row's cosines and sines; the reference computes them from the inverse
// frequencies: the same rotation, in full or in part (gpt_neox's rotary_pct), heads strided in
// place (q and k rows of the cache), the dims past rot_dim untouched.
TEST(DecoderKernels, RotaryMatchesReference) {
  std::mt19937 rng(12);
  const int shapes[][5] = {{1, 4, 16, 16, 0}, {5, 2, 64, 64, 37}, {3, 3, 12, 12, 7}, {4, 2, 64, 16, 100}};
  for (const auto& s : shapes) {   // T, heads, hd, rot_dim, pos0
    const int T = s[0], heads = s[1], hd = s[2], rot = s[3], pos0 = s[4], stride = heads * hd + 5;
    const std::vector<float> inv_freq = rotary_inv_freq(Rotary{}, rot);
    std::vector<float> cos(std::size_t(T) * rot / 2), sin(cos.size());
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < rot / 2; ++i) {
        const double angle = static_cast<float>(pos0 + t) * inv_freq[i];
        cos[std::size_t(t) * rot / 2 + i] = static_cast<float>(std::cos(angle));
        sin[std::size_t(t) * rot / 2 + i] = static_cast<float>(std::sin(angle));
      }
    const auto x = random_vector(std::size_t(T) * stride, rng);
    std::vector<float> fast = x, ref = x;
    rotary(fast.data(), stride, T, heads, hd, rot, cos.data(), sin.data());
    reference::rotary(ref.data(), stride, T, heads, hd, rot, pos0, inv_freq.data());
    EXPECT_LT(max_abs_diff(fast, ref), 1e-5f) << "T=" << T << " hd=" << hd << " rot=" << rot;
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < heads; ++h)
        for (int d = rot; d < hd; ++d) {
          const std::size_t at = std::size_t(t) * stride + std::size_t(h) * hd + d;
          ASSERT_EQ(fast[at], x[at]);
        }
      for (int d = heads * hd; d < stride; ++d)
        ASSERT_EQ(fast[std::size_t(t) * stride + d], x[std::size_t(t) * stride + d]);
    }
  }
}

TEST(DecoderKernels, MultiplyIsElementwise) {
  std::mt19937 rng(13);
  const auto x = random_vector(37, rng), y = random_vector(37, rng);
  std::vector<float> out = x;
  multiply(out.data(), y.data(), out.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], x[i] * y[i]);
}

// A window hides keys more than W-1 positions back, in the prompt kernel (against the reference,
// which defines it) and in decoding's (against the prompt kernel's last row, bit for bit).
TEST(DecoderKernels, WindowedAttentionMatchesReference) {
  std::mt19937 rng(14);
  const int shapes[][4] = {{6, 0, 16, 3}, {5, 4, 8, 1}, {7, 2, 13, 4}, {4, 10, 64, 20}, {3, 0, 8, 9}};
  for (const auto& s : shapes) {   // T, pos0, hd, window
    const int T = s[0], pos0 = s[1], hd = s[2], S = pos0 + T;
    const AttentionMask mask{true, -1, s[3]};
    const auto q = random_vector(std::size_t(T) * hd, rng), k = random_vector(std::size_t(S) * hd, rng),
               v = random_vector(std::size_t(S) * hd, rng);
    std::vector<float> out(std::size_t(T) * hd), ref = out, probs(std::size_t(T) * S), ref_probs = probs, scratch(S);
    attention(out.data(), hd, q.data(), hd, k.data(), v.data(), hd, T, pos0, hd, 0.3f, probs.data(), scratch.data(),
              mask);
    reference::attention(ref.data(), hd, q.data(), hd, k.data(), v.data(), hd, T, pos0, hd, 0.3f, ref_probs.data(),
                         scratch.data(), mask);
    EXPECT_LT(max_abs_diff(out, ref), 1e-5f) << "window " << s[3];
    EXPECT_LT(max_abs_diff(probs, ref_probs), 1e-6f);
    for (int i = 0; i < T; ++i) {
      const int pos = pos0 + i;
      float sum = 0.0f;
      for (int j = 0; j < S; ++j) {
        const bool seen = j <= pos && j > pos - s[3];
        if (!seen) {
          EXPECT_EQ(probs[std::size_t(i) * S + j], 0.0f) << "query " << pos << " key " << j;
        }
        sum += probs[std::size_t(i) * S + j];
      }
      EXPECT_NEAR(sum, 1.0f, 1e-5f);
    }
    // decoding the last query alone
    std::vector<float> one(hd), one_probs(S), one_scratch(S);
    attention_one_query(one.data(), q.data() + std::size_t(T - 1) * hd, k.data(), v.data(), hd, S, 1, hd, 0.3f,
                        one_probs.data(), one_scratch.data(), mask);
    for (int d = 0; d < hd; ++d) ASSERT_EQ(one[d], out[std::size_t(T - 1) * hd + d]);
    for (int j = 0; j < S; ++j) ASSERT_EQ(one_probs[j], probs[std::size_t(T - 1) * S + j]);
  }
}

// shared_kv: a group of query heads reads one key/value head (columns 0 .. hd of k and v), each
// head's result the bits of attention() over that head.
TEST(DecoderKernels, SharedKeyValueHeadsInDecoding) {
  std::mt19937 rng(15);
  const int shapes[][4] = {{4, 9, 16, 0}, {3, 30, 12, 0}, {8, 20, 64, 5}, {1, 5, 8, 0}};
  for (const auto& sh : shapes) {   // heads in the group, n_keys, hd, window
    const int heads = sh[0], S = sh[1], hd = sh[2], kv_stride = 3 * hd + 1;
    const AttentionMask mask{true, -1, sh[3]};
    const auto q = random_vector(std::size_t(heads) * hd, rng), k = random_vector(std::size_t(S) * kv_stride, rng),
               v = random_vector(std::size_t(S) * kv_stride, rng);
    const std::size_t g = hd;   // the group's key/value head: the second of the row
    std::vector<float> out(std::size_t(heads) * hd), probs(std::size_t(heads) * S), scratch(probs.size());
    attention_one_query(out.data(), q.data(), k.data() + g, v.data() + g, kv_stride, S, heads, hd, 0.3f, probs.data(),
                        scratch.data(), mask, nullptr, /*shared_kv=*/true);
    for (int h = 0; h < heads; ++h) {
      std::vector<float> one(hd), one_probs(S), one_scratch(S);
      attention(one.data(), hd, q.data() + std::size_t(h) * hd, hd, k.data() + g, v.data() + g, kv_stride, 1, S - 1, hd,
                0.3f, one_probs.data(), one_scratch.data(), mask);
      for (int d = 0; d < hd; ++d) ASSERT_EQ(out[std::size_t(h) * hd + d], one[d]) << "head " << h;
      for (int j = 0; j < S; ++j) ASSERT_EQ(probs[std::size_t(h) * S + j], one_probs[j]) << "head " << h;
    }
  }
}

// Grouped-query attention as the model runs it (each query head through attention() with its
// key/value head's columns) against the reference attention_gqa, windows included.
TEST(DecoderKernels, GroupedQueryAttentionMatchesReference) {
  std::mt19937 rng(16);
  const int shapes[][6] = {{5, 3, 4, 2, 8, 0}, {4, 0, 6, 1, 12, 3}, {3, 6, 8, 8, 16, 4}};
  for (const auto& s : shapes) {   // T, pos0, n_head, n_kv, hd, window
    const int T = s[0], pos0 = s[1], H = s[2], G = s[3], hd = s[4], window = s[5], S = pos0 + T;
    const int Dq = H * hd, Dkv = G * hd, group = H / G;
    const auto q = random_vector(std::size_t(T) * Dq, rng), k = random_vector(std::size_t(S) * Dkv, rng),
               v = random_vector(std::size_t(S) * Dkv, rng);
    std::vector<float> out(std::size_t(T) * Dq), ref = out, probs(std::size_t(H) * T * S), ref_probs = probs,
                                                 scratch(S);
    for (int h = 0; h < H; ++h)
      attention(out.data() + h * hd, Dq, q.data() + h * hd, Dq, k.data() + (h / group) * hd,
                v.data() + (h / group) * hd, Dkv, T, pos0, hd, 0.25f, probs.data() + std::size_t(h) * T * S,
                scratch.data(), {true, -1, window});
    reference::attention_gqa(ref.data(), q.data(), k.data(), v.data(), T, pos0, H, G, hd, 0.25f, window,
                             ref_probs.data());
    EXPECT_LT(max_abs_diff(out, ref), 1e-5f) << "H=" << H << " G=" << G << " window=" << window;
    EXPECT_LT(max_abs_diff(probs, ref_probs), 1e-6f);
  }
}

}   // namespace
}   // namespace glassbox::kernels
