// The glassbox command line: run GPT-2-family models from a Hugging Face model directory.
//
//   glassbox generate [-m DIR] --tokens 1,2,3 [-n N] [--temperature T] [--top-k K] [--top-p P] [--seed S]
//   glassbox forward  [-m DIR] --tokens 1,2,3 [--attention]
//
// Errors go to stderr as one line "glassbox: error: ..." with exit code 1 (2 for bad usage).
#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"

#ifndef GLASSBOX_DEFAULT_MODEL_DIR
#define GLASSBOX_DEFAULT_MODEL_DIR "web/models/brown-small"
#endif

namespace {

using namespace glassbox;

// "1,2,3" -> {1, 2, 3}
std::vector<std::int32_t> parse_ids(const std::string& text) {
  std::vector<std::int32_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    std::int32_t id = 0;
    auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc() || (next < end && *next != ','))
      throw InvalidArgument("--tokens must be comma-separated integers like 464,2068, got \"" + text + "\"");
    ids.push_back(id);
    p = next < end ? next + 1 : next;
  }
  if (ids.empty()) throw InvalidArgument("--tokens is empty: give at least one token id");
  return ids;
}

Model load_model(const std::string& dir) {
  if (dir == GLASSBOX_DEFAULT_MODEL_DIR && !std::filesystem::exists(dir))
    throw Error("no model directory given and the default model " + dir + " does not exist; pass -m DIR");
  return Model::load(dir);
}

// Writes floats in the shortest form that reads back to the same float.
class JsonWriter {
 public:
  void raw(std::string_view s) { out_ += s; }
  void number(float v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, end);
  }
  void array(const float* v, std::size_t n) {
    out_ += '[';
    for (std::size_t i = 0; i < n; ++i) {
      if (i) out_ += ',';
      number(v[i]);
    }
    out_ += ']';
    if (out_.size() > (1 << 20)) flush();
  }
  void flush() {
    std::fwrite(out_.data(), 1, out_.size(), stdout);
    out_.clear();
  }

 private:
  std::string out_;
};

int run_forward(const std::string& model_dir, const std::string& tokens, bool with_attention) {
  const auto ids = parse_ids(tokens);
  Model model = load_model(model_dir);
  const ModelConfig& c = model.config();
  const int T = static_cast<int>(ids.size());

  std::vector<float> attention;   // (L, H, T, T)
  TensorHook keep_probs = [&](const NamedTensor& t) {
    if (std::string_view(t.name) != "attn_probs") return;
    attention.insert(attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
  };
  ForwardOptions options;
  options.all_logits = true;
  options.hook = with_attention ? &keep_probs : nullptr;
  KVCache cache = model.new_cache();
  const std::vector<float> logits = model.forward(ids, cache, options);

  JsonWriter json;
  json.raw("{\"logits\":[");
  for (int t = 0; t < T; ++t) {
    if (t) json.raw(",\n");
    json.array(logits.data() + std::size_t(t) * c.vocab_size, c.vocab_size);
  }
  json.raw("]");
  if (with_attention) {
    json.raw(",\n\"attention\":[");
    for (int l = 0; l < c.n_layer; ++l) {
      json.raw(l ? ",[" : "[");
      for (int h = 0; h < c.n_head; ++h) {
        json.raw(h ? ",[" : "[");
        for (int q = 0; q < T; ++q) {
          if (q) json.raw(",");
          json.array(attention.data() + ((std::size_t(l) * c.n_head + h) * T + q) * T, T);
        }
        json.raw("]");
      }
      json.raw("]");
    }
    json.raw("]");
  }
  json.raw("}\n");
  json.flush();
  return 0;
}

int run_generate(const std::string& model_dir, const std::string& tokens, int max_tokens,
                 SamplingSettings sampling, const std::optional<std::uint64_t>& seed) {
  const auto prompt = parse_ids(tokens);
  sampling.seed = seed ? *seed : std::random_device{}();
  sampling.validate();   // before the (possibly slow) model load
  Model model = load_model(model_dir);

  GenerateOptions options;
  options.max_tokens = max_tokens;
  options.sampling = sampling;
  int produced = 0;
  const auto start = std::chrono::steady_clock::now();
  const StopReason reason = generate(model, prompt, options, [&](const GeneratedToken& t) {
    std::printf(produced++ ? " %d" : "%d", t.id);
    std::fflush(stdout);   // stream: show each token as soon as it exists
    return true;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "glassbox: %d tokens in %.3f s (%.1f tokens/s), seed %llu, stopped: %s\n", produced, seconds,
               produced / (seconds > 0 ? seconds : 1e-9), static_cast<unsigned long long>(sampling.seed),
               std::string(stop_reason_name(reason)).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"glassbox: run GPT-2-family transformers and look inside them"};
  app.require_subcommand(1);
  std::string model_dir = GLASSBOX_DEFAULT_MODEL_DIR;
  std::string tokens;

  auto* gen = app.add_subcommand("generate", "generate tokens after a prompt");
  gen->add_option("-m,--model", model_dir, "model directory (config.json, model.safetensors)")->capture_default_str();
  gen->add_option("--tokens", tokens, "prompt as comma-separated token ids, e.g. 464,2068")->required();
  int max_tokens = 32;
  SamplingSettings sampling;
  std::optional<std::uint64_t> seed;
  gen->add_option("-n,--max-tokens", max_tokens, "how many tokens to generate at most")->capture_default_str();
  gen->add_option("--temperature", sampling.temperature, "0 is greedy")->capture_default_str();
  gen->add_option("--top-k", sampling.top_k, "keep the k most probable tokens (0: all)")->capture_default_str();
  gen->add_option("--top-p", sampling.top_p, "nucleus: keep the most probable tokens up to this mass")->capture_default_str();
  gen->add_option("--seed", seed, "random seed (default: random, printed at the end)");

  auto* fwd = app.add_subcommand("forward", "print logits (and attention) for a token sequence as JSON");
  fwd->add_option("-m,--model", model_dir, "model directory")->capture_default_str();
  fwd->add_option("--tokens", tokens, "comma-separated token ids")->required();
  bool attention = false;
  fwd->add_flag("--attention", attention, "also print attention probabilities [layer][head][query][key]");

  // CLI11 would only say "A subcommand is required"; name the word it did not know.
  if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "generate" && std::string(argv[1]) != "forward") {
    std::fprintf(stderr, "glassbox: error: unknown command '%s' (commands: generate, forward; see --help)\n", argv[1]);
    return 2;
  }
  CLI11_PARSE(app, argc, argv);
  try {
    if (*gen) return run_generate(model_dir, tokens, max_tokens, sampling, seed);
    return run_forward(model_dir, tokens, attention);
  } catch (const glassbox::Error& e) {
    std::fprintf(stderr, "glassbox: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: internal error: %s\n", e.what());
  }
  return 1;
}
