// A classifier at inference (a score head, Hugging Face's GPT2ForSequenceClassification) against
// PyTorch (tests/fixtures/gpt2-classifier, made by scripts/make_fixtures.py), and the config keys
// that make a model a classifier. Its training is checked in training_test.cpp and
// cli_train_test.cpp; the bidirectional encoder is in encoder_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string_view>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

TEST(Classifier, LabelLogitsMatchPyTorch) {
  const auto expected = test::read_json(fixture_dir("gpt2-classifier") / "expected.json");
  ASSERT_EQ(expected["classify"].size(), 3u);
  for (Quantization q : {Quantization::None, Quantization::Int8}) {
    const Model model = Model::load(fixture_dir("gpt2-classifier"), LoadOptions{q});
    EXPECT_EQ(model.config().labels, (std::vector<std::string>{"red", "green", "blue"}));
    double max_diff = 0, lo = 1e30, hi = -1e30;
    for (const auto& item : expected["classify"]) {
      const auto ids = item["ids"].get<std::vector<std::int32_t>>();
      const auto got = model.classify(ids);
      ASSERT_EQ(got.size(), 3u);
      int best_got = 0, best_want = 0;
      for (int k = 0; k < 3; ++k) {
        const double want = item["logits"][k].get<double>();
        max_diff = std::max(max_diff, std::abs(got[k] - want));
        lo = std::min(lo, want);
        hi = std::max(hi, want);
        if (got[k] > got[best_got]) best_got = k;
        if (want > item["logits"][best_want].get<double>()) best_want = k;
      }
      EXPECT_EQ(best_got, best_want) << quantization_name(q) << ", " << ids.size() << " ids";
    }
    std::cout << "[ fixture  ] gpt2-classifier, " << quantization_name(q)
              << ": max |label logit - PyTorch| = " << max_diff << "\n";
    EXPECT_LT(max_diff, q == Quantization::None ? 1e-4 : 0.03 * (hi - lo));   // int8: the bound of the LM logits
  }
}

TEST(Classifier, HeadMasksMatchPyTorch) {
  // Hugging Face's head_mask on GPT2ForSequenceClassification: one head, a whole layer, every
  // head of the model switched off.
  const auto expected = test::read_json(fixture_dir("gpt2-classifier") / "expected.json");
  ASSERT_EQ(expected["classify_head_masks"].size(), 3u);
  const Model model = Model::load(fixture_dir("gpt2-classifier"));
  double max_diff = 0;
  for (const auto& item : expected["classify_head_masks"]) {
    const auto heads = item["silenced"].get<std::vector<std::array<int, 2>>>();
    const auto ids = item["ids"].get<std::vector<std::int32_t>>();
    const auto got = model.classify(ids, silencing_head_mask(model.config(), heads));
    const auto unmasked = model.classify(ids);
    ASSERT_EQ(got.size(), 3u);
    double moved = 0;
    for (int k = 0; k < 3; ++k) {
      max_diff = std::max(max_diff, std::abs(got[k] - item["logits"][k].get<double>()));
      moved = std::max(moved, double(std::abs(got[k] - unmasked[k])));
    }
    EXPECT_GT(moved, 1e-3) << heads.size() << " heads off change the logits";
  }
  std::cout << "[ fixture  ] gpt2-classifier, heads off: max |label logit - PyTorch| = " << max_diff << "\n";
  EXPECT_LT(max_diff, 1e-4);
  const std::vector<std::int32_t> ids = {5, 17};
  EXPECT_THROW(model.classify(ids, std::vector<float>(3, 1.0f)), InvalidArgument);   // not n_layer x n_head
}

