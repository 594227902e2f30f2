#include "train_tasks.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "glassbox/error.h"
#include "glassbox/quoted.h"

namespace glassbox {
namespace {

std::uint64_t fingerprint(std::span<const std::int32_t> ids, std::uint64_t h = 1469598103934665603ull) {   // FNV-1a
  for (std::int32_t id : ids) {
    h ^= static_cast<std::uint32_t>(id);
    h *= 1099511628211ull;
  }
  return h;
}

// Both token-stream tasks cut windows of seq_len + 1 tokens (sample_batch).
void check_windows(const std::vector<std::int32_t>& train, int seq_len) {
  if (train.size() < static_cast<std::size_t>(seq_len) + 1)
    throw Error("the training text has " + std::to_string(train.size()) + " tokens, too few for sequences of " +
                std::to_string(seq_len) + " (give more text or a smaller --seq-len)");
}

// ---------------------------------------------------------------------------------------------
// lm: windows of seq_len + 1 tokens; the loss per token and per byte of the held-out text.

class LanguageModelTask : public TrainingTask {
 public:
  LanguageModelTask(const Tokenizer& tok, std::vector<std::int32_t> train, std::vector<std::int32_t> valid, int seq_len)
      : tok_(tok), train_(std::move(train)), valid_(std::move(valid)) {
    check_windows(train_, seq_len);
    if (valid_.size() == 1) throw Error("the validation text has a single token: nothing to predict");
  }
  TrainingBatch batch(const TrainingOptions& o, int step) override {
    sample_batch(train_, o.batch_size, o.seq_len, o.seed, step, inputs_, targets_);
    return {inputs_, targets_, o.batch_size, o.seq_len, {}, {}};
  }
  Validation validate(const Trainer& trainer, long limit) const override {
    const auto& o = trainer.options();
    const EvalResult r = trainer.evaluate_stream(valid_, o.seq_len, o.batch_size, limit);
    Validation v;
    v.loss = r.loss();
    v.count = r.tokens;
    const auto eot = tok_.special_token("<|endoftext|>");   // a marker between texts, not text: no bytes
    for (std::int64_t i = 1; i <= r.tokens; ++i)
      if (valid_[i] != eot) v.bytes += std::int64_t(tok_.token_bytes(valid_[i]).size());
    v.bits_per_byte = v.bytes ? r.loss_sum / (double(v.bytes) * std::log(2.0)) : NAN;
    return v;
  }
  bool has_validation() const override { return !valid_.empty(); }
  std::string data_id() const override {
    return std::to_string(fingerprint(train_)) + "/" + std::to_string(fingerprint(valid_));
  }
  std::string describe() const override {
    return std::to_string(train_.size()) + " training tokens, " + std::to_string(valid_.size()) + " validation tokens";
  }

