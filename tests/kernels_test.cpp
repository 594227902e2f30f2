// The fast kernels against the scalar reference, on random shapes including ragged sizes (not
// multiples of the vector width or the 4-row tile).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <cstdio>
#include <stdexcept>

#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "kernels/reference.h"
#include "matmul_tiling_cases.h"
#include "quantized_matmul_cases.h"
#include "test_util.h"

namespace glassbox::kernels {
namespace {

using test::max_abs_diff;
using test::random_vector;

// w (N,K) in the kernels' packed layout.
std::vector<float> packed(const std::vector<float>& w, int N, int K) {
  std::vector<float> p(w.size(), NAN);
  pack_matrix(p.data(), w.data(), N, K);
  return p;
}

// The fast packing, from nn.Linear rows and from GPT-2's Conv1D transpose (K,N), equals the
// reference's element-by-element layout; and a slice of the packed rows from a multiple of 8 is the
// packed form of that slice of rows (how the model splits a product over threads).
TEST(Kernels, PackMatrixEqualsReference) {
  std::mt19937 rng(5);
  const int shapes[][2] = {{1, 1}, {7, 3}, {8, 4}, {17, 33}, {24, 6}, {13, 70}, {16, 768}};   // N, K
  for (const auto& s : shapes) {
    const int N = s[0], K = s[1];
    const auto w = random_vector(std::size_t(N) * K, rng);
    std::vector<float> ref(w.size(), NAN), wt(w.size()), from_t(w.size(), NAN);
    reference::pack_matrix(ref.data(), w.data(), N, K);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) wt[std::size_t(k) * N + n] = w[std::size_t(n) * K + k];
    pack_matrix_transposed(from_t.data(), wt.data(), N, K);
    ASSERT_EQ(packed(w, N, K), ref) << "N=" << N << " K=" << K;
    ASSERT_EQ(from_t, ref) << "transposed, N=" << N << " K=" << K;
    for (int n0 = kPackRows; n0 < N; n0 += kPackRows) {
      const auto rest = packed(std::vector<float>(w.begin() + std::ptrdiff_t(n0) * K, w.end()), N - n0, K);
      ASSERT_TRUE(std::equal(rest.begin(), rest.end(), ref.begin() + std::ptrdiff_t(n0) * K))
          << "N=" << N << " n0=" << n0;
    }
  }
}

TEST(Kernels, MatmulMatchesReference) {
  std::mt19937 rng(1);
  const int shapes[][3] = {{1, 1, 1},    {1, 7, 3},     {3, 8, 4},    {5, 33, 17}, {2, 64, 96}, {1, 768, 13},
                           {7, 129, 31}, {4, 3072, 6},  {1, 33, 17},  {9, 40, 12}, {1, 16, 8},  {1, 21, 40},
                           {1, 9, 56},   {5, 1603, 19}, {6, 1536, 16}};   // the last two: K in several of the prompt's
                                                                          // column blocks
  for (const auto& s : shapes) {
    const int T = s[0], K = s[1], N = s[2];
    const auto x = random_vector(std::size_t(T) * K, rng), w = random_vector(std::size_t(N) * K, rng),
               b = random_vector(N, rng);
    for (const float* bias : {b.data(), static_cast<const float*>(nullptr)})
      for (const auto product : {matmul, matmul_fused}) {
        std::vector<float> fast(std::size_t(T) * N), ref(fast.size());
        product(fast.data(), x.data(), packed(w, N, K).data(), bias, T, K, N, 0);
        reference::matmul(ref.data(), x.data(), w.data(), bias, T, K, N);
        // Different summation order: allow float rounding relative to sqrt(K).
        EXPECT_LT(max_abs_diff(fast, ref), 1e-5f * std::sqrt(float(K)) * 4)
            << (product == matmul ? "matmul" : "matmul_fused") << " T=" << T << " K=" << K << " N=" << N;
      }
  }
}

// Each row of a prompt's product equals the same row decoded alone, bit for bit (matmul_tiling_cases.h).
TEST(Kernels, MatmulRowsDoNotDependOnTheTiling) { test_tiling::expect_prompt_rows_equal_decoding(matmul); }
TEST(Kernels, FusedMatmulRowsDoNotDependOnTheTiling) { test_tiling::expect_prompt_rows_equal_decoding(matmul_fused); }

// matmul_fused rounds each multiply-add once, matmul twice, in every path: decoding (T = 1), the
// prompt tiles (T = 5: a whole tile and a row left over), the packed groups' rows and the last
// N % 8 rows (N = 9), the rows' last K % 4 columns (K = 10). Each row's lane 0 sums x[0] w[0] = -1
// and then x[4] w[4] = (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, which a float cannot hold: rounded
// first (ties to even), it is 1 + 2^-11 and the sum 2^-11; fused, the sum is exact, 2^-11 + 2^-24.
// The columns' tail adds x[8] w[8] to 2^-11 (or 2^-11 + 2^-24) the same way. Without FMA on this
// CPU matmul_fused must give matmul's bits (kernels.h).
TEST(Kernels, FusedMatmulRoundsEachMultiplyAddOnce) {
  const int K = 10, N = 9;
  const float big = 1.0f + std::ldexp(1.0f, -12);
  std::vector<float> row(K, 0.0f);
  row[0] = -1.0f, row[4] = big;
  std::vector<float> w, x;
  for (int n = 0; n < N; ++n) w.insert(w.end(), row.begin(), row.end());
  std::vector<float> x_row(K, 0.0f);
  x_row[0] = 1.0f, x_row[4] = big;
  for (int t = 0; t < 5; ++t) x.insert(x.end(), x_row.begin(), x_row.end());
  const float portable = std::ldexp(1.0f, -11), fused = std::fma(big, big, -1.0f);
  ASSERT_EQ(fused, portable + std::ldexp(1.0f, -24));   // the rounding this test tells apart
  ASSERT_EQ(-1.0f + big * big, portable);
  // Both products of the 5 rows of x against w, decoding (T = 1) and as a prompt (T = 5).
  const auto expect_rounding = [&](const std::vector<float>& xs, const std::vector<float>& ws, const char* where) {
    const auto p = packed(ws, N, K);
    for (const int T : {1, 5}) {
      std::vector<float> a(std::size_t(T) * N), b(a.size());
      matmul(a.data(), xs.data(), p.data(), nullptr, T, K, N);
      matmul_fused(b.data(), xs.data(), p.data(), nullptr, T, K, N);
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i], portable) << "matmul, " << where << ", T=" << T << " output " << i;
        ASSERT_EQ(b[i], has_fused_multiply_add() ? fused : portable)
            << "matmul_fused, " << where << ", T=" << T << " output " << i;
      }
    }
  };
  expect_rounding(x, w, "lanes");
  // The columns' tail (k = 8, 9): -1 in lane 0, then x[8] w[8] after the lanes are summed.
  std::vector<float> w2(w), x2(x);
  for (int n = 0; n < N; ++n) w2[std::size_t(n) * K + 4] = 0, w2[std::size_t(n) * K + 8] = big;
  for (int t = 0; t < 5; ++t) x2[std::size_t(t) * K + 4] = 0, x2[std::size_t(t) * K + 8] = big;
  expect_rounding(x2, w2, "tail");
}

