// The generation loop: stop reasons, cancellation, argument errors, seeds, attention rows.
#include <gtest/gtest.h>

#include <algorithm>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/tokenizer.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

struct Generation {
  std::vector<std::int32_t> ids;
  StopReason reason;
};

Generation run(const Model& model, const std::vector<std::int32_t>& prompt, GenerateOptions o, int cancel_after = -1) {
  Generation r;
  r.reason = generate(model, prompt, o, [&](const GeneratedToken& t) {
    r.ids.push_back(t.id);
    return static_cast<int>(r.ids.size()) != cancel_after;
  });
  return r;
}

GenerateOptions greedy(int max_tokens) {
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampling.temperature = 0;
  return o;
}

class Generate : public ::testing::Test {
 protected:
  Model model_ = Model::load(fixture_dir("gpt2-f32"));
  nlohmann::json expected_ = test::read_json(fixture_dir("gpt2-f32") / "expected.json");
  std::vector<std::int32_t> prompt_ = expected_["greedy"]["prompt"].get<std::vector<std::int32_t>>();
  std::vector<std::int32_t> greedy_ = expected_["greedy"]["tokens"].get<std::vector<std::int32_t>>();
};

TEST_F(Generate, StopsAtMaxTokens) {
  const Generation r = run(model_, prompt_, greedy(3));
  EXPECT_EQ(r.reason, StopReason::MaxTokens);
  EXPECT_EQ(r.ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + 3));
  EXPECT_EQ(run(model_, prompt_, greedy(0)).ids.size(), 0u);
}

TEST_F(Generate, StopsAtEndOfText) {
  // Make a later greedy token (the first that differs from all before it) the end-of-text token:
  // generation stops there without emitting it.
  std::size_t stop = 1;
  while (stop < greedy_.size() && std::count(greedy_.begin(), greedy_.begin() + stop, greedy_[stop])) ++stop;
  ASSERT_LT(stop, greedy_.size());
  test::TempDir dir;
  test::copy_fixture("gpt2-f32", dir.path());
  auto config = test::read_json(dir.path() / "config.json");
  config["eos_token_id"] = greedy_[stop];
  test::write_file(dir.path() / "config.json", config.dump());
  const Model model = Model::load(dir.path());
  const Generation r = run(model, prompt_, greedy(8));
  EXPECT_EQ(r.reason, StopReason::EndOfText);
  EXPECT_EQ(r.ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + stop));
}

TEST_F(Generate, StopsAtTheGivenEosIdsInsteadOfTheConfigs) {
  std::size_t stop = 1;
  while (stop < greedy_.size() && std::count(greedy_.begin(), greedy_.begin() + stop, greedy_[stop])) ++stop;
  ASSERT_LT(stop, greedy_.size());
  GenerateOptions o = greedy(8);
  o.eos_token_ids = std::vector<std::int32_t>{9999, greedy_[stop]};
  Generation r = run(model_, prompt_, o);
  EXPECT_EQ(r.reason, StopReason::EndOfText);
  EXPECT_EQ(r.ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + stop));
  o.eos_token_ids = std::vector<std::int32_t>{};   // none: only max_tokens stops it
  r = run(model_, prompt_, o);
  EXPECT_EQ(r.reason, StopReason::MaxTokens);
  EXPECT_EQ(r.ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + 8));
}

// The generator hands the sampler every id of the sequence so far: each greedy token is the argmax
// of its logits after dividing / multiplying those of the prompt's and the produced ids by hand.
TEST_F(Generate, RepetitionPenaltySeesThePromptAndEveryProducedToken) {
  GenerateOptions o = greedy(8);
  o.sampling.repetition_penalty = 1.8f;
  Generator g(model_, prompt_, o);
  std::vector<std::int32_t> sequence = prompt_, produced;
  while (const auto t = g.next()) {
    std::vector<float> logits(t->logits.begin(), t->logits.end());
    std::sort(sequence.begin(), sequence.end());
    sequence.erase(std::unique(sequence.begin(), sequence.end()), sequence.end());
    for (const std::int32_t id : sequence) logits[id] = logits[id] < 0 ? logits[id] * 1.8f : logits[id] / 1.8f;
    EXPECT_EQ(t->id, std::max_element(logits.begin(), logits.end()) - logits.begin()) << "token " << produced.size();
    sequence.push_back(t->id);
    produced.push_back(t->id);
  }
  EXPECT_EQ(produced.size(), 8u);
  EXPECT_NE(produced, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + 8));   // it changed something
  // A penalty of 1 is no penalty: the PyTorch fixture's greedy tokens, bit for bit.
  o.sampling.repetition_penalty = 1.0f;
  EXPECT_EQ(run(model_, prompt_, o).ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + 8));
}

