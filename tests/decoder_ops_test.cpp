// The modern decoders' reference operations (kernels/reference.h: rmsnorm, rotary, swiglu,
// repeat_kv, attention_gqa; model/rotary.h: rotary_inv_freq) against closed forms, hand-checked
// cases, and numbers from plain PyTorch (scripts/make_decoder_ops_fixture.py ->
// tests/fixtures/decoder-ops/ops.json). Each comparison prints the largest difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/reference.h"
#include "model/rotary.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace ref = kernels::reference;
using nlohmann::json;

const json& ops() {
  static const json j = test::read_json(test::fixture_dir("decoder-ops") / "ops.json");
  return j;
}

std::vector<float> floats(const json& j) { return j.get<std::vector<float>>(); }

// Largest |a - b| / max(1, |b|) over the two arrays, which must be as long as each other.
float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(a[i] - b[i]) / std::max(1.0f, std::abs(b[i])));
  return m;
}

TEST(DecoderOps, RmsNormClosedForm) {
  // row (3, 4): mean square 12.5; out = x / sqrt(12.5) * weight
  const std::vector<float> x = {3.0f, 4.0f}, w = {1.0f, 2.0f};
  std::vector<float> out(2);
  ref::rmsnorm(out.data(), x.data(), w.data(), 1, 2, 0.0f);
  EXPECT_NEAR(out[0], 3.0 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(out[1], 8.0 / std::sqrt(12.5), 1e-6);
  // eps under the root: a zero row stays zero, and 1/sqrt(eps) scales a tiny one
  const std::vector<float> zero = {0.0f, 0.0f};
  ref::rmsnorm(out.data(), zero.data(), w.data(), 1, 2, 1e-6f);
  EXPECT_EQ(out[0], 0.0f);
}

TEST(DecoderOps, RmsNormMatchesPyTorch) {
  const json& c = ops()["rmsnorm"];
  const auto x = floats(c["x"]), w = floats(c["weight"]);
  std::vector<float> out(x.size());
  ref::rmsnorm(out.data(), x.data(), w.data(), c["T"], c["C"], c["eps"].get<float>());
  const float d = max_diff(out, floats(c["expected"]));
  std::printf("rmsnorm: max diff %g\n", d);
  EXPECT_LT(d, 1e-6f);
}

TEST(DecoderOps, SwigluClosedForm) {
  const std::vector<float> gate = {0.0f, 1.0f, -2.0f}, up = {5.0f, 3.0f, 0.5f};
  std::vector<float> out(3);
  ref::swiglu(out.data(), gate.data(), up.data(), 3);
  EXPECT_EQ(out[0], 0.0f);   // silu(0) = 0
  EXPECT_NEAR(out[1], 3.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(out[2], 0.5 * -2.0 / (1.0 + std::exp(2.0)), 1e-6);
  const json& c = ops()["swiglu"];
  const auto g = floats(c["gate"]), u = floats(c["up"]);
  std::vector<float> o(g.size());
  ref::swiglu(o.data(), g.data(), u.data(), g.size());
  EXPECT_LT(max_diff(o, floats(c["expected"])), 1e-6f);
}

TEST(DecoderOps, InverseFrequenciesMatchPyTorch) {
  Rotary r;
  const json& d = ops()["inv_freq_default"];
  r.theta = d["theta"];
  EXPECT_LT(max_diff(rotary_inv_freq(r, d["dim"]), floats(d["values"])), 1e-7f);
  // closed form: 1 / 10000^(2i/16)
  const auto f = rotary_inv_freq(r, 16);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(f[i], std::pow(10000.0, -2.0 * i / 16), 1e-6 * f[i]) << i;

  const json& l = ops()["inv_freq_linear"];
  r.scaling = RopeScaling::Linear;
  r.factor = l["factor"];
  EXPECT_LT(max_diff(rotary_inv_freq(r, l["dim"]), floats(l["values"])), 1e-7f);

  const json& q = ops()["inv_freq_llama3"];
  r.scaling = RopeScaling::Llama3;
  r.theta = q["theta"];
  r.factor = q["factor"];
  r.low_freq_factor = q["low_freq_factor"];
  r.high_freq_factor = q["high_freq_factor"];
  r.original_max_position_embeddings = q["original_max_position_embeddings"];
  const auto got = rotary_inv_freq(r, q["dim"]), want = floats(q["values"]);
  ASSERT_EQ(got.size(), want.size());
  float worst = 0.0f;   // relative: the low frequencies are ~1e-5
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / want[i]);
  std::printf("llama3 inv_freq: max relative diff %g\n", worst);
  EXPECT_LT(worst, 1e-6f);
  // the three regimes: the highest frequency kept, the lowest divided by the factor
  Rotary plain;
  plain.theta = r.theta;
  const auto base = rotary_inv_freq(plain, 64);
  EXPECT_EQ(got[0], base[0]);
  EXPECT_FLOAT_EQ(got[31], base[31] / 32.0f);
  EXPECT_TRUE(got[16] < base[16] && got[16] > base[16] / 32.0f);   // blended (wavelength 2,048 .. 8,192)
}

TEST(DecoderOps, RotaryClosedForm) {
  // One head of 4, all rotating: pairs (0, 2) at inv_freq 1 and (1, 3) at 1/100, position 3.
  const std::vector<float> inv = {1.0f, 0.01f};
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  ref::rotary(x.data(), 4, 1, 1, 4, 4, 3, inv.data());
  EXPECT_NEAR(x[0], 1 * std::cos(3.0) - 3 * std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], 3 * std::cos(3.0) + 1 * std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[1], 2 * std::cos(0.03) - 4 * std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], 4 * std::cos(0.03) + 2 * std::sin(0.03), 1e-6);
  // Position 0 leaves x as it is; dims past rot_dim never move.
  std::vector<float> y = {1, 2, 3, 4, 5, 6};
  ref::rotary(y.data(), 6, 1, 1, 6, 4, 0, inv.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  ref::rotary(y.data(), 6, 1, 1, 6, 4, 7, inv.data());
  EXPECT_EQ(y[4], 5.0f);
  EXPECT_EQ(y[5], 6.0f);
}