TEST(Kernels, AttentionMatchesReference) {
  std::mt19937 rng(2);
  const int shapes[][3] = {{1, 0, 1},   {1, 9, 8},  {5, 0, 16}, {3, 4, 13},
                           {1, 63, 64}, {6, 10, 7}, {2, 5, 40}, {1, 6, 50}};   // T, pos0, hd
  for (const auto& s : shapes) {
    const int T = s[0], pos0 = s[1], hd = s[2], S = pos0 + T;
    const int q_stride = 3 * hd + 1, kv_stride = 2 * hd + 3, out_stride = hd + 2;   // heads read in place
    const auto q = random_vector(std::size_t(T) * q_stride, rng), k = random_vector(std::size_t(S) * kv_stride, rng),
               v = random_vector(std::size_t(S) * kv_stride, rng);
    std::vector<float> out(std::size_t(T) * out_stride, 7.0f), ref_out = out, probs(std::size_t(T) * S, 9.0f),
                                                               ref_probs = probs, scratch(S);
    attention(out.data(), out_stride, q.data(), q_stride, k.data(), v.data(), kv_stride, T, pos0, hd, 0.3f,
              probs.data(), scratch.data());
    reference::attention(ref_out.data(), out_stride, q.data(), q_stride, k.data(), v.data(), kv_stride, T, pos0, hd,
                         0.3f, ref_probs.data(), scratch.data());
    EXPECT_LT(max_abs_diff(out, ref_out), 1e-5f) << "T=" << T << " pos0=" << pos0 << " hd=" << hd;
    EXPECT_LT(max_abs_diff(probs, ref_probs), 1e-6f);
    // A head mask's factor scales the probabilities before they weigh the values; 0 silences.
    for (const float factor : {0.0f, 0.5f, 2.0f}) {
      std::vector<float> f_out = out, f_ref = out, f_probs = probs, f_ref_probs = probs;
      attention(f_out.data(), out_stride, q.data(), q_stride, k.data(), v.data(), kv_stride, T, pos0, hd, 0.3f,
                f_probs.data(), scratch.data(), {}, factor);
      reference::attention(f_ref.data(), out_stride, q.data(), q_stride, k.data(), v.data(), kv_stride, T, pos0, hd,
                           0.3f, f_ref_probs.data(), scratch.data(), {}, factor);
      EXPECT_LT(max_abs_diff(f_out, f_ref), 1e-5f) << "factor " << factor;
      for (std::size_t i = 0; i < probs.size(); ++i) ASSERT_EQ(f_probs[i], probs[i] * factor);
      if (factor == 0.0f) {
        for (int i = 0; i < T; ++i)
          for (int d = 0; d < hd; ++d) ASSERT_EQ(f_out[std::size_t(i) * out_stride + d], 0.0f);
      }
    }
    for (int i = 0; i < T; ++i)
      for (int j = pos0 + i + 1; j < S; ++j) EXPECT_EQ(probs[std::size_t(i) * S + j], 0.0f);
    // Output padding between strided rows is left alone.
    for (int i = 0; i < T; ++i) EXPECT_EQ(out[std::size_t(i) * out_stride + hd], 7.0f);
  }
}

