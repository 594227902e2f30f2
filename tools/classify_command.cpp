#include "classify_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "forward_command.h"
#include "labelled_text.h"
#include "text_files.h"

using namespace glassbox;

namespace {

void write_text(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// A classifier's answer for one text: {"label", "probabilities": {name: p}, "logits": [...]}.
nlohmann::json classification(const Model& model, std::span<const std::int32_t> ids, std::span<const float> head_mask) {
  const std::vector<float> logits = model.classify(ids, head_mask);
  const auto& labels = model.config().labels;
  const float max = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float z : logits) total += std::exp(double(z) - max);
  nlohmann::json probs = nlohmann::json::object();
  for (std::size_t k = 0; k < logits.size(); ++k) probs[labels[k]] = std::exp(double(logits[k]) - max) / total;
  const std::size_t best = std::size_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  return {{"label", labels[best]}, {"probabilities", probs}, {"logits", logits}};
}

}   // namespace

// One text (-p: tokenized, then <|endoftext|>, as `train --task classify` made the examples; or
// --tokens as given), or every line of a file, one JSON object per line; for "label<TAB>text"
// lines the accuracy goes to stderr.
int run_classify(const std::string& model_dir, const LoadOptions& load, const std::optional<std::string>& text,
                 const std::optional<std::vector<std::int32_t>>& ids, const std::string& input,
                 const std::string& head_mask_text) {
  const Model model = Model::load(model_dir, load);
  if (model.config().labels.empty())
    throw InvalidArgument(model_dir +
                          " is not a classifier (its config.json names no *ForSequenceClassification "
                          "architecture); train one with `glassbox train --task classify`");
  const std::vector<float> head_mask = parse_head_mask(head_mask_text, model.config());
  const int context = model.context();
  if (ids) {
    write_text(classification(model, *ids, head_mask).dump() + "\n");
    return 0;
  }
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  if (text) {
    write_text(classification(model, classifier_ids(tokenizer, *text, context, "the prompt"), head_mask).dump() + "\n");
    return 0;
  }
  int labelled = 0, correct = 0;
  const std::vector<LabelledLine> lines = parse_labelled_lines(read_text(input), input, false);
  if (lines.empty()) throw InvalidArgument(input + " has no lines to classify");
  const auto& labels = model.config().labels;
  for (const LabelledLine& line : lines) {
    if (!line.label.empty() && std::find(labels.begin(), labels.end(), line.label) == labels.end())
      std::fprintf(stderr, "glassbox: note: %s: the label \"%s\" is not one of the model's; counted as wrong\n",
                   line.where.c_str(), line.label.c_str());
    nlohmann::json out = classification(model, classifier_ids(tokenizer, line.text, context, line.where), head_mask);
    out["text"] = line.text;
    if (!line.label.empty()) {
      out["expected"] = line.label;
      ++labelled;
      correct += out["label"] == line.label;
    }
    write_text(out.dump() + "\n");
  }
  if (labelled > 0)
    std::fprintf(stderr, "glassbox: accuracy %.4f (%d of %d labelled lines)\n", double(correct) / labelled, correct,
                 labelled);
  return 0;
}
