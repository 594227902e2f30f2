// The models glassbox ships (web/models/): each a complete Hugging Face directory with a model card
// that loads, the family (a GPT, a classifier, a masked LM) each what its config says, and all of
// them together within the page's budget of 40 MB.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "glassbox/model.h"
#include "glassbox/tokenizer.h"

namespace glassbox {
namespace {

const std::filesystem::path kModels = std::filesystem::path(GLASSBOX_SHIPPED_MODEL_DIR).parent_path();

TEST(ShippedModels, EachIsCompleteAndLoadsAndAllFitTheBudget) {
  std::uintmax_t bytes = 0;
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kModels)) {
    if (!entry.is_directory()) continue;
    ++models;
    for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt", "README.md"})
      EXPECT_TRUE(std::filesystem::is_regular_file(entry.path() / f)) << entry.path() << " lacks " << f;
    for (const auto& file : std::filesystem::recursive_directory_iterator(entry.path()))
      if (file.is_regular_file()) bytes += file.file_size();
    EXPECT_NO_THROW(Model::load(entry.path())) << entry.path();
  }
  EXPECT_EQ(models, 3);
  EXPECT_LT(bytes, 40u << 20) << "web/models holds " << bytes << " bytes";
}

TEST(ShippedModels, TheClassifierIsWhatItsConfigSays) {
  const Model genre = Model::load(kModels / "brown-genre");
  EXPECT_EQ(genre.config().labels, (std::vector<std::string>{"fiction", "news", "nonfiction"}));
  const auto tokenizer = Tokenizer::load(kModels / "brown-genre");
  const auto logits = genre.classify(tokenizer.encode_for_classifier("The jury said the election was fair.", 128));
  EXPECT_EQ(logits.size(), 3u);
}

// A masked LM that has not learned to read a mask's neighbours guesses the same commonest tokens
// (a newline, "the", a comma) at every mask, as the ones trained on long windows from the start
// did (docs/training.md); this one's guesses follow the words on both sides of each mask.
TEST(ShippedModels, TheMaskedLmReadsTheWordsAroundAMask) {
  const Model mlm = Model::load(kModels / "brown-mlm");
  const ModelConfig& c = mlm.config();
  EXPECT_TRUE(c.bidirectional);
  const auto tokenizer = Tokenizer::load(kModels / "brown-mlm");
  ASSERT_EQ(tokenizer.encode(kMaskToken, /*allow_special=*/true), std::vector<std::int32_t>{c.mask_token_id});
  // The first guess at the text's one mask.
  auto first_guess = [&](const std::string& text) {
    const auto ids = tokenizer.encode(text, /*allow_special=*/true);
    const auto at = std::find(ids.begin(), ids.end(), c.mask_token_id) - ids.begin();
    KVCache cache = mlm.new_cache();
    ForwardOptions options;
    options.all_logits = true;
    const auto logits = mlm.forward(ids, cache, options);
    const float* row = logits.data() + at * std::size_t(c.vocab_size);
    const auto best = static_cast<std::int32_t>(std::max_element(row, row + c.vocab_size) - row);
    return tokenizer.decode(std::vector{best});
  };
  EXPECT_EQ(first_guess("The President of the United <|mask|> said he would not run again."), " States");
  EXPECT_EQ(first_guess("He did not <|mask|> what to say."), " know");
  EXPECT_EQ(first_guess("He was elected every four <|mask|>."), " years");
  // Guesses only the words after the mask decide: attention reads both sides.
  EXPECT_EQ(first_guess("The <|mask|> States of America is a large country."), " United");
  EXPECT_EQ(first_guess("He <|mask|> not know what to say."), " did");
}

}   // namespace
}   // namespace glassbox