// Decoding's attention over heads side by side gives, head by head, the bits of attention() with
// one query (itself checked against the reference above): with and without probabilities, with
// the keys cut by a mask or by the causal position, with head sizes that leave vector tails, and
// on a range of heads taken out of the middle of the rows (as the threads do).
TEST(Kernels, AttentionOneQueryEqualsAttentionPerHead) {
  std::mt19937 rng(3);
  const int shapes[][4] = {{1, 1, 16, -1}, {3, 9, 8, -1},  {12, 64, 64, -1}, {4, 23, 13, -1},
                           {2, 7, 40, 5},  {5, 30, 12, 0}, {3, 5, 64, 9}};   // heads, n_keys, hd, mask keys
  for (const auto& sh : shapes) {
    const int heads = sh[0], S = sh[1], hd = sh[2];
    const AttentionMask mask{true, sh[3]};
    const int first = 1, total = heads + 2;   // heads first .. first+heads-1 of `total` in each row
    const int kv_stride = total * hd + 3;
    const auto q = random_vector(std::size_t(total) * hd, rng), k = random_vector(std::size_t(S) * kv_stride, rng),
               v = random_vector(std::size_t(S) * kv_stride, rng);
    const std::size_t off = std::size_t(first) * hd;
    std::vector<float> factors(heads);   // a head mask: every other head silenced, the rest scaled
    for (int h = 0; h < heads; ++h) factors[h] = h % 2 ? 0.0f : 1.0f + 0.25f * h;
    for (const int variant : {0, 1, 2}) {   // 0: decoding's path, no hook; 1: probabilities; 2: and factors
      const bool with_probs = variant > 0, with_factors = variant == 2;
      std::vector<float> out(std::size_t(heads) * hd, 7.0f), probs(std::size_t(heads) * S, 9.0f),
          scratch(std::size_t(heads) * S);
      attention_one_query(out.data(), q.data() + off, k.data() + off, v.data() + off, kv_stride, S, heads, hd, 0.3f,
                          with_probs ? probs.data() : nullptr, scratch.data(), mask,
                          with_factors ? factors.data() : nullptr);
      for (int h = 0; h < heads; ++h) {
        std::vector<float> one(hd), one_probs(S), one_scratch(S);
        const std::size_t c = off + std::size_t(h) * hd;
        attention(one.data(), hd, q.data() + c, hd, k.data() + c, v.data() + c, kv_stride, 1, S - 1, hd, 0.3f,
                  one_probs.data(), one_scratch.data(), mask, with_factors ? factors[h] : 1.0f);
        for (int d = 0; d < hd; ++d)
          ASSERT_EQ(out[std::size_t(h) * hd + d], one[d])
              << "heads=" << heads << " S=" << S << " hd=" << hd << " h=" << h;
        for (int j = 0; j < S; ++j)
          ASSERT_EQ(probs[std::size_t(h) * S + j], with_probs ? one_probs[j] : 9.0f) << "h=" << h << " j=" << j;
      }
    }
  }
}

