// Sampling: settings validation, top-k and top-p sets, empirical frequencies against the softmax,
// and reproducibility from a seed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "glassbox/error.h"
#include "glassbox/sampler.h"

namespace glassbox {
namespace {

SamplingSettings settings(float temperature, int top_k, float top_p, std::uint64_t seed = 1) {
  SamplingSettings s;
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.seed = seed;
  return s;
}

const std::vector<float> kLogits = {1.0f, 3.0f, -2.0f, 2.5f, 0.0f, 2.9f, -INFINITY, 1.5f};

std::vector<double> softmax(const std::vector<float>& logits, float temperature) {
  double max = -INFINITY, sum = 0;
  for (float l : logits) max = std::max(max, double(l) / temperature);
  std::vector<double> p;
  for (float l : logits) sum += p.emplace_back(std::exp(double(l) / temperature - max));
  for (auto& x : p) x /= sum;
  return p;
}

TEST(Sampler, InvalidSettingsAreErrors) {
  EXPECT_THROW(Sampler(settings(NAN, 0, 1)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(-0.5f, 0, 1)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(INFINITY, 0, 1)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(1, -1, 1)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(1, 0, 0)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(1, 0, 1.5f)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(1, 0, NAN)), InvalidArgument);
  EXPECT_THROW(Sampler(settings(1, 0, -0.1f)), InvalidArgument);
  try {
    Sampler(settings(1, 0, 2));
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("top-p must be in (0, 1]"), std::string::npos);
  }
  EXPECT_NO_THROW(Sampler(settings(0, 0, 1)));
  EXPECT_NO_THROW(Sampler(settings(0.7f, 40, 0.9f)));
}

TEST(Sampler, BrokenLogitsAreErrors) {
  Sampler s(settings(1, 0, 1));
  EXPECT_THROW(s.sample(std::vector<float>{0.0f, NAN}), InvalidArgument);
  EXPECT_THROW(s.sample(std::vector<float>{0.0f, INFINITY}), InvalidArgument);
  EXPECT_THROW(s.sample(std::vector<float>{-INFINITY, -INFINITY}), InvalidArgument);
  EXPECT_THROW(s.sample(std::vector<float>{}), InvalidArgument);
}

TEST(Sampler, GreedyTakesTheArgmaxAndTheLowestIdOnTies) {
  Sampler s(settings(0, 0, 1));
  EXPECT_EQ(s.sample(kLogits), 1);
  EXPECT_EQ(s.sample(std::vector<float>{-INFINITY, 2.0f, 5.0f, 5.0f}), 2);
}

TEST(Sampler, ExtremeTemperatures) {
  // Tiny: every draw is the argmax (no overflow to inf/NaN picking some other token).
  for (float t : {1e-6f, 1e-12f, 1e-30f, 1e-45f}) {
    Sampler s(settings(t, 0, 1, 5));
    for (int i = 0; i < 200; ++i) ASSERT_EQ(s.sample(kLogits), 1) << "temperature " << t;
  }
  // Huge: close to uniform over the finite logits, never the -inf one.
  Sampler s(settings(1e30f, 0, 1, 5));
  std::vector<int> counts(kLogits.size());
  for (int i = 0; i < 7000; ++i) ++counts[s.sample(kLogits)];
  EXPECT_EQ(counts[6], 0);
  for (int id : {0, 1, 2, 3, 4, 5, 7}) EXPECT_NEAR(counts[id], 1000, 150) << id;
}

TEST(Sampler, TopKNeverLeavesTheKBest) {
  for (int k : {1, 2, 3}) {
    Sampler s(settings(2.0f, k, 1, 7));
    std::set<int> seen;
    for (int i = 0; i < 3000; ++i) seen.insert(s.sample(kLogits));
    const std::set<int> best[] = {{1}, {1, 5}, {1, 5, 3}};
    EXPECT_EQ(seen, best[k - 1]) << "k=" << k;   // all of the k best appear, nothing else
  }
}

TEST(Sampler, TopPKeepsOnlyTheNucleus) {
  // Sorted probabilities at T=1: ids 1 (.33), 5 (.30), 3 (.20), 7 (.07), ...  p=0.6 needs {1, 5}.
  const auto p = softmax(kLogits, 1.0f);
  ASSERT_LT(p[1], 0.6);
  ASSERT_GT(p[1] + p[5], 0.6);
  Sampler s(settings(1.0f, 0, 0.6f, 3));
  std::map<int, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[s.sample(kLogits)];
  EXPECT_EQ(counts.size(), 2u);
  // Renormalised inside the nucleus.
  EXPECT_NEAR(counts[1] / double(n), p[1] / (p[1] + p[5]), 0.015);
}

TEST(Sampler, FrequenciesMatchTheSoftmax) {
  for (float temperature : {1.0f, 0.5f, 2.0f}) {
    const auto p = softmax(kLogits, temperature);
    Sampler s(settings(temperature, 0, 1, 11));
    const int n = 100000;
    std::vector<int> counts(kLogits.size());
    for (int i = 0; i < n; ++i) ++counts[s.sample(kLogits)];
    EXPECT_EQ(counts[6], 0);   // -inf is never sampled
    // Pearson chi-square over the 7 possible ids (6 degrees of freedom): 99.9th percentile 22.5.
    double chi2 = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0) chi2 += std::pow(counts[i] - n * p[i], 2) / (n * p[i]);
    EXPECT_LT(chi2, 22.5) << "temperature " << temperature;
  }
}

