// The data of one training step: a batch of sequences and what each position predicts, drawn
// from (seed, step) alone, so that any step's batch can be made again (a resumed run needs no
// sampler state): windows of a token stream (a GPT), the same with masked tokens (a masked LM),
// labelled examples (a classifier).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace glassbox {

// The batch of step `step`: B windows of T+1 consecutive tokens of `stream` at offsets drawn from
// (seed, step) alone, so that any step's batch can be recomputed (resume needs no sampler state).
// inputs = window[0..T), targets = window[1..T]; both (B,T). The stream needs T+1 tokens at least.
void sample_batch(std::span<const std::int32_t> stream, int B, int T, std::uint64_t seed, int step,
                  std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets);

// A target that is not predicted: no loss, no gradient (a masked LM's unmasked positions, a
// classifier's padding).
inline constexpr std::int32_t kIgnoreTarget = -1;

// BERT's share of the tokens a masked LM predicts.
inline constexpr double kBertMaskRate = 0.15;

// The masked-LM objective of BERT on a batch of windows, in place: about `rate` of each sequence's
// positions (at least one), drawn from (seed, step) alone, become targets
// (the original token); of those, 80% of inputs are replaced by mask_id, 10% by a random token
// and 10% kept. Every other target becomes kIgnoreTarget. inputs and targets are (B,T); targets'
// values are replaced. Throws InvalidArgument for a rate outside (0, 1].
void mask_tokens(std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets, int B, int T,
                 std::int32_t mask_id, int vocab_size, std::uint64_t seed, int step, double rate = kBertMaskRate);

// One step's data, as spans (B,T) of ids; labels and label_positions (B) for a classifier only.
struct TrainingBatch {
  std::span<const std::int32_t> inputs;    // (B,T)
  std::span<const std::int32_t> targets;   // (B,T) the token each position predicts, or kIgnoreTarget
  int B = 0, T = 0;
  std::span<const std::int32_t> labels;            // (B) each sequence's class, in [0, n_labels)
  std::span<const std::int32_t> label_positions;   // (B) where it is read: the sequence's last token
};

// A classifier's example: the ids of a text ending with the token it is classified at.
struct LabelledIds {
  std::vector<std::int32_t> ids;
  std::int32_t label;
};

// Labelled examples as one batch, right-padded with pad_id to the longest: each example's targets
// are its next tokens, kIgnoreTarget at its last token and on padding; its label is read at its
// last token (causal attention: the padding after it changes nothing).
struct LabelledBatch {
  std::vector<std::int32_t> inputs, targets, labels, label_positions;
  int B = 0, T = 0;
  LabelledBatch(std::span<const LabelledIds* const> examples, std::int32_t pad_id);
  TrainingBatch view() const { return {inputs, targets, B, T, labels, label_positions}; }
};

// B examples for step `step`, drawn from (seed, step) alone (as sample_batch), batched.
LabelledBatch sample_labelled_batch(std::span<const LabelledIds> examples, int B, std::uint64_t seed, int step,
                                    std::int32_t pad_id);

}   // namespace glassbox