// The mask: causal or not, with the keys past `keys` (padding) hidden. Fast against reference,
// hidden keys get probability 0, and what the hidden keys and values hold changes nothing.
TEST(Kernels, AttentionMaskHidesPaddingAndOptionallyTheFuture) {
  std::mt19937 rng(4);
  const int shapes[][4] = {
      {5, 0, 16, 3}, {6, 0, 8, 6}, {4, 3, 13, 5}, {7, 0, 64, 1}, {3, 2, 40, 0}};   // T, pos0, hd, keys
  for (const auto& s : shapes)
    for (bool causal : {true, false}) {
      const int T = s[0], pos0 = s[1], hd = s[2], S = pos0 + T;
      const AttentionMask mask{causal, s[3]};
      const auto q = random_vector(std::size_t(T) * hd, rng);
      auto k = random_vector(std::size_t(S) * hd, rng), v = random_vector(std::size_t(S) * hd, rng);
      std::vector<float> out(std::size_t(T) * hd), ref_out = out, probs(std::size_t(T) * S), ref_probs = probs,
                                                   scratch(S);
      attention(out.data(), hd, q.data(), hd, k.data(), v.data(), hd, T, pos0, hd, 0.3f, probs.data(), scratch.data(),
                mask);
      reference::attention(ref_out.data(), hd, q.data(), hd, k.data(), v.data(), hd, T, pos0, hd, 0.3f,
                           ref_probs.data(), scratch.data(), mask);
      const std::string where = "T=" + std::to_string(T) + " pos0=" + std::to_string(pos0) +
                                " keys=" + std::to_string(mask.keys) + (causal ? " causal" : " bidirectional");
      EXPECT_LT(max_abs_diff(out, ref_out), 1e-5f) << where;
      EXPECT_LT(max_abs_diff(probs, ref_probs), 1e-6f) << where;
      for (int i = 0; i < T; ++i) {
        const int visible = causal ? std::min(pos0 + i + 1, mask.keys) : mask.keys;
        float sum = 0.0f;
        for (int j = 0; j < S; ++j) {
          if (j >= visible) {
            EXPECT_EQ(probs[std::size_t(i) * S + j], 0.0f) << where << " i=" << i << " j=" << j;
          }
          sum += probs[std::size_t(i) * S + j];
        }
        EXPECT_NEAR(sum, visible > 0 ? 1.0f : 0.0f, 1e-5f) << where << " i=" << i;   // no key at all: zeros
      }
      for (std::size_t j = std::size_t(std::max(mask.keys, 0)) * hd; j < k.size(); ++j) k[j] = v[j] = 1e6f;
      std::vector<float> again(out.size());
      attention(again.data(), hd, q.data(), hd, k.data(), v.data(), hd, T, pos0, hd, 0.3f, nullptr, scratch.data(),
                mask);
      EXPECT_EQ(again, out) << where;
    }
}

// The vector activations and their scalar references (libm), by name.
struct ActivationCase {
  const char* name;
  void (*fast)(float*, std::size_t);
  void (*ref)(float*, std::size_t);
};
const ActivationCase kActivations[] = {
    {"gelu_tanh", gelu_tanh, reference::gelu_tanh},
    {"gelu_erf", gelu_erf, reference::gelu_erf},
    {"silu", silu, reference::silu},
};

// A value's activation has the same bits wherever it falls in the buffer (a whole vector or the
// last n % 8): the rows of a batch and a token decoded alone must match their prompt's rows exactly.
TEST(Kernels, ActivationBitsDoNotDependOnPosition) {
  std::mt19937 rng(6);
  const auto x = random_vector(21, rng);
  for (const auto& a : kActivations) {
    std::vector<float> whole = x;
    a.fast(whole.data(), whole.size());
    for (std::size_t start : {1u, 5u, 13u, 20u}) {
      std::vector<float> part(x.begin() + std::ptrdiff_t(start), x.end());
      a.fast(part.data(), part.size());
      for (std::size_t i = 0; i < part.size(); ++i)
        ASSERT_EQ(part[i], whole[start + i]) << a.name << " start " << start << " i " << i;
    }
  }
}