TEST(Sampler, SameSeedSameTokensOtherSeedOtherTokens) {
  auto draw = [](std::uint64_t seed) {
    Sampler s(settings(1.5f, 0, 0.95f, seed));
    std::vector<int> out;
    for (int i = 0; i < 200; ++i) out.push_back(s.sample(kLogits));
    return out;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
}

// transformers' RepetitionPenaltyLogitsProcessor: torch.where(score < 0, score * penalty,
// score / penalty) over the gathered logits of the ids in input_ids. Expected values by hand.
TEST(RepetitionPenalty, DividesPositiveMultipliesNegativeOncePerId) {
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f, -INFINITY};
  const std::vector<std::int32_t> seen = {0, 1, 1, 4, 5, 0};   // repeats are penalised once
  apply_repetition_penalty(logits, seen, 2.0f);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -INFINITY}));
  std::vector<float> boost = {2.0f, -1.0f};   // a penalty below 1 favours what was seen
  apply_repetition_penalty(boost, std::vector<std::int32_t>{0, 1}, 0.5f);
  EXPECT_EQ(boost, (std::vector<float>{4.0f, -0.5f}));
  std::vector<float> one = {0.3f};
  apply_repetition_penalty(one, std::vector<std::int32_t>{0}, 1.2f);
  EXPECT_EQ(one[0], 0.3f / 1.2f);   // in float, as torch computes on float32 scores
  EXPECT_THROW(apply_repetition_penalty(logits, std::vector<std::int32_t>{6}, 2.0f), InvalidArgument);
  EXPECT_THROW(apply_repetition_penalty(logits, std::vector<std::int32_t>{-1}, 2.0f), InvalidArgument);
}

TEST(RepetitionPenalty, ComesBeforeGreedysArgmax) {
  SamplingSettings s = settings(0, 0, 1);
  s.repetition_penalty = 2.0f;
  Sampler sampler(s);
  // 3.0 / 2 = 1.5 < 2.0: the seen best token loses; -1.0 * 2 = -2.0 < -1.5 likewise.
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 2.0f}, std::vector<std::int32_t>{0}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{-1.0f, -1.5f}, std::vector<std::int32_t>{0}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 2.0f}, std::vector<std::int32_t>{1}), 0);
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 2.0f}), 0);   // nothing seen
  s.repetition_penalty = 0.25f;                                   // 1.0 / 0.25 = 4.0 > 2.0
  EXPECT_EQ(Sampler(s).sample(std::vector<float>{1.0f, 2.0f}, std::vector<std::int32_t>{0}), 0);
}

TEST(RepetitionPenalty, ComesBeforeTemperatureTopKAndTopP) {
  // Sampling with the penalty draws exactly what sampling without it draws from the logits
  // penalised by hand (kLogits: ids 1, 3, 4 seen; 3.0 / 1.5 = 2, 2.5 / 1.5, 0 stays 0).
  std::vector<float> by_hand = kLogits;
  by_hand[1] = 2.0f;
  by_hand[3] = 2.5f / 1.5f;
  for (const auto& [temperature, top_k, top_p] : {std::tuple{0.7f, 0, 1.0f}, {1.3f, 3, 1.0f}, {1.0f, 0, 0.6f}}) {
    SamplingSettings with = settings(temperature, top_k, top_p, 42);
    with.repetition_penalty = 1.5f;
    Sampler penalised(with), plain(settings(temperature, top_k, top_p, 42));
    for (int i = 0; i < 500; ++i)
      ASSERT_EQ(penalised.sample(kLogits, std::vector<std::int32_t>{1, 3, 4, 3}), plain.sample(by_hand));
  }
}

TEST(RepetitionPenalty, InvalidValuesAreErrors) {
  for (const float bad : {0.0f, -1.0f, NAN, INFINITY}) {
    SamplingSettings s;
    s.repetition_penalty = bad;
    EXPECT_THROW(Sampler{s}, InvalidArgument) << bad;
  }
}

TEST(MostProbable, SoftmaxOfTheLogitsMostProbableFirst) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -INFINITY};
  const auto top = most_probable(logits, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].id, 1);   // tie with id 3: the lower id first
  EXPECT_EQ(top[1].id, 3);
  EXPECT_EQ(top[2].id, 2);
  const double z = std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(top[0].probability, std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(top[2].probability, std::exp(2.0) / z, 1e-6);
  EXPECT_EQ(most_probable(logits, 99).size(), logits.size());   // clamped to the vocabulary
  EXPECT_EQ(most_probable(logits, 99).back().probability, 0.0f);
  EXPECT_TRUE(most_probable(logits, 0).empty());
  EXPECT_THROW(most_probable(logits, -1), InvalidArgument);
  EXPECT_THROW(most_probable(std::vector<float>{1.0f, NAN}, 1), InvalidArgument);
}

TEST(Rng, UniformIsInUnitIntervalAndSplitmixSequence) {
  Rng rng(0);
  // splitmix64 from state 0: first outputs as published with the algorithm.
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ull);
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}   // namespace
}   // namespace glassbox