 private:
  const Tokenizer& tok_;
  std::vector<std::int32_t> train_, valid_, inputs_, targets_;
};

// ---------------------------------------------------------------------------------------------
// mlm: windows of seq_len tokens, `rate` of them masked (mask_tokens); the held-out text in windows
// seq_len apart, masked the same way with a fixed seed, so every evaluation scores the same positions.

class MaskedLanguageModelTask : public TrainingTask {
 public:
  MaskedLanguageModelTask(std::vector<std::int32_t> train, std::vector<std::int32_t> valid, int seq_len,
                          std::int32_t mask_id, int vocab_size, double rate)
      : train_(std::move(train)), valid_(std::move(valid)), mask_id_(mask_id), vocab_size_(vocab_size), rate_(rate) {
    check_windows(train_, seq_len);
  }
  TrainingBatch batch(const TrainingOptions& o, int step) override {
    sample_batch(train_, o.batch_size, o.seq_len, o.seed, step, inputs_, targets_);   // targets: replaced
    mask_tokens(inputs_, targets_, o.batch_size, o.seq_len, mask_id_, vocab_size_, o.seed, step, rate_);
    return {inputs_, targets_, o.batch_size, o.seq_len, {}, {}};
  }
  Validation validate(const Trainer& trainer, long limit) const override {
    constexpr std::uint64_t kSeed = 0x5EED;   // the same masked positions at every evaluation
    const auto& o = trainer.options();
    EvalResult total;
    std::vector<std::int32_t> inputs, targets;
    std::size_t start = 0;
    for (int round = 0; start < valid_.size() && (limit <= 0 || total.tokens < limit); ++round) {
      const std::size_t left = valid_.size() - start;
      const int T = static_cast<int>(std::min<std::size_t>(o.seq_len, left));
      const int B = T == o.seq_len ? static_cast<int>(std::min<std::size_t>(o.batch_size, left / T)) : 1;
      inputs.assign(valid_.begin() + std::ptrdiff_t(start),
                    valid_.begin() + std::ptrdiff_t(start + std::size_t(B) * T));
      mask_tokens(inputs, targets, B, T, mask_id_, vocab_size_, kSeed, round, rate_);
      total += trainer.evaluate(TrainingBatch{inputs, targets, B, T, {}, {}});
      start += std::size_t(B) * T;
    }
    Validation v;
    v.loss = total.loss();
    v.count = total.tokens;
    return v;
  }
  bool has_validation() const override { return !valid_.empty(); }
  std::string data_id() const override {
    return "mlm/" + std::to_string(fingerprint(train_)) + "/" + std::to_string(fingerprint(valid_));
  }
  std::string describe() const override {
    return std::to_string(train_.size()) + " training tokens, " + std::to_string(valid_.size()) +
           " validation tokens, " + std::to_string(int(rate_ * 100 + 0.5)) + "% of them masked (token " +
           std::to_string(mask_id_) + ")";
  }

 private:
  std::vector<std::int32_t> train_, valid_, inputs_, targets_;
  std::int32_t mask_id_;
  int vocab_size_;
  double rate_;
};

// ---------------------------------------------------------------------------------------------
// classify: batches of labelled lines drawn at random; every held-out line classified once.

class ClassifyTask : public TrainingTask {
 public:
  ClassifyTask(const Tokenizer& tok, const std::vector<LabelledLine>& train, const std::vector<LabelledLine>& valid,
               const std::vector<std::string>& labels, int seq_len)
      : pad_(*tok.special_token("<|endoftext|>")) {
    int cut = 0;
    auto convert = [&](const std::vector<LabelledLine>& lines, std::vector<LabelledIds>& out, const char* what) {
      for (const auto& line : lines) {
        const auto it = std::find(labels.begin(), labels.end(), line.label);
        if (it == labels.end())
          throw Error(line.where + ": the label " + quote_text(line.label) + " of the " + what +
                      " lines is not among the training lines' labels (each label needs training lines)");
        bool truncated = false;
        out.push_back(
            {classifier_ids(tok, line.text, seq_len, line.where, &truncated), std::int32_t(it - labels.begin())});
        cut += truncated;
      }
    };
    convert(train, train_, "training");
    convert(valid, valid_, "validation");
    if (train_.empty()) throw Error("no labelled lines to train on");
    if (cut > 0)
      std::fprintf(stderr, "glassbox: note: %d texts were longer than --seq-len %d tokens and were cut\n", cut,
                   seq_len);
  }
  TrainingBatch batch(const TrainingOptions& o, int step) override {
    batch_.emplace(sample_labelled_batch(train_, o.batch_size, o.seed, step, pad_));
    return batch_->view();
  }
  Validation validate(const Trainer& trainer, long limit) const override {
    const int B = trainer.options().batch_size;
    const std::size_t n = limit > 0 ? std::min<std::size_t>(std::size_t(limit), valid_.size()) : valid_.size();
    EvalResult total;
    for (std::size_t first = 0; first < n; first += std::size_t(B)) {
      std::vector<const LabelledIds*> chunk;
      for (std::size_t i = first; i < std::min(n, first + std::size_t(B)); ++i) chunk.push_back(&valid_[i]);
      total += trainer.evaluate(LabelledBatch(chunk, pad_).view());
    }
    Validation v;
    v.loss = total.label_loss();
    v.accuracy = total.accuracy();
    v.count = total.labels;
    return v;
  }
  bool has_validation() const override { return !valid_.empty(); }
  std::string data_id() const override {
    std::uint64_t h = 1469598103934665603ull;
    for (const auto* set : {&train_, &valid_}) {
      for (const auto& e : *set) h = fingerprint(e.ids, fingerprint(std::span(&e.label, 1), h));
      h = fingerprint(std::vector<std::int32_t>{-2}, h);   // between the two sets
    }
    return "classify/" + std::to_string(h);
  }
  std::string describe() const override {
    std::size_t tokens = 0;
    for (const auto& e : train_) tokens += e.ids.size();
    return std::to_string(train_.size()) + " training lines (" + std::to_string(tokens) + " tokens), " +
           std::to_string(valid_.size()) + " validation lines";
  }