TEST(DecoderOps, RotaryScoresDependOnRelativePositionOnly) {
  // q at m and k at n: rope(q, m) . rope(k, n) is a function of m - n.
  Rotary r;
  const auto inv = rotary_inv_freq(r, 8);
  const std::vector<float> q0 = {0.3f, -1.2f, 0.7f, 2.0f, -0.4f, 0.9f, 1.1f, -0.6f};
  const std::vector<float> k0 = {1.5f, 0.2f, -0.8f, 0.4f, 1.0f, -1.3f, 0.5f, 0.1f};
  const auto score = [&](int m, int n) {
    auto q = q0, k = k0;
    ref::rotary(q.data(), 8, 1, 1, 8, 8, m, inv.data());
    ref::rotary(k.data(), 8, 1, 1, 8, 8, n, inv.data());
    float dot = 0.0f;
    for (int d = 0; d < 8; ++d) dot += q[d] * k[d];
    return dot;
  };
  EXPECT_NEAR(score(5, 2), score(13, 10), 1e-4);
  EXPECT_NEAR(score(7, 7), score(0, 0), 1e-4);
  EXPECT_GT(std::abs(score(5, 2) - score(5, 4)), 1e-3);   // and it does depend on it
}

TEST(DecoderOps, RotaryMatchesPyTorch) {
  const json& c = ops()["rotary"];
  auto x = floats(c["x"]);
  Rotary r;
  r.theta = c["theta"];
  const int rot = c["rot_dim"], hd = c["hd"], heads = c["heads"];
  const auto inv = rotary_inv_freq(r, rot);
  ref::rotary(x.data(), heads * hd, c["T"], heads, hd, rot, c["pos0"], inv.data());
  const float d = max_diff(x, floats(c["expected"]));
  std::printf("rotary: max diff %g\n", d);
  EXPECT_LT(d, 1e-6f);
}

