// The models glassbox ships (web/models/): each a complete Hugging Face directory with a model card
// that loads, the family (a GPT and a classifier so far) each what its config says, and all of them
// together within the page's budget of 40 MB.
#include <gtest/gtest.h>

#include <filesystem>

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
  EXPECT_EQ(models, 2);
  EXPECT_LT(bytes, 40u << 20) << "web/models holds " << bytes << " bytes";
}

TEST(ShippedModels, TheClassifierIsWhatItsConfigSays) {
  const Model genre = Model::load(kModels / "brown-genre");
  EXPECT_EQ(genre.config().labels, (std::vector<std::string>{"fiction", "news", "nonfiction"}));
  const auto tokenizer = Tokenizer::load(kModels / "brown-genre");
  const auto logits = genre.classify(tokenizer.encode_for_classifier("The jury said the election was fair.", 128));
  EXPECT_EQ(logits.size(), 3u);
}

}  // namespace
}  // namespace glassbox