TEST(Kernels, ActivationsMatchReference) {
  // Every 1/64 from -20 to 20 (the tails, where tanh and erf saturate, included), a ragged length so
  // the padded tail runs too, and values beyond exp's range.
  std::vector<float> x;
  for (int i = -20 * 64; i <= 20 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  for (float v : {-1e4f, -200.0f, -88.5f, 88.5f, 200.0f, 1e4f, 1e-7f, -1e-7f}) x.push_back(v);
  for (const auto& a : kActivations) {
    std::vector<float> fast = x, ref = x;
    a.fast(fast.data(), fast.size());
    a.ref(ref.data(), ref.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(fast[i], ref[i], 3e-7f * std::max(1.0f, std::abs(x[i]))) << a.name << " x=" << x[i];
  }
}

// The vector LayerNorm and softmax against the reference loops, on ragged sizes; LayerNorm also
// on rows far from zero mean (the two-pass variance keeps its digits), softmax with -inf entries
// (masked: exactly 0), all -inf (all 0) and large logits.
TEST(Kernels, LayerNormMatchesReference) {
  std::mt19937 rng(21);
  for (const int C : {1, 3, 8, 13, 64, 255, 768}) {
    const int T = 3;
    auto x = random_vector(std::size_t(T) * C, rng, 2.0f);
    for (int c = 0; c < C; ++c) x[std::size_t(2) * C + c] += 1000.0f;   // a row with a large mean
    const auto w = random_vector(C, rng), b = random_vector(C, rng);
    std::vector<float> fast(x.size()), ref(x.size());
    layernorm(fast.data(), x.data(), w.data(), b.data(), T, C, 1e-5f);
    reference::layernorm(ref.data(), x.data(), w.data(), b.data(), T, C, 1e-5f);
    // Against the same math in double: rows 0-1 within float rounding; row 2's float mean of
    // values near 1000 carries ~1e-4 of error into every output, in both kernels alike.
    for (int t = 0; t < T; ++t) {
      double mean = 0, var = 0;
      for (int c = 0; c < C; ++c) mean += x[std::size_t(t) * C + c];
      mean /= C;
      for (int c = 0; c < C; ++c) var += (x[std::size_t(t) * C + c] - mean) * (x[std::size_t(t) * C + c] - mean);
      var /= C;
      double err_fast = 0, err_ref = 0;
      for (int c = 0; c < C; ++c) {
        const double want = (x[std::size_t(t) * C + c] - mean) / std::sqrt(var + 1e-5) * w[c] + b[c];
        err_fast = std::max(err_fast, std::abs(fast[std::size_t(t) * C + c] - want));
        err_ref = std::max(err_ref, std::abs(ref[std::size_t(t) * C + c] - want));
      }
      const double bound = t < 2 ? 2e-5 : 2e-3;
      EXPECT_LT(err_fast, bound) << "C=" << C << " row " << t;
      EXPECT_LT(err_ref, bound) << "C=" << C << " row " << t;
    }
    std::vector<float> in_place = x;   // out may alias x
    layernorm(in_place.data(), in_place.data(), w.data(), b.data(), T, C, 1e-5f);
    EXPECT_EQ(in_place, fast) << "C=" << C;
  }
}

TEST(Kernels, SoftmaxMatchesReference) {
  std::mt19937 rng(22);
  for (const int n : {1, 2, 7, 8, 9, 31, 100, 1024}) {
    for (const float scale : {1.0f, 30.0f}) {
      auto x = random_vector(n, rng, scale);
      if (n > 3) x[1] = x[n - 2] = -INFINITY;
      std::vector<float> fast = x, ref = x;
      softmax(fast.data(), n);
      reference::softmax(ref.data(), n);
      EXPECT_LT(max_abs_diff(fast, ref), 1e-6f) << "n=" << n << " scale=" << scale;
      if (n > 3) {
        EXPECT_EQ(fast[1], 0.0f);
        EXPECT_EQ(fast[n - 2], 0.0f);
      }
      double sum = 0;
      for (float p : fast) sum += p;
      EXPECT_NEAR(sum, 1.0, 1e-5) << "n=" << n;
    }
  }
  std::vector<float> masked(19, -INFINITY);
  softmax(masked.data(), 19);
  EXPECT_EQ(masked, std::vector<float>(19, 0.0f));
}

// Training's cross-entropy: the probabilities of softmax, and log(sum e^x) of the logits given,
// against the reference's (libm), on ragged sizes, large logits and -inf entries.
TEST(Kernels, SoftmaxLogSumMatchesReference) {
  std::mt19937 rng(23);
  for (const int n : {1, 7, 8, 9, 100, 4096}) {
    for (const float scale : {1.0f, 30.0f}) {
      auto x = random_vector(n, rng, scale);
      if (n > 3) x[2] = -INFINITY;
      std::vector<float> fast = x, ref = x, probs = x;
      const float log_sum = softmax_log_sum(fast.data(), n);
      EXPECT_NEAR(log_sum, reference::softmax_log_sum(ref.data(), n), 2e-6f * std::max(1.0f, std::abs(log_sum))) << n;
      softmax(probs.data(), n);
      EXPECT_EQ(fast, probs) << "the probabilities are softmax's, n=" << n;
      // log p_i = x_i - log_sum
      for (int i = 0; i < n; ++i)
        if (fast[i] > 1e-30f) {
          ASSERT_NEAR(std::log(fast[i]), x[i] - log_sum, 1e-4f * std::max(1.0f, std::abs(x[i]))) << i;
        }
    }
  }
  std::vector<float> masked(9, -INFINITY);
  EXPECT_EQ(softmax_log_sum(masked.data(), 9), -INFINITY);
  EXPECT_EQ(masked, std::vector<float>(9, 0.0f));
}

// The slope of gelu_tanh, against the reference's (libm tanh) and against a central difference of
// the reference activation in double steps; the tail of a ragged length runs the same vector code.
TEST(Kernels, GeluTanhBackwardMatchesReference) {
  std::vector<float> x;
  for (int i = -12 * 64; i <= 12 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  for (float v : {-1e4f, -88.5f, 88.5f, 1e4f, 1e-7f}) x.push_back(v);
  std::mt19937 rng(24);
  const auto d = random_vector(int(x.size()), rng);
  std::vector<float> fast = d, ref = d;
  gelu_tanh_backward(fast.data(), x.data(), x.size());
  reference::gelu_tanh_backward(ref.data(), x.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(fast[i], ref[i], 1e-6f * std::max(1.0f, std::abs(d[i]))) << "x=" << x[i];
  for (float v : {-3.0f, -0.5f, 0.0f, 0.7f, 2.5f}) {
    float one = 1.0f, lo = v - 1e-2f, hi = v + 1e-2f;
    gelu_tanh_backward(&one, &v, 1);
    reference::gelu_tanh(&lo, 1);
    reference::gelu_tanh(&hi, 1);
    EXPECT_NEAR(one, (hi - lo) / 2e-2f, 1e-3f) << "x=" << v;
  }
}

TEST(Kernels, ReferenceSoftmaxIsStable) {
  std::vector<float> x = {1000.0f, 1000.0f, -INFINITY};
  reference::softmax(x.data(), 3);
  EXPECT_FLOAT_EQ(x[0], 0.5f);
  EXPECT_FLOAT_EQ(x[1], 0.5f);
  EXPECT_EQ(x[2], 0.0f);
  std::vector<float> none = {-INFINITY, -INFINITY};
  reference::softmax(none.data(), 2);
  EXPECT_EQ(none[0], 0.0f);
}

TEST(Kernels, ReferenceActivationsAtKnownPoints) {
  // Values from torch: F.gelu(x), F.gelu(x, approximate='tanh'), F.silu(x) at x = 1 and -2.
  std::vector<float> erf = {1.0f, -2.0f}, tanh_ = erf, silu_ = erf, relu_ = erf;
  reference::gelu_erf(erf.data(), 2);
  reference::gelu_tanh(tanh_.data(), 2);
  reference::silu(silu_.data(), 2);
  reference::relu(relu_.data(), 2);
  EXPECT_NEAR(erf[0], 0.8413447f, 1e-6);
  EXPECT_NEAR(erf[1], -0.04550026f, 1e-6);
  EXPECT_NEAR(tanh_[0], 0.8411920f, 1e-6);
  EXPECT_NEAR(tanh_[1], -0.04540231f, 1e-6);
  EXPECT_NEAR(silu_[0], 0.7310586f, 1e-6);
  EXPECT_NEAR(silu_[1], -0.2384058f, 1e-6);
  EXPECT_EQ(relu_[1], 0.0f);
}

TEST(Kernels, ReferenceLayerNormNormalises) {
  std::vector<float> x = {1, 2, 3, 4, 10, 10, 10, 10}, w = {1, 1, 1, 1}, b = {0, 0, 0, 1}, out(8);
  reference::layernorm(out.data(), x.data(), w.data(), b.data(), 2, 4, 1e-5f);
  // row 1: mean 2.5, biased var 1.25
  EXPECT_NEAR(out[0], -1.5f / std::sqrt(1.25f + 1e-5f), 1e-6);
  EXPECT_NEAR(out[3], 1.5f / std::sqrt(1.25f + 1e-5f) + 1.0f, 1e-6);
  EXPECT_NEAR(out[4], 0.0f, 1e-6);   // constant row: eps keeps it finite
  EXPECT_NEAR(out[7], 1.0f, 1e-6);
}

// Int8 blocks: every value comes back within half a step (scale / 2) of where it was, padding is
// zero, and each block's scale is its largest magnitude / 127.
TEST(Kernels, QuantizeWeightsRoundTrip) {
  std::mt19937 rng(11);
  for (const auto& [N, K] : {std::pair{5, 70}, std::pair{8, 32}, std::pair{1, 1}, std::pair{3, 100}}) {
    auto w = random_vector(std::size_t(N) * K, rng);
    w[0] = 0.0f;
    const Q8Shape s(N, K);
    std::vector<std::int8_t> q(s.q_size(), 99);
    std::vector<float> d(s.d_size(), 99.0f);
    quantize_weights_q8(q.data(), d.data(), w.data(), N, K);
    for (int n = 0; n < s.Np; ++n)
      for (int b = 0; b < s.blocks; ++b) {
        const float scale = d[q8_scale_index(s, n, b)];
        float amax = 0.0f;
        for (int k = b * kQ8Block; k < (b + 1) * kQ8Block; ++k) {
          const int v = q8_weight(q.data(), s, n, k);
          if (n >= N || k >= K) {
            ASSERT_EQ(v, 0) << "padding at n=" << n << " k=" << k;
            continue;
          }
          const float x = w[std::size_t(n) * K + k];
          amax = std::max(amax, std::abs(x));
          ASSERT_LE(std::abs(v * scale - x), scale * 0.5f * 1.0001f) << "n=" << n << " k=" << k;
          ASSERT_GE(v, -127);
        }
        ASSERT_FLOAT_EQ(scale, amax / 127.0f) << "n=" << n << " b=" << b;
      }
  }
}

// Values the fuzzer found (tests/fuzz/corpus/model/crash-*): NaN and infinity make the block's
// scale non-finite, so that products come out non-finite as F32's would, with the values 0; tiny
// (subnormal) values stay within [-127, 127].
TEST(Kernels, QuantizeNonFiniteAndSubnormalBlocks) {
  std::vector<float> x(3 * kQ8Block, 0.5f);
  x[3] = NAN;
  x[kQ8Block + 5] = INFINITY;
  for (int i = 2 * kQ8Block; i < 3 * kQ8Block; ++i) x[i] = (i % 2 ? 1 : -1) * 1e-40f * float(i % 7 + 1);
  Q8Activations q;
  quantize_activations_q8(q, x.data(), 1, int(x.size()));
  EXPECT_TRUE(std::isnan(q.d[0]));
  EXPECT_TRUE(std::isinf(q.d[1]));
  for (int i = 0; i < 2 * kQ8Block; ++i) EXPECT_EQ(q.q[i], 0) << i;
  for (int i = 2 * kQ8Block; i < 3 * kQ8Block; ++i) {
    EXPECT_LE(std::abs(q.q[i]), 127) << i;
    EXPECT_EQ(q.q[i] > 0, x[i] > 0) << i;
  }
}

// The fast quantizer gives the plain reference's bits (scale and values), for weights and
// activations, on blocks that reach every branch: halves and values just below them (0.49999997
// must round to 0), values that clamp, NaN, infinities, -0, subnormal blocks (a scale with no
// finite inverse), huge values, blocks shorter than 32, random blocks at scales from 1e-40 to 1e30.
TEST(Kernels, QuantizeEqualsReference) {
  std::mt19937 rng(15);
  std::vector<std::vector<float>> blocks;
  std::vector<float> halves(32);
  for (int i = 0; i < 32; ++i) halves[i] = (i % 2 ? -1.0f : 1.0f) * (float(i * 4) + 0.5f);   // max 124.5
  halves[0] = 127.0f;                                                                        // scale exactly 1
  halves[1] = 0.49999997f;
  halves[2] = -0.49999997f;
  halves[3] = 126.5f;
  halves[4] = -0.5f;
  halves[5] = 1.5f;
  halves[6] = std::nextafter(2.5f, 0.0f);
  blocks.push_back(halves);
  blocks.push_back({1.0f, NAN, 2.0f});
  blocks.push_back({1.0f, INFINITY, -3.0f});
  blocks.push_back({-0.0f, 0.0f, -0.0f});
  blocks.push_back({1e-37f, 1e-38f, -2e-39f, 5e-45f, -1e-37f});   // max below 3.7e-37: subnormal scale
  blocks.push_back({3e38f, -3.4e38f, 1.0f, 1e30f});
  blocks.push_back(std::vector<float>(32, 0.0f));
  for (int r = 0; r < 400; ++r) {
    std::vector<float> b(r % 5 == 0 ? 1 + r % 31 : 32);
    const float scale = std::pow(10.0f, float(r % 71) - 40.0f);
    for (float& x : b) x = std::normal_distribution<float>(0.0f, scale)(rng);
    blocks.push_back(b);
  }
  for (const auto& b : blocks) {
    const int n = int(b.size());
    std::int8_t want[kQ8Block];
    float want_d;
    reference::quantize_q8(want, &want_d, b.data(), n);
    Q8Activations x;
    quantize_activations_q8(x, b.data(), 1, n);
    const Q8Shape s(1, n);
    std::vector<std::int8_t> wq(s.q_size());
    std::vector<float> wd(s.d_size());
    quantize_weights_q8(wq.data(), wd.data(), b.data(), 1, n);
    for (const float got : {x.d[0], wd[0]}) {
      if (std::isnan(want_d))
        ASSERT_TRUE(std::isnan(got)) << "n=" << n << " first=" << b[0];
      else
        ASSERT_EQ(got, want_d) << "n=" << n << " first=" << b[0];
    }
    for (int i = 0; i < kQ8Block; ++i) {
      ASSERT_EQ(x.q[i], want[i]) << "activations, i=" << i << " v=" << (i < n ? b[i] : 0.0f) << " d=" << want_d;
      ASSERT_EQ(q8_weight(wq.data(), s, 0, i), want[i]) << "weights, i=" << i;
    }
  }
  // The cases the old quantizer got wrong: 0.49999997 (scale 1) rounds to 0, and the values of a
  // subnormal block keep their proportions.
  std::int8_t q[kQ8Block];
  float d;
  reference::quantize_q8(q, &d, halves.data(), 32);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], 0);
  EXPECT_EQ(q[3], 127);
  EXPECT_EQ(q[4], -1);
  EXPECT_EQ(q[5], 2);
  EXPECT_EQ(q[6], 2);
  reference::quantize_q8(q, &d, blocks[4].data(), 5);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 13);   // 1e-38 / (1e-37 / 127) = 12.7
  EXPECT_EQ(q[2], -3);   // -2.54
}

// The stored bytes (quantized.h): the value at an even k has its top bit flipped, at an odd k not.
TEST(Kernels, QuantizedWeightBytes) {
  const float w[4] = {1.0f, -1.0f, -1.0f, 0.5f};   // scale 1/127: 127, -127, -127, 64 (63.5 rounds away from 0)
  const Q8Shape s(1, 4);
  std::vector<std::int8_t> q(s.q_size());
  std::vector<float> d(s.d_size());
  quantize_weights_q8(q.data(), d.data(), w, 1, 4);
  EXPECT_EQ(q[0], std::int8_t(127 ^ 0x80));
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], std::int8_t(-127 ^ 0x80));
  EXPECT_EQ(q[3], 64);
  EXPECT_EQ(q[4], std::int8_t(0x80));   // padding: 0 at an even k
  EXPECT_EQ(q[5], 0);
  const int values[4] = {127, -127, -127, 64};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(q8_weight(q.data(), s, 0, k), values[k]) << k;
}

