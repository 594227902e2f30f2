// set_up_training (glassbox/training_setup.h): how `glassbox train` and the JS API's train() set
// a run up from texts and settings. (That both give the same run is checked end to end by
// tests/js/training.test.mjs; the CLI's runs by cli_train_test.cpp.)
#include <gtest/gtest.h>

#include "glassbox/error.h"
#include "glassbox/training_setup.h"

namespace glassbox {
namespace {

std::string text(int lines) {
  std::string t;
  for (int i = 0; i < lines; ++i) t += "the cat sat on the mat number " + std::to_string(i) + ".\n";
  return t;
}

TrainingSettings small() {
  TrainingSettings s;
  s.vocab_size = 300;
  s.n_layer = 1;
  s.n_embd = 32;
  s.n_head = 2;
  s.n_positions = 32;
  s.options.seq_len = 32;
  return s;
}

TEST(TrainingSetup, HoldsOutLearnsTheVocabularyFromTheRestAndEncodesBoth) {
  TrainingInputs in;
  in.train = {{"a", text(100)}};
  int checked_vocab = 0;
  std::size_t learned_from = 0;
  in.checked = [&](const ModelConfig& c, const TrainingOptions& o) {
    checked_vocab = c.vocab_size;
    EXPECT_EQ(o.seq_len, 32);
  };
  in.learning = [&](std::size_t bytes) { learned_from = bytes; };
  const TrainingSettings s = small();
  const TrainingSetup setup = set_up_training(in, s);

  std::vector<TrainingDocument> expected = in.train;
  const TrainingDocument held = hold_out(expected, s.valid_fraction);
  EXPECT_EQ(checked_vocab, 300);                      // before learning: the vocabulary asked for
  EXPECT_EQ(learned_from, expected[0].text.size());   // the training part only
  EXPECT_EQ(setup.config.vocab_size, setup.tokenizer.vocab_size());
  EXPECT_EQ(setup.config.eos_token_ids, std::vector<std::int32_t>{*setup.tokenizer.special_token("<|endoftext|>")});
  EXPECT_EQ(setup.train, encode_documents(setup.tokenizer, expected));
  EXPECT_EQ(setup.valid, encode_documents(setup.tokenizer, {held}));
  EXPECT_EQ(setup.options.to_json(), s.options.to_json());

  // A given tokenizer is used as it is; given held-out texts are not cut from the training text.
  TrainingInputs again;
  again.train = {{"a", text(100)}};
  again.valid = {{"v", "the mat sat on the cat.\n"}};
  again.tokenizer = setup.tokenizer_files;
  const TrainingSetup reused = set_up_training(again, s);
  EXPECT_EQ(reused.tokenizer_files.vocab_json, setup.tokenizer_files.vocab_json);
  EXPECT_EQ(reused.train, encode_documents(setup.tokenizer, again.train));
  EXPECT_EQ(reused.valid, encode_documents(setup.tokenizer, again.valid));
}

TEST(TrainingSetup, TheDefaultsAreTheCommandLines) {
  // glassbox train documents these (docs/training.md); the optimisation's are TrainingOptions'.
  const TrainingSettings s;
  EXPECT_EQ(s.vocab_size, TokenizerTrainingOptions{}.vocab_size);
  EXPECT_EQ(s.options.to_json(), TrainingOptions{}.to_json());
  EXPECT_EQ(s.options.steps, 2000);
  EXPECT_EQ(training_model_config(s, 4096).to_json(),
            ModelConfig::parse(R"({"model_type": "gpt2", "vocab_size": 4096, "n_positions": 256, "n_embd": 256,
                                   "n_layer": 4, "n_head": 4, "activation_function": "gelu_new"})")
                .to_json());
}

TEST(TrainingSetup, BadSettingsAreNamed) {
  auto fails = [](auto change, const std::string& words) {
    TrainingSettings s = small();
    change(s);
    TrainingInputs in;
    in.train = {{"a", text(50)}};
    try {
      set_up_training(in, s);
      ADD_FAILURE() << "no error for " << words;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  fails([](TrainingSettings& s) { s.valid_fraction = 1; }, "held-out fraction must be at least 0 and less than 1");
  fails([](TrainingSettings& s) { s.architecture = "bert"; }, "architecture must be gpt2 or openai-gpt, got bert");
  fails([](TrainingSettings& s) { s.positions = "rotary"; }, "position encoding must be learned or sinusoidal");
  fails([](TrainingSettings& s) { s.n_head = 3; }, "not divisible");
  fails([](TrainingSettings& s) { s.options.seq_len = 64; }, "sequence length");
  TrainingInputs bad;
  bad.train = {{"bad.txt", "caf\xe9"}};
  EXPECT_THROW(set_up_training(bad, small()), InvalidArgument);
  TrainingInputs resumed;   // a run that goes on needs its tokenizer
  resumed.train = {{"a", text(50)}};
  resumed.config = training_model_config(small(), 300);
  resumed.options = small().options;
  EXPECT_THROW(set_up_training(resumed, small()), InvalidArgument);
}

}   // namespace
}   // namespace glassbox
