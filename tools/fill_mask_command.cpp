#include "fill_mask_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"

using namespace glassbox;

// A masked LM's top-k tokens at each mask of the text (its config's mask_token_id; write it as
// the token's text, e.g. <|mask|>): [{"position", "candidates": [{"id", "token", "probability"}]}].
int run_fill_mask(const std::string& model_dir, const LoadOptions& load, const std::optional<std::string>& text,
                  const std::optional<std::vector<std::int32_t>>& given_ids, int top) {
  if (top < 1) throw InvalidArgument("--top must be at least 1");
  const Model model = Model::load(model_dir, load);
  const ModelConfig& c = model.config();
  if (!c.bidirectional || c.mask_token_id < 0)
    throw InvalidArgument(model_dir +
                          " is not a masked LM (its config.json has no \"bidirectional\" and "
                          "\"mask_token_id\"); train one with `glassbox train --task mlm`");
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  const std::vector<std::int32_t> ids = text ? tokenizer.encode(*text, /*allow_special=*/true) : *given_ids;
  if (std::find(ids.begin(), ids.end(), c.mask_token_id) == ids.end())
    throw InvalidArgument("the text has no mask: write " + tokenizer.decode(std::vector{c.mask_token_id}) +
                          " where the model should guess a token");
  // The LM head on the masks' rows only.
  std::vector<std::int32_t> masks;
  for (std::size_t t = 0; t < ids.size(); ++t)
    if (ids[t] == c.mask_token_id) masks.push_back(static_cast<std::int32_t>(t));
  ForwardOptions options;
  options.logit_rows = masks;
  options.tokenizer_size = tokenizer.vocab_size();   // ids past it (a padded vocabulary): -inf, never shown
  KVCache cache = model.new_cache();
  const std::vector<float> logits = model.forward(ids, cache, options);
  const int V = c.vocab_size, k = std::min({top, V, tokenizer.vocab_size()});
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t m = 0; m < masks.size(); ++m) {
    const std::size_t t = std::size_t(masks[m]);
    const float* row = logits.data() + m * std::size_t(V);
    const float max = *std::max_element(row, row + V);
    double total = 0;
    for (int v = 0; v < V; ++v) total += std::exp(double(row[v]) - max);
    std::vector<int> order(static_cast<std::size_t>(V));
    for (int v = 0; v < V; ++v) order[std::size_t(v)] = v;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return row[a] > row[b]; });
    nlohmann::json candidates = nlohmann::json::array();
    for (int i = 0; i < k; ++i) {
      const int v = order[std::size_t(i)];
      candidates.push_back({{"id", v},
                            {"token", tokenizer.decode(std::vector{v})},
                            {"probability", std::exp(double(row[v]) - max) / total}});
    }
    out.push_back({{"position", t}, {"candidates", candidates}});
  }
  const std::string json = out.dump() + "\n";
  std::fwrite(json.data(), 1, json.size(), stdout);
  return 0;
}