TEST_F(Generate, StopsWhenTheContextIsFullIfAskedTo) {
  GenerateOptions o = greedy(10);
  o.when_context_full = WhenContextFull::Stop;
  const std::vector<std::int32_t> prompt(30, 5);   // context 32: positions 30 and 31 remain
  const Generation r = run(model_, prompt, o);
  EXPECT_EQ(r.reason, StopReason::ContextFull);
  EXPECT_EQ(r.ids.size(), 3u);   // two fill the context, the third is produced but has no position
  const std::vector<std::int32_t> full(32, 5);
  EXPECT_EQ(run(model_, full, o).ids.size(), 1u);
}

// By default generation runs past the end of the context: the PyTorch reference (make_fixtures.py,
// greedy_sliding) decodes 40 tokens on a 16-position model, keeping the most recent 8 tokens at
// each slide and running each window from scratch; the engine, with its cache, gives the same
// tokens, the same window starts, and attention rows over the window only.
TEST(GenerateSliding, SlidesTheWindowAsThePyTorchReference) {
  const Model model = Model::load(fixture_dir("gpt2-full-context"));
  const auto expected = test::read_json(fixture_dir("gpt2-full-context") / "expected.json")["sliding"];
  const auto prompt = expected["prompt"].get<std::vector<std::int32_t>>();
  GenerateOptions o = greedy(expected["max_tokens"].get<int>());
  o.attention = true;
  std::vector<std::int32_t> ids, starts;
  int position = static_cast<int>(prompt.size());
  const ModelConfig& c = model.config();
  const StopReason reason = generate(model, prompt, o, [&](const GeneratedToken& t) {
    EXPECT_EQ(t.position, position++);
    EXPECT_LE(t.position - t.window_start, c.n_positions);
    EXPECT_EQ(t.attention.size(), std::size_t(c.n_layer) * c.n_head * (t.position - t.window_start));
    ids.push_back(t.id);
    starts.push_back(t.window_start);
    return true;
  });
  EXPECT_EQ(reason, StopReason::MaxTokens);
  EXPECT_EQ(ids, expected["tokens"].get<std::vector<std::int32_t>>());
  EXPECT_EQ(starts, expected["window_starts"].get<std::vector<std::int32_t>>());
  EXPECT_GT(starts.back(), 16);   // it slid more than once
}

// 5,000 tokens with the shipped model (a context of 256), attention rows included: the window
// slides 37 times, and once it has first slid memory stays flat (the cache at its full size, the
// same buffers reused) however many tokens follow.
TEST(GenerateSliding, FiveThousandTokensOnTheShippedModelInOneContextOfMemory) {
  const Model model = Model::load(GLASSBOX_SHIPPED_MODEL_DIR);
  const auto prompt = Tokenizer::load(GLASSBOX_SHIPPED_MODEL_DIR).encode("The jury said");
  const int P = model.config().n_positions;
  GenerateOptions o;
  o.max_tokens = 5000;
  o.sampling.seed = 3;
  o.attention = true;
  Generator g(model, prompt, o);
  int n = 0, slides = 0, last_start = 0;
  std::size_t settled = 0, most = 0;
  while (const auto t = g.next()) {
    ASSERT_EQ(t->position, static_cast<int>(prompt.size()) + n);
    ASSERT_LE(t->position - t->window_start, P);
    slides += t->window_start != last_start;
    last_start = t->window_start;
    if (++n == 2 * P) settled = test::heap_in_use();
    if (n > 2 * P) most = std::max(most, test::heap_in_use());
  }
  EXPECT_EQ(n, 5000);
  EXPECT_EQ(g.stop_reason(), StopReason::MaxTokens);
  EXPECT_GE(slides, (5000 - P) / (P / 2 + 1));   // one per P/2 + 1 tokens once the context is full
  EXPECT_LT(most, settled + 64 * 1024) << "bytes in use grew from " << settled << " to " << most;
}

