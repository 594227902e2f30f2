// What `glassbox train` can teach a model (--task), as the data of each step and the score of
// the held-out data:
//   lm        next-token prediction on a token stream: a GPT (the default)
//   mlm       masked-token prediction with bidirectional attention: a BERT-style encoder
//             (Trainer's mask_tokens; config "bidirectional", "mask_token_id")
//   classify  one label per line of labelled text (labelled_text.h), with the LM loss beside the
//             label loss as GPT-1's fine-tuning had it (config id2label, score.weight)
// Every step's batch is a function of (seed, step) alone, so that --resume needs no data state.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"
#include "glassbox/trainer.h"
#include "labelled_text.h"

namespace glassbox {

struct Validation {
  double loss = NAN;                // nats per predicted token (lm, mlm); label loss per example (classify)
  double bits_per_byte = NAN;       // lm: the loss per byte of the text, in bits
  double accuracy = NAN;            // classify: examples whose most likely label is theirs
  std::int64_t count = 0;           // tokens predicted (lm, mlm) or examples (classify)
  std::int64_t bytes = 0;           // lm
  nlohmann::json to_json() const;   // {"val_loss": ..., ...} for training_log.jsonl
  std::string describe() const;     // one line for the terminal
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  // The batch of step `step`, valid until the next call.
  virtual TrainingBatch batch(const TrainingOptions& options, int step) = 0;
  // The held-out data under the trainer's parameters; at most `limit` tokens or examples (0: all).
  virtual Validation validate(const Trainer& trainer, long limit) const = 0;
  virtual bool has_validation() const = 0;
  virtual std::string data_id() const = 0;    // changes when the data does (resume checks it)
  virtual std::string describe() const = 0;   // "N training tokens, M validation tokens"
};

// Next-token prediction. Throws Error if the stream is too short for windows of seq_len + 1.
std::unique_ptr<TrainingTask> language_model_task(const Tokenizer& tokenizer, std::vector<std::int32_t> train,
                                                  std::vector<std::int32_t> valid, int seq_len);
// Masked-token prediction with mask_id as [MASK], `rate` of the tokens chosen (mask_tokens).
// Throws Error as language_model_task does.
std::unique_ptr<TrainingTask> masked_lm_task(std::vector<std::int32_t> train, std::vector<std::int32_t> valid,
                                             int seq_len, std::int32_t mask_id, int vocab_size, double rate);
// Classification of labelled lines into `labels` (label ids by name order of this list); texts
// longer than seq_len tokens are cut (a note says how many). Throws Error for a label of the
// held-out lines the training lines do not have.
std::unique_ptr<TrainingTask> classify_task(const Tokenizer& tokenizer, const std::vector<LabelledLine>& train,
                                            const std::vector<LabelledLine>& valid,
                                            const std::vector<std::string>& labels, int seq_len);

// The sorted label names of labelled lines. Throws Error for fewer than two.
std::vector<std::string> label_names(const std::vector<LabelledLine>& lines);

}   // namespace glassbox
