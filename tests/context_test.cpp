// The context a model runs with (LoadOptions::context): the most positions a sequence holds, which
// sizes its KV cache (kv_heads x head_dim per layer and position) and the memory check. By default
// the model's n_positions, at most kDefaultContext: Llama 3.2's 131,072 would reserve GBs.
#include <gtest/gtest.h>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/kv_cache.h"
#include "glassbox/model.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

// A copy of a fixture whose config.json has another max_position_embeddings (a rotary model: no
// tensor depends on it).
void copy_with_positions(const std::string& fixture, int positions, const test::TempDir& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(fixture_dir(fixture)))
    std::filesystem::copy(entry.path(), dir.path() / entry.path().filename());
  nlohmann::json config = test::read_json(dir.path() / "config.json");
  config["max_position_embeddings"] = positions;
  test::write_file(dir.path() / "config.json", config.dump());
}

TEST(Context, DefaultsToThePositionsUpTo4096) {
  EXPECT_EQ(Model::load(fixture_dir("gpt2-f32")).context(), Model::load(fixture_dir("gpt2-f32")).config().n_positions);
  EXPECT_EQ(Model::load(fixture_dir("llama-llama3-v5")).context(), 512);
  const test::TempDir long_context;
  copy_with_positions("llama-gqa", 131072, long_context);
  const Model model = Model::load(long_context.path());
  EXPECT_EQ(model.config().n_positions, 131072);
  EXPECT_EQ(model.context(), kDefaultContext);
  EXPECT_EQ(model.new_cache().capacity(), kDefaultContext);
  EXPECT_EQ(Model::load(long_context.path(), {.context = 131072}).context(), 131072);
}

// A smaller context caps every sequence: the cache, forward, generation (which slides at it).
TEST(Context, CapsTheCacheForwardAndGeneration) {
  const Model model = Model::load(fixture_dir("llama-llama3-v5"), {.context = 16});
  EXPECT_EQ(model.context(), 16);
  KVCache cache = model.new_cache();
  EXPECT_EQ(cache.capacity(), 16);
  const std::vector<std::int32_t> ids(17, 3);
  try {
    model.forward(ids, cache);
    ADD_FAILURE() << "17 tokens ran in a context of 16";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("17 tokens do not fit in the context of 16 positions"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(cache.size(), 0);
  // A cache made for the model's full positions is another model's.
  const Model full = Model::load(fixture_dir("llama-llama3-v5"));
  KVCache other = full.new_cache();
  EXPECT_THROW(model.forward(std::span(ids).first(2), other), InvalidArgument);
  // The same logits as the full context's model, where both fit.
  KVCache a = model.new_cache(), b = full.new_cache();
  EXPECT_EQ(model.forward(std::span(ids).first(16), a), full.forward(std::span(ids).first(16), b));
  // Generation slides at the context: 40 tokens after a 4-token prompt.
  GenerateOptions o;
  o.max_tokens = 40;
  o.sampling.temperature = 0;
  int produced = 0, last_position = 0;
  const StopReason reason = generate(model, std::vector<std::int32_t>{1, 2, 3, 4}, o, [&](const GeneratedToken& t) {
    ++produced;
    last_position = t.position;
    return true;
  });
  EXPECT_EQ(reason, StopReason::MaxTokens);
  EXPECT_EQ(produced, 40);
  EXPECT_EQ(last_position, 43);   // positions count the whole text, past the context
  o.when_context_full = WhenContextFull::Stop;
  EXPECT_EQ(generate(model, std::vector<std::int32_t>{1, 2, 3, 4}, o, [](const GeneratedToken&) { return true; }),
            StopReason::ContextFull);
}

TEST(Context, OutsideOneToThePositionsIsRefused) {
  for (const int context : {-1, 513}) {
    try {
      Model::load(fixture_dir("llama-llama3-v5"), {.context = context});
      ADD_FAILURE() << context;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()),
                "the context must be 1..512 positions (the model's n_positions; 0: at most 4096), got " +
                    std::to_string(context));
    }
  }
}

// The cache holds kv_heads x head_dim floats per layer, position and keys or values: grouped-query
// and multi-query attention keep less than n_embd. The memory check counts the context's cache.
TEST(Context, CacheBytesFollowKeyValueHeadsAndTheContext) {
  const ModelConfig mqa = Model::load(fixture_dir("llama-mqa-bias-v5")).config();   // 1 kv head of 12
  EXPECT_EQ(mqa.kv_heads() * mqa.head_dim(), 12);
  EXPECT_EQ(kv_cache_bytes(mqa, 64), KVCache::peak_bytes(mqa.n_layer, 64, 12));
  EXPECT_EQ(kv_cache_bytes(mqa, 64), std::uint64_t(4) * 12 * 2 * mqa.n_layer * (64 + 32));
  const ModelConfig gpt2 = Model::load(fixture_dir("gpt2-f32")).config();
  EXPECT_EQ(kv_cache_bytes(gpt2, 100), KVCache::peak_bytes(gpt2.n_layer, 100, gpt2.n_embd));
  // 131,072 positions of cache (96 MB for this tiny model) do not fit in 32 MB; the default
  // 4,096 (3 MB) do, and so the model loads.
  const test::TempDir long_context;
  copy_with_positions("llama-gqa", 131072, long_context);
  const std::uint64_t limit = std::uint64_t(32) << 20;
  EXPECT_NO_THROW(Model::load(long_context.path(), {.max_memory = limit}));
  try {
    Model::load(long_context.path(), {.max_memory = limit, .context = 131072});
    ADD_FAILURE() << "a 131,072-position cache fit in 32 MB";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("for the keys and values of a full context (131072 positions)"),
              std::string::npos)
        << e.what();
  }
}

}   // namespace
}   // namespace glassbox
