// The batches of a step (glassbox/training_batch.h), each drawn from (seed, step) alone.
#include "glassbox/training_batch.h"

#include <algorithm>
#include <string>

#include "glassbox/error.h"
#include "glassbox/random.h"

namespace glassbox {

void sample_batch(std::span<const std::int32_t> stream, int B, int T, std::uint64_t seed, int step,
                  std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) {
  if (B < 1 || T < 1) throw InvalidArgument("sample_batch: B and T must be positive");
  if (stream.size() < static_cast<std::size_t>(T) + 1)
    throw InvalidArgument("the training text has " + std::to_string(stream.size()) + " tokens; windows of " +
                          std::to_string(T + 1) + " need at least that many (use a shorter sequence length)");
  // Both hashed: seeds s and s+1 must not give shifted copies of one stream (SplitMix64 steps its
  // state by a constant, so a state built as seed * constant + step would).
  Rng rng(Rng(seed).next() ^ Rng(~static_cast<std::uint64_t>(step)).next());
  const std::uint64_t starts = stream.size() - static_cast<std::size_t>(T);   // offsets 0 .. size-T-1
  inputs.resize(std::size_t(B) * T);
  targets.resize(std::size_t(B) * T);
  for (int b = 0; b < B; ++b) {
    const std::size_t start = rng.below(starts);
    std::copy_n(stream.begin() + start, T, inputs.begin() + std::size_t(b) * T);
    std::copy_n(stream.begin() + start + 1, T, targets.begin() + std::size_t(b) * T);
  }
}

void mask_tokens(std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets, int B, int T,
                 std::int32_t mask_id, int vocab_size, std::uint64_t seed, int step, double rate) {
  if (B < 1 || T < 1 || inputs.size() != std::size_t(B) * T) throw InvalidArgument("mask_tokens: inputs must be (B,T)");
  if (mask_id < 0 || mask_id >= vocab_size) throw InvalidArgument("mask_tokens: the mask id is not in the vocabulary");
  if (!(rate > 0 && rate <= 1)) throw InvalidArgument("the mask rate must be more than 0 and at most 1");
  // Its own stream: the same (seed, step) also draws the batch's windows (sample_batch).
  Rng rng(Rng(seed ^ 0x6D61736B6D61736Bull).next() ^ Rng(~std::uint64_t(step)).next());
  targets.assign(inputs.size(), kIgnoreTarget);
  for (int b = 0; b < B; ++b) {
    std::int32_t* in = inputs.data() + std::size_t(b) * T;
    std::int32_t* out = targets.data() + std::size_t(b) * T;
    for (int t = 0; t < T; ++t)
      if (rng.uniform() < rate) out[t] = in[t];
    int chosen = 0;
    for (int t = 0; t < T; ++t) chosen += out[t] != kIgnoreTarget;
    if (chosen == 0) {   // every sequence teaches something
      const int t = static_cast<int>(rng.below(std::uint64_t(T)));
      out[t] = in[t];
    }
    for (int t = 0; t < T; ++t) {
      if (out[t] == kIgnoreTarget) continue;
      const double u = rng.uniform();
      if (u < 0.8)
        in[t] = mask_id;
      else if (u < 0.9)
        in[t] = static_cast<std::int32_t>(rng.below(std::uint64_t(vocab_size)));
    }
  }
}

LabelledBatch::LabelledBatch(std::span<const LabelledIds* const> examples, std::int32_t pad_id) {
  B = static_cast<int>(examples.size());
  T = 0;
  for (const LabelledIds* e : examples) {
    if (e->ids.empty()) throw InvalidArgument("a labelled example has no tokens");
    T = std::max(T, static_cast<int>(e->ids.size()));
  }
  inputs.assign(std::size_t(B) * T, pad_id);
  targets.assign(inputs.size(), kIgnoreTarget);
  for (int b = 0; b < B; ++b) {
    const auto& ids = examples[b]->ids;
    const int n = static_cast<int>(ids.size());
    std::copy(ids.begin(), ids.end(), inputs.begin() + std::size_t(b) * T);
    std::copy(ids.begin() + 1, ids.end(), targets.begin() + std::size_t(b) * T);   // next tokens; the last has none
    labels.push_back(examples[b]->label);
    label_positions.push_back(n - 1);
  }
}

LabelledBatch sample_labelled_batch(std::span<const LabelledIds> examples, int B, std::uint64_t seed, int step,
                                    std::int32_t pad_id) {
  if (B < 1 || examples.empty()) throw InvalidArgument("sample_labelled_batch: no examples, or B < 1");
  Rng rng(Rng(seed).next() ^ Rng(~static_cast<std::uint64_t>(step)).next());
  std::vector<const LabelledIds*> picked;
  for (int b = 0; b < B; ++b) picked.push_back(&examples[rng.below(examples.size())]);
  return LabelledBatch(picked, pad_id);
}

}   // namespace glassbox
