#include "relatives_commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "labelled_text.h"
#include "text_files.h"

using namespace glassbox;

namespace {

void write_text(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// A classifier's answer for one text: {"label", "probabilities": {name: p}, "logits": [...]}.
nlohmann::json classification(const Model& model, std::span<const std::int32_t> ids) {
  const std::vector<float> logits = model.classify(ids);
  const auto& labels = model.config().labels;
  const float max = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float z : logits) total += std::exp(double(z) - max);
  nlohmann::json probs = nlohmann::json::object();
  for (std::size_t k = 0; k < logits.size(); ++k) probs[labels[k]] = std::exp(double(logits[k]) - max) / total;
  const std::size_t best = std::size_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  return {{"label", labels[best]}, {"probabilities", probs}, {"logits", logits}};
}

}  // namespace

// One text (-p: tokenized, then <|endoftext|>, as `train --task classify` made the examples; or
// --tokens as given), or every line of a file, one JSON object per line; for "label<TAB>text"
// lines the accuracy goes to stderr.
int run_classify(const std::string& model_dir, const LoadOptions& load, const std::optional<std::string>& text,
                 const std::optional<std::vector<std::int32_t>>& ids, const std::string& input) {
  const Model model = Model::load(model_dir, load);
  if (model.config().labels.empty())
    throw InvalidArgument(model_dir + " is not a classifier (its config.json names no *ForSequenceClassification "
                          "architecture); train one with `glassbox train --task classify`");
  const int context = model.config().n_positions;
  if (ids) {
    write_text(classification(model, *ids).dump() + "\n");
    return 0;
  }
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  if (text) {
    write_text(classification(model, classifier_ids(tokenizer, *text, context, "the prompt")).dump() + "\n");
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
    nlohmann::json out = classification(model, classifier_ids(tokenizer, line.text, context, line.where));
    out["text"] = line.text;
    if (!line.label.empty()) {
      out["expected"] = line.label;
      ++labelled;
      correct += out["label"] == line.label;
    }
    write_text(out.dump() + "\n");
  }
  if (labelled > 0)
    std::fprintf(stderr, "glassbox: accuracy %.4f (%d of %d labelled lines)\n", double(correct) / labelled, correct, labelled);
  return 0;
}

// A masked LM's top-k tokens at each mask of the text (its config's mask_token_id; write it as
// the token's text, e.g. <|mask|>): [{"position", "candidates": [{"id", "token", "probability"}]}].
int run_fill_mask(const std::string& model_dir, const LoadOptions& load, const std::optional<std::string>& text,
                  const std::optional<std::vector<std::int32_t>>& given_ids, int top) {
  if (top < 1) throw InvalidArgument("--top must be at least 1");
  const Model model = Model::load(model_dir, load);
  const ModelConfig& c = model.config();
  if (!c.bidirectional || c.mask_token_id < 0)
    throw InvalidArgument(model_dir + " is not a masked LM (its config.json has no \"bidirectional\" and "
                          "\"mask_token_id\"); train one with `glassbox train --task mlm`");
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  const std::vector<std::int32_t> ids = text ? tokenizer.encode(*text, /*allow_special=*/true) : *given_ids;
  if (std::find(ids.begin(), ids.end(), c.mask_token_id) == ids.end())
    throw InvalidArgument("the text has no mask: write " + tokenizer.decode(std::vector{c.mask_token_id}) +
                          " where the model should guess a token");
  ForwardOptions options;
  options.all_logits = true;
  KVCache cache = model.new_cache();
  const std::vector<float> logits = model.forward(ids, cache, options);
  const int V = c.vocab_size, k = std::min(top, V);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] != c.mask_token_id) continue;
    const float* row = logits.data() + t * std::size_t(V);
    const float max = *std::max_element(row, row + V);
    double total = 0;
    for (int v = 0; v < V; ++v) total += std::exp(double(row[v]) - max);
    std::vector<int> order(static_cast<std::size_t>(V));
    for (int v = 0; v < V; ++v) order[std::size_t(v)] = v;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return row[a] > row[b]; });
    nlohmann::json candidates = nlohmann::json::array();
    for (int i = 0; i < k; ++i) {
      const int v = order[std::size_t(i)];
      candidates.push_back({{"id", v}, {"token", tokenizer.decode(std::vector{v})}, {"probability", std::exp(double(row[v]) - max) / total}});
    }
    out.push_back({{"position", t}, {"candidates", candidates}});
  }
  write_text(out.dump() + "\n");
  return 0;
}