TEST(Kernels, QuantizeActivationsRoundTrip) {
  std::mt19937 rng(12);
  const int T = 3, K = 45;
  auto x = random_vector(std::size_t(T) * K, rng, 3.0f);
  x[5] = 400.0f;   // an outlier costs precision only within its own block
  const Q8Shape s(1, K);
  Q8Activations q;
  quantize_activations_q8(q, x.data(), T, K);
  ASSERT_EQ(q.T, T);
  ASSERT_EQ(q.Kp, s.Kp);
  ASSERT_EQ(q.blocks, s.blocks);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < s.Kp; ++k) {
      const int v = q.q[std::size_t(t) * s.Kp + k];
      if (k >= K) {
        ASSERT_EQ(v, 0);
        continue;
      }
      const float scale = q.d[std::size_t(t) * s.blocks + k / kQ8Block];
      ASSERT_LE(std::abs(v * scale - x[std::size_t(t) * K + k]), scale * 0.5f * 1.0001f);
      ASSERT_LE(std::abs(v), 127);
    }
  EXPECT_FLOAT_EQ(q.d[0], 400.0f / 127.0f);
  EXPECT_LT(q.d[1], 0.2f);   // the second block of row 0 keeps its own, fine scale
  // The other forms, from the values: per block e_j = q[2j], o_j = q[2j+1] - 256 q[2j], and the
  // sums of q at even k and over the block, times 128. The pairs and even sums are made where the
  // kernels read them (quantized.h: the WebAssembly build), empty elsewhere; the sums everywhere.
  ASSERT_EQ(q.pairs.size(), kQ8Pairs ? q.q.size() : 0);
  ASSERT_EQ(q.even_sum128.size(), kQ8Pairs ? q.d.size() : 0);
  ASSERT_EQ(q.sum128.size(), q.d.size());
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < s.blocks; ++b) {
      const std::size_t tb = std::size_t(t) * s.blocks + b;
      const std::int8_t* v = q.q.data() + std::size_t(t) * s.Kp + b * kQ8Block;
      int even = 0, all = 0;
      for (int j = 0; j < kQ8Block / 2; ++j) {
        if (kQ8Pairs) {
          ASSERT_EQ(q.pairs[tb * kQ8Block + j], v[2 * j]);
          ASSERT_EQ(q.pairs[tb * kQ8Block + kQ8Block / 2 + j], v[2 * j + 1] - 256 * v[2 * j]);
        }
        even += v[2 * j];
        all += v[2 * j] + v[2 * j + 1];
      }
      if (kQ8Pairs) {
        ASSERT_EQ(q.even_sum128[tb], 128 * even);
      }
      ASSERT_EQ(q.sum128[tb], 128 * all);
    }
}

// Every int8 kernel this CPU has equals the reference bit for bit, on ragged shapes, at the
// extremes and on a slice of the rows (tests/quantized_matmul_cases.h).
TEST(Kernels, MatmulQ8EqualsReference) {
  std::mt19937 rng(13);
  test_quantized::expect_kernels_equal_reference<std::int8_t>(rng);
}

// Against the F32 product: each of x and w is off by at most half a step per value, so the
// error stays a small fraction of sum |x| |w| (measured 0.12% here; bound 1%).
TEST(Kernels, MatmulQ8ApproximatesF32) {
  std::mt19937 rng(14);
  const double worst = test_quantized::worst_error_against_f32<std::int8_t>(rng);
  EXPECT_LT(worst, 0.01);
  EXPECT_GT(worst, 0.0);   // it did quantize
}

}   // namespace
}   // namespace glassbox::kernels