TEST(Classifier, ALabelAndItsAttentionComeFromOnePass) {
  // With a hook, classify shows the pass's tensors: each block runs once (one block_out per
  // layer), its attention is what forward's pass over the same ids computes, and its logits are
  // bit for bit those of classify without a hook, with heads off too.
  const Model model = Model::load(fixture_dir("gpt2-classifier"));
  const int L = model.config().n_layer;
  const std::vector<std::int32_t> ids = {5, 17, 42, 8};
  for (const auto& mask :
       {std::vector<float>{}, silencing_head_mask(model.config(), std::vector<std::array<int, 2>>{{0, 1}})}) {
    int blocks = 0;
    std::vector<float> attention, forward_attention;
    const TensorHook hook = [&](const NamedTensor& t) {
      if (std::string_view(t.name) == "block_out") ++blocks;
      if (std::string_view(t.name) == "attn_probs")
        attention.insert(attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
    };
    const auto logits = model.classify(ids, mask, &hook);
    EXPECT_EQ(blocks, L) << "each block once";
    EXPECT_EQ(logits, model.classify(ids, mask));
    const TensorHook keep = [&](const NamedTensor& t) {
      if (std::string_view(t.name) == "attn_probs")
        forward_attention.insert(forward_attention.end(), t.data,
                                 t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
    };
    ForwardOptions o;
    o.hook = &keep;
    o.head_mask = mask;
    KVCache cache = model.new_cache();
    model.forward(ids, cache, o);
    EXPECT_EQ(attention.size(), std::size_t(L) * model.config().n_head * ids.size() * ids.size());
    EXPECT_EQ(attention, forward_attention);
  }
}

TEST(Classifier, ClassifyReadsTheLastTokensHiddenState) {
  // The label logits of a prefix are those of a longer text's classification read earlier: the
  // head reads the last token's state, which causal attention makes independent of what follows.
  const Model model = Model::load(fixture_dir("gpt2-classifier"));
  const std::vector<std::int32_t> ids = {5, 17, 42, 8};
  EXPECT_NE(model.classify(ids), model.classify(std::span(ids).first(3)));
}

TEST(Classifier, ModelsWithoutAHeadAndBadIdsAreRefused) {
  const Model lm = Model::load(fixture_dir("gpt2-f32"));
  try {
    lm.classify(std::vector<std::int32_t>{1, 2});
    ADD_FAILURE() << "classify on a language model";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no classification head"), std::string::npos) << e.what();
  }
  const Model classifier = Model::load(fixture_dir("gpt2-classifier"));
  EXPECT_THROW(classifier.classify(std::vector<std::int32_t>{}), InvalidArgument);
  EXPECT_THROW(classifier.classify(std::vector<std::int32_t>{1, 96}), InvalidArgument);
}

TEST(Classifier, TextEndsWithEndOfTextAndIsCutToFit) {
  const Tokenizer tok = Tokenizer::load(fixture_dir("gpt2-bytes"));   // one token per byte, <|endoftext|> = 256
  std::vector<std::int32_t> abc = tok.encode("abc");
  ASSERT_EQ(abc.size(), 3u);
  abc.push_back(256);
  EXPECT_EQ(tok.encode_for_classifier("abc", 32), abc);
  EXPECT_EQ(tok.encode_for_classifier("abcdef", 4), abc);   // the end of the text goes
  // "<|endoftext|>" written in the text is text: only the appended one is the special token
  const auto ids = tok.encode_for_classifier("<|endoftext|>", 100);
  EXPECT_EQ(ids.size(), 14u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 256), 1);
  EXPECT_THROW(tok.encode_for_classifier("abc", 0), InvalidArgument);
}

std::string classifier_config(const std::string& extra) {
  return R"({"model_type": "gpt2", "architectures": ["GPT2ForSequenceClassification"], "vocab_size": 10,
             "n_positions": 8, "n_embd": 8, "n_layer": 1, "n_head": 2)" +
         extra + "}";
}

TEST(Classifier, LabelsComeFromId2LabelOfAClassifierOnly) {
  EXPECT_EQ(ModelConfig::parse(classifier_config(R"(, "id2label": {"1": "yes", "0": "no"})")).labels,
            (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(ModelConfig::parse(classifier_config(R"(, "num_labels": 3)")).labels,
            (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  // Every Hugging Face config carries a default id2label: a language model's is not a head.
  const auto lm = ModelConfig::parse(R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                                         "id2label": {"0": "LABEL_0", "1": "LABEL_1"}})");
  EXPECT_TRUE(lm.labels.empty());
  for (const char* bad : {R"(, "id2label": {"0": "a", "2": "b"})", R"(, "id2label": {"0": "a", "1": "a"})",
                          R"(, "id2label": {"0": 5})", R"(, "id2label": [])", R"(, "id2label": {"x": "a"})"}) {
    EXPECT_THROW(ModelConfig::parse(classifier_config(bad)), ModelFormatError) << bad;
  }
  // What to_json writes, parse reads back.
  ModelConfig c = ModelConfig::parse(classifier_config(R"(, "id2label": {"0": "cold", "1": "warm"})"));
  c.eos_token_ids = {9};
  const auto back = ModelConfig::parse(c.to_json());
  EXPECT_EQ(back.labels, c.labels);
  const auto j = nlohmann::json::parse(c.to_json());
  EXPECT_EQ(j["architectures"][0], "GPT2ForSequenceClassification");
  EXPECT_EQ(j["label2id"]["warm"], 1);
  EXPECT_FALSE(j.contains("pad_token_id"));   // HF would read the token before it (core/io/config.cpp says why)
}

}   // namespace
}   // namespace glassbox