 private:
  std::int32_t pad_;   // <|endoftext|>: after each text's own, padding
  std::vector<LabelledIds> train_, valid_;
  std::optional<LabelledBatch> batch_;
};

}   // namespace

nlohmann::json Validation::to_json() const {
  nlohmann::json j = {{"val_loss", loss}};
  if (!std::isnan(bits_per_byte)) j["val_bits_per_byte"] = bits_per_byte;
  if (!std::isnan(accuracy)) j["val_accuracy"] = accuracy;
  j[std::isnan(accuracy) ? "val_tokens" : "val_examples"] = count;
  if (!std::isnan(bits_per_byte)) j["val_bytes"] = bytes;
  return j;
}

std::string Validation::describe() const {
  char buf[160];
  if (!std::isnan(accuracy))
    std::snprintf(buf, sizeof buf, "validation accuracy %.4f, label loss %.4f nats (%lld lines)", accuracy, loss,
                  static_cast<long long>(count));
  else if (!std::isnan(bits_per_byte))
    std::snprintf(buf, sizeof buf, "validation loss %.4f nats/token, %.4f bits/byte (%lld tokens)", loss, bits_per_byte,
                  static_cast<long long>(count));
  else
    std::snprintf(buf, sizeof buf, "validation loss %.4f nats per masked token (%lld tokens)", loss,
                  static_cast<long long>(count));
  return buf;
}

std::unique_ptr<TrainingTask> language_model_task(const Tokenizer& tokenizer, std::vector<std::int32_t> train,
                                                  std::vector<std::int32_t> valid, int seq_len) {
  return std::make_unique<LanguageModelTask>(tokenizer, std::move(train), std::move(valid), seq_len);
}

std::unique_ptr<TrainingTask> masked_lm_task(std::vector<std::int32_t> train, std::vector<std::int32_t> valid,
                                             int seq_len, std::int32_t mask_id, int vocab_size, double rate) {
  return std::make_unique<MaskedLanguageModelTask>(std::move(train), std::move(valid), seq_len, mask_id, vocab_size,
                                                   rate);
}

std::unique_ptr<TrainingTask> classify_task(const Tokenizer& tokenizer, const std::vector<LabelledLine>& train,
                                            const std::vector<LabelledLine>& valid,
                                            const std::vector<std::string>& labels, int seq_len) {
  if (!tokenizer.special_token("<|endoftext|>"))
    throw Error("--task classify needs a tokenizer with <|endoftext|> (the token each text is classified at)");
  return std::make_unique<ClassifyTask>(tokenizer, train, valid, labels, seq_len);
}

std::vector<std::string> label_names(const std::vector<LabelledLine>& lines) {
  std::set<std::string> names;
  for (const auto& l : lines) names.insert(l.label);
  if (names.size() < 2)
    throw Error("--task classify needs lines of at least two labels; the training lines have " +
                std::to_string(names.size()));
  if (names.size() > 10'000)   // a column of ids or texts, not labels
    throw Error("the training lines have " + std::to_string(names.size()) +
                " different labels (at most 10000): is the first column of the file the label?");
  return {names.begin(), names.end()};
}

}   // namespace glassbox