TEST_F(Generate, PullGeneratorGivesTheSameTokensAndStopsForGood) {
  Generator g(model_, prompt_, greedy(4));
  std::vector<std::int32_t> ids;
  while (auto t = g.next()) ids.push_back(t->id);
  EXPECT_EQ(ids, std::vector<std::int32_t>(greedy_.begin(), greedy_.begin() + 4));
  EXPECT_EQ(g.stop_reason(), StopReason::MaxTokens);
  EXPECT_FALSE(g.next().has_value());   // stays stopped
  EXPECT_THROW(Generator(model_, {}, greedy(4)), InvalidArgument);
}

TEST_F(Generate, CallbackCancels) {
  const Generation r = run(model_, prompt_, greedy(8), /*cancel_after=*/2);
  EXPECT_EQ(r.reason, StopReason::Cancelled);
  EXPECT_EQ(r.ids.size(), 2u);
}

TEST_F(Generate, BadArgumentsAreErrorsBeforeAnyToken) {
  const auto never = [](const GeneratedToken&) -> bool { throw std::logic_error("no token expected"); };
  EXPECT_THROW(generate(model_, {}, greedy(4), never), InvalidArgument);
  EXPECT_THROW(generate(model_, std::vector<std::int32_t>(33, 1), greedy(4), never), InvalidArgument);
  EXPECT_THROW(generate(model_, std::vector<std::int32_t>{1, 200}, greedy(4), never), InvalidArgument);
  EXPECT_THROW(generate(model_, prompt_, greedy(-1), never), InvalidArgument);
  GenerateOptions bad = greedy(4);
  bad.sampling.temperature = -1;
  EXPECT_THROW(generate(model_, prompt_, bad, never), InvalidArgument);
  bad = greedy(4);
  bad.sampling.top_p = NAN;
  EXPECT_THROW(generate(model_, prompt_, bad, never), InvalidArgument);
}

TEST_F(Generate, SameSeedSameTokens) {
  GenerateOptions o;
  o.max_tokens = 24;
  o.sampling.temperature = 1.0f;
  o.sampling.seed = 1234;
  const Generation a = run(model_, prompt_, o), b = run(model_, prompt_, o);
  EXPECT_EQ(a.ids, b.ids);
  o.sampling.seed = 99;
  EXPECT_NE(run(model_, prompt_, o).ids, a.ids);
}

TEST_F(Generate, AttentionRowOfTheProducingQuery) {
  // Prompt = the reference sequence: the first token's attention is the reference's last row.
  const auto tokens = expected_["tokens"].get<std::vector<std::int32_t>>();
  const auto& c = model_.config();
  const int T = static_cast<int>(tokens.size());
  GenerateOptions o = greedy(3);
  o.attention = true;
  int step = 0;
  generate(model_, tokens, o, [&](const GeneratedToken& t) {
    EXPECT_EQ(t.position, T + step);
    EXPECT_EQ(t.attention.size(), std::size_t(c.n_layer) * c.n_head * t.position);
    for (int l = 0; l < c.n_layer; ++l)
      for (int h = 0; h < c.n_head; ++h) {
        const float* row = t.attention.data() + (std::size_t(l) * c.n_head + h) * t.position;
        double sum = 0;
        for (int k = 0; k < t.position; ++k) {
          sum += row[k];
          if (step == 0) {
            EXPECT_NEAR(row[k], expected_["attention"][l][h][T - 1][k].get<double>(), 1e-5);
          }
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    ++step;
    return true;
  });
  EXPECT_EQ(step, 3);
}

}   // namespace
}   // namespace glassbox
