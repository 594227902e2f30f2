#include "evaluate_command.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "text_files.h"

namespace glassbox {

int run_evaluate(const std::string& model_dir, const LoadOptions& load, const std::vector<std::string>& files) {
  const auto paths = list_files(files);
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  const Model model = Model::load(model_dir, load);
  if (model.config().bidirectional)   // its position t has seen token t+1: next-token loss means nothing
    throw InvalidArgument(
        "this model is bidirectional (a masked-LM encoder): evaluate measures next-token prediction, "
        "which such a model sees the answer to");
  const int V = model.config().vocab_size;
  const int T = model.context();   // windows of the context's length (--context)
  const std::vector<std::int32_t> ids = encode_files(tokenizer, paths);
  if (ids.size() < 2) throw InvalidArgument("the text has fewer than 2 tokens: nothing to predict");
  const auto eot = tokenizer.special_token("<|endoftext|>");

  // Windows of len + 1 tokens, len apart: the window predicts its last len tokens.
  double nats = 0;
  std::int64_t predicted = 0, bytes = 0;
  ForwardOptions options;
  options.all_logits = true;
  options.tokenizer_size = tokenizer.vocab_size();   // ids past it (a padded vocabulary) have probability 0
  KVCache cache = model.new_cache();
  for (std::size_t start = 0; start + 1 < ids.size(); start += T) {
    const std::size_t len = std::min<std::size_t>(T, ids.size() - 1 - start);
    cache.clear();
    const std::vector<float> logits = model.forward(std::span(ids).subspan(start, len), cache, options);
    for (std::size_t t = 0; t < len; ++t) {
      const float* row = logits.data() + t * V;
      const std::int32_t target = ids[start + t + 1];
      double max = row[0], z = 0;
      for (int v = 1; v < V; ++v) max = std::max(max, double(row[v]));
      for (int v = 0; v < V; ++v) z += std::exp(double(row[v]) - max);
      nats += std::log(z) + max - row[target];   // -log softmax(row)[target]
      if (target != eot) bytes += static_cast<std::int64_t>(tokenizer.token_bytes(target).size());
      ++predicted;
    }
  }
  if (bytes == 0) throw InvalidArgument("the text has no bytes to predict besides <|endoftext|> markers");
  const double loss = nats / double(predicted);
  const nlohmann::json result = {{"tokens", predicted},
                                 {"bytes", bytes},
                                 {"context", T},
                                 {"loss", loss},
                                 {"perplexity", std::exp(loss)},
                                 {"bits_per_byte", nats / (double(bytes) * std::log(2.0))}};
  std::printf("%s\n", result.dump().c_str());
  return 0;
}

}   // namespace glassbox
