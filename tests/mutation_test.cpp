// Randomly damaged model files: every parser of untrusted bytes either accepts the input or throws
// ModelFormatError; never a crash, a hang, another exception type, or (under the sanitizer build)
// an out-of-bounds access. A cheap, always-on cousin of the libFuzzer targets.
#include <gtest/gtest.h>

#include <random>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "test_util.h"

namespace glassbox {
namespace {

// Flips, overwrites, inserts or removes a few bytes; sometimes truncates. Damage lands in the
// first `hot` bytes (the header) most of the time, where parsing happens.
std::string mutate(std::string s, std::size_t hot, std::mt19937& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t span = (rng() % 4 == 0) ? s.size() : std::min(hot, s.size());
    const std::size_t at = rng() % span;
    switch (rng() % 5) {
      case 0:
        s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
        break;
      case 1:
        s[at] = "{}[]\",:0123456789-eE.\\ \x00\xff"[rng() % 24];
        break;
      case 2:
        s.insert(at, 1, static_cast<char>(rng()));
        break;
      case 3:
        s.erase(at, 1 + rng() % 8);
        break;
      default:
        s.resize(at);
        break;
    }
  }
  return s;
}

// Runs the whole load + a forward pass on (config, weights) bytes; only ModelFormatError may escape.
void load_and_run(const std::string& config, const std::string& weights) {
  auto owner = std::make_shared<std::string>(weights);
  try {
    const auto st = SafeTensors::parse(std::as_bytes(std::span(owner->data(), owner->size())), "m.safetensors", owner);
    const Model model = Model::from_parts(config, st);
    KVCache cache = model.new_cache();
    const std::vector<std::int32_t> ids = {1, 2, 3};
    model.forward(ids, cache);
  } catch (const ModelFormatError&) {
  } catch (const InvalidArgument&) {   // a damaged config may shrink the vocabulary below id 3
  }
}

TEST(Mutation, DamagedWeightsFiles) {
  const std::string config = test::read_file(test::fixture_dir("gpt2-f32") / "config.json");
  const std::string weights = test::read_file(test::fixture_dir("gpt2-f32") / "model.safetensors");
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; ++i) load_and_run(config, mutate(weights, 2500, rng));
}

TEST(Mutation, DamagedConfigs) {
  const std::string config = test::read_file(test::fixture_dir("gpt2-prefixed") / "config.json");
  const std::string weights = test::read_file(test::fixture_dir("gpt2-prefixed") / "model.safetensors");
  std::mt19937 rng(2);
  for (int i = 0; i < 3000; ++i) load_and_run(mutate(config, config.size(), rng), weights);
}

TEST(Mutation, DamagedTokenizerFiles) {
  TokenizerTrainingOptions options;
  options.vocab_size = 270;
  const auto files = train_tokenizer("the theme then, the thesis; the thermos", options);
  const std::string &vocab = files.vocab_json, &merges = files.merges_txt;
  ASSERT_NO_THROW(Tokenizer::from_strings(vocab, merges));
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    try {
      const Tokenizer t = Tokenizer::from_strings(mutate(vocab, vocab.size(), rng), mutate(merges, merges.size(), rng));
      const auto ids = t.encode("the theme");
      (void)t.decode(ids);
    } catch (const ModelFormatError&) {
    }
  }
}

}   // namespace
}   // namespace glassbox