TEST(DecoderOps, FirstVisibleKey) {
  EXPECT_EQ(ref::first_visible_key(10, 0), 0);   // no window
  EXPECT_EQ(ref::first_visible_key(10, 3), 8);   // keys 8, 9, 10
  EXPECT_EQ(ref::first_visible_key(2, 3), 0);
  EXPECT_EQ(ref::first_visible_key(2, 1), 2);   // itself only
}

TEST(DecoderOps, RepeatKv) {
  // 2 positions, 2 kv heads of 2 -> 4 query heads: heads 0, 1 read kv head 0; heads 2, 3 kv head 1
  const std::vector<float> kv = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(16);
  ref::repeat_kv(out.data(), kv.data(), 2, 2, 4, 2);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4, 5, 6, 5, 6, 7, 8, 7, 8}));
}

TEST(DecoderOps, GroupedAttentionEqualsAttentionOnRepeatedHeads) {
  // attention_gqa with shared heads == the per-head reference attention on repeat_kv's heads.
  const int T = 5, H = 4, KV = 2, hd = 3;
  std::vector<float> q(T * H * hd), k(T * KV * hd), v(T * KV * hd);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.7f * i) * 2;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::cos(1.3f * i) * 2;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.4f * i + 1);
  std::vector<float> out(T * H * hd), probs(H * T * T);
  ref::attention_gqa(out.data(), q.data(), k.data(), v.data(), T, 0, H, KV, hd, 0.5f, 0, probs.data());
  std::vector<float> k4(T * H * hd), v4(T * H * hd), want(T * H * hd), want_p(T * T), scratch(T);
  ref::repeat_kv(k4.data(), k.data(), T, KV, H, hd);
  ref::repeat_kv(v4.data(), v.data(), T, KV, H, hd);
  for (int h = 0; h < H; ++h) {
    ref::attention(want.data() + h * hd, H * hd, q.data() + h * hd, H * hd, k4.data() + h * hd, v4.data() + h * hd,
                   H * hd, T, 0, hd, 0.5f, want_p.data(), scratch.data());
    for (int i = 0; i < T * T; ++i) EXPECT_FLOAT_EQ(probs[h * T * T + i], want_p[i]) << h << " " << i;
  }
  EXPECT_LT(max_diff(out, want), 1e-6f);
}

TEST(DecoderOps, WindowOfOneKeySeesItself) {
  const int T = 3, hd = 2;
  const std::vector<float> q = {1, 0, 0, 1, 1, 1}, k = {5, 5, -5, 5, 5, -5}, v = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(T * hd), probs(T * T);
  ref::attention_gqa(out.data(), q.data(), k.data(), v.data(), T, 0, 1, 1, hd, 1.0f, 1, probs.data());
  EXPECT_EQ(out, v);
  EXPECT_EQ(probs, (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(DecoderOps, GroupedWindowedAttentionMatchesPyTorch) {
  const json& c = ops()["attention_gqa"];
  const auto q = floats(c["q"]), k = floats(c["k"]), v = floats(c["v"]);
  const int T = c["T"], pos0 = c["pos0"], H = c["n_head"], hd = c["hd"];
  std::vector<float> out(T * H * hd), probs(H * T * (pos0 + T));
  ref::attention_gqa(out.data(), q.data(), k.data(), v.data(), T, pos0, H, c["n_kv"], hd, c["scale"].get<float>(),
                     c["window"], probs.data());
  const float dout = max_diff(out, floats(c["out"])), dp = max_diff(probs, floats(c["probs"]));
  std::printf("attention_gqa: max diff out %g, probs %g\n", dout, dp);
  EXPECT_LT(dout, 1e-5f);
  EXPECT_LT(dp, 1e-5f);
  // the window hides keys: the last query (position 5, window 3) sees keys 3..5 only
  for (int j = 0; j < 3; ++j) EXPECT_EQ(probs[(0 * T + T - 1) * (pos0 + T) + j], 0.0f);
  EXPECT_GT(probs[(0 * T + T - 1) * (pos0 + T) + 3], 0.0f);
}

}   // namespace
}   // namespace glassbox
