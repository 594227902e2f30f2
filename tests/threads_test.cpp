// The forward pass's thread pool: every index is run exactly once, the result of a forward pass
// does not depend on the number of threads (bit for bit, F32 and int8, attention included), and
// forward passes from several threads at once (one pool for all) give each its own right answer.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <filesystem>
#include <cstring>
#include <chrono>
#include <thread>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/safetensors.h"
#include "glassbox/threads.h"
#include "glassbox/trainer.h"
#include "test_util.h"
#include "io/dtype.h"
#include "model/blocks.h"
#include "model/thread_pool.h"

namespace glassbox {
namespace {

using test::fixture_dir;

// Restores the default thread count when a test ends.
struct ThreadCount {
  explicit ThreadCount(int n) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(0); }
};

TEST(ThreadPool, RunsEveryIndexOnceInWholeGrains) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int n : {0, 1, 7, 16, 17, 100, 1000}) {
      for (int grain : {1, 4, 16}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int> ranges = 0;
        pool.run(n, grain, [&](int begin, int end) {
          ++ranges;
          EXPECT_EQ(begin % grain, 0) << "n=" << n << " grain=" << grain;
          EXPECT_TRUE(end == n || (end - begin) % grain == 0);
          for (int i = begin; i < end; ++i) ++hits[i];
        });
        for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "threads=" << threads << " n=" << n << " i=" << i;
        EXPECT_LE(ranges, ThreadPool::kChunksPerThread * threads);
      }
    }
  }
}

// A thread that cannot go on (here: held inside its first chunk until every other chunk is done)
// leaves the rest of the job to the others: chunks are taken, not assigned in advance.
TEST(ThreadPool, AStalledThreadLeavesItsShareToTheOthers) {
  ThreadPool pool(3);
  const int n = 64, chunks = ThreadPool::kChunksPerThread * 3;
  // Until a pool thread takes a chunk (they spin between jobs, so soon unless the machine is busy;
  // if the caller was quicker, it simply did every chunk, and the job is run again).
  bool stalled_once = false;
  for (int attempt = 0; attempt < 100 && !stalled_once; ++attempt) {
    std::vector<std::atomic<int>> hits(n);
    std::atomic<int> done = 0;
    std::atomic<bool> someone_stalled = false, timed_out = false;
    const auto caller = std::this_thread::get_id();
    pool.run(n, 1, [&](int begin, int end) {
      for (int i = begin; i < end; ++i) ++hits[i];
      // Each chunk lasts a while, so that the pool's threads come for some before the caller has
      // taken them all.
      for (const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
           std::chrono::steady_clock::now() < until;) {
      }
      if (std::this_thread::get_id() != caller && !someone_stalled.exchange(true)) {
        // Every other chunk must be done by the two other threads while this one waits.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (done.load() != chunks - 1)
          if (std::chrono::steady_clock::now() > deadline) {
            timed_out = true;
            break;
          }
      }
      ++done;
    });
    EXPECT_FALSE(timed_out) << "the other chunks waited for the stalled thread";
    EXPECT_EQ(done, chunks);
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << i;
    stalled_once = someone_stalled;
  }
  EXPECT_TRUE(stalled_once) << "no pool thread took a chunk in 100 jobs";
}

// A job started while the pool runs another thread's job runs on its own thread, at once.
TEST(ThreadPool, ABusyPoolRunsTheNewJobOnTheCallingThread) {
  ThreadPool pool(2);
  std::atomic<bool> inner_ran = false;
  std::thread other;
  pool.run(2, 1, [&](int begin, int) {
    if (begin != 0) return;
    other = std::thread([&] {
      const auto me = std::this_thread::get_id();
      pool.run(4, 1, [&](int b, int e) {
        EXPECT_EQ(std::this_thread::get_id(), me);
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, 4);
      });
      inner_ran = true;
    });
    other.join();   // would hang if the inner job waited for the pool
  });
  EXPECT_TRUE(inner_ran);
}

TEST(Threads, CountIsChecked) {
  EXPECT_THROW(set_num_threads(-1), InvalidArgument);
  EXPECT_THROW(set_num_threads(257), InvalidArgument);
  ThreadCount three(3);
  EXPECT_EQ(num_threads(), 3);
}

struct Result {
  std::vector<float> logits, attention;
};
Result forward_all(const Model& model, const std::vector<std::int32_t>& ids) {
  Result r;
  TensorHook keep = [&](const NamedTensor& t) {
    if (std::string_view(t.name) == "attn_probs")
      r.attention.insert(r.attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
  };
  KVCache cache = model.new_cache();
  ForwardOptions o;
  o.all_logits = true;
  o.hook = &keep;
  r.logits = model.forward(ids, cache, o);
  return r;
}

// A randomly initialised GPT-2 large enough that a 48-token prompt's matrix products and attention
// are split across threads (parallel_for runs jobs below kParallelWork on the calling thread).
void write_random_model(const test::TempDir& dir) {
  ModelConfig c;
  c.architecture = Architecture::GPT2;
  c.vocab_size = 512;
  c.n_positions = 64;
  c.n_embd = 128;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_inner = 512;
  TrainingOptions o;
  o.seq_len = 64;
  Trainer(c, o).save_model(dir.path());
}

// The logits of every position, without a hook (a prompt's causal attention is then split into
// blocks of rows, blocks.h).
std::vector<float> forward_logits(const Model& model, const std::vector<std::int32_t>& ids) {
  KVCache cache = model.new_cache();
  ForwardOptions o;
  o.all_logits = true;
  return model.forward(ids, cache, o);
}

// The model's forward pass over ids on 1, 2, 3, 7 and 16 threads, F32 (fused and portable
// products), int8 and int4, against one thread's: the logits and attention with a hook listening,
// and the logits without one.
void expect_the_same_bits_on_any_thread_count(const std::filesystem::path& dir, const std::vector<std::int32_t>& ids) {
  struct Mode {
    Quantization q;
    Arithmetic arithmetic;
  };
  for (const auto& [q, arithmetic] :
       {Mode{Quantization::None, Arithmetic::Fused}, Mode{Quantization::None, Arithmetic::Portable},
        Mode{Quantization::Int8, Arithmetic::Fused}, Mode{Quantization::Int4, Arithmetic::Fused}}) {
    LoadOptions options{q};
    options.arithmetic = arithmetic;
    const Model model = Model::load(dir, options);
    Result one;
    {
      ThreadCount t(1);
      one = forward_all(model, ids);
    }
    for (int threads : {1, 2, 3, 7, 16}) {
      ThreadCount t(threads);
      const Result many = forward_all(model, ids);
      const std::string mode = std::string(quantization_name(q)) + ", " + arithmetic_name(model.arithmetic());
      EXPECT_EQ(many.logits, one.logits) << mode << ", " << threads << " threads";
      EXPECT_EQ(many.attention, one.attention) << mode << ", " << threads << " threads";
      EXPECT_EQ(forward_logits(model, ids), one.logits) << mode << ", " << threads << " threads, no hook";
    }
  }
}

TEST(Threads, ForwardDoesNotDependOnTheThreadCount) {
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 48; ++i) ids.push_back((i * 37 + 11) % 512);
  EXPECT_GE(48.0 * 3 * 128 * 128, kParallelWork);           // the qkv product is split
  EXPECT_GE(2.0 * 48 * 48 * 128, kParallelWork);            // attention too, and without a hook in
  EXPECT_GT(48, kAttentionRows);                            // blocks of rows
  EXPECT_GE(48.0 * 512 * kActivationCost, kParallelWork);   // GELU
  EXPECT_GE(48.0 * 512 * kQuantizeCost, kParallelWork);     // int8, int4: the MLP projection's input
  test::TempDir dir;
  write_random_model(dir);
  expect_the_same_bits_on_any_thread_count(dir.path(), ids);
}

// A Llama-shaped model (RMSNorm, a gated SiLU MLP, rotary positions, grouped-query attention), with
// random weights, wide enough that a 48-token prompt's norms are split across threads too.
void write_random_llama(const test::TempDir& dir) {
  const int V = 256, C = 192, F = 512, layers = 2, kv = 96;   // 4 heads of 48, 2 key/value heads
  nlohmann::json config = {{"architectures", {"LlamaForCausalLM"}},
                           {"model_type", "llama"},
                           {"vocab_size", V},
                           {"hidden_size", C},
                           {"max_position_embeddings", 64},
                           {"intermediate_size", F},
                           {"num_hidden_layers", layers},
                           {"num_attention_heads", 4},
                           {"num_key_value_heads", 2},
                           {"hidden_act", "silu"},
                           {"rms_norm_eps", 1e-6},
                           {"tie_word_embeddings", false},
                           {"rope_theta", 10000.0}};
  std::mt19937 rng(7);
  std::vector<test::RawTensor> tensors;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale) {
    std::size_t n = 1;
    for (std::int64_t d : shape) n *= std::size_t(d);
    tensors.push_back(test::f32_tensor(name, shape, test::random_vector(n, rng, scale)));
  };
  add("model.embed_tokens.weight", {V, C}, 1.0f);
  add("lm_head.weight", {V, C}, 0.1f);
  add("model.norm.weight", {C}, 1.0f);
  for (int l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {C}, 1.0f);
    add(p + "post_attention_layernorm.weight", {C}, 1.0f);
    add(p + "self_attn.q_proj.weight", {C, C}, 0.1f);
    add(p + "self_attn.k_proj.weight", {kv, C}, 0.1f);
    add(p + "self_attn.v_proj.weight", {kv, C}, 0.1f);
    add(p + "self_attn.o_proj.weight", {C, C}, 0.1f);
    add(p + "mlp.gate_proj.weight", {F, C}, 0.1f);
    add(p + "mlp.up_proj.weight", {F, C}, 0.1f);
    add(p + "mlp.down_proj.weight", {C, F}, 0.05f);
  }
  test::write_file(dir.path() / "config.json", config.dump());
  test::write_file(dir.path() / "model.safetensors", test::make_safetensors(tensors));
}

TEST(Threads, LlamaShapedForwardDoesNotDependOnTheThreadCount) {
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 48; ++i) ids.push_back((i * 53 + 5) % 256);
  EXPECT_GE(48.0 * 192 * kNormCost, kParallelWork);         // RMSNorm
  EXPECT_GE(48.0 * 512 * kActivationCost, kParallelWork);   // SiLU times up
  EXPECT_GE(2.0 * 48 * 48 * 192, kParallelWork);            // attention, in blocks of rows
  test::TempDir dir;
  write_random_llama(dir);
  expect_the_same_bits_on_any_thread_count(dir.path(), ids);
}

// Loading with quantization splits every large matrix across the threads (model/weights.cpp): the
// arrays, and so the logits, are the same bit for bit at 1 to 16 threads, from an F32 file whose
// Conv1D weights are transposed 8 rows at a time per thread, and from the same model as BF16
// (converted a chunk of rows at a time, the embedding's rows too).
TEST(Threads, QuantizedLoadsDoNotDependOnTheThreadCount) {
  ModelConfig c;
  c.architecture = Architecture::GPT2;
  c.vocab_size = 2048;
  c.n_positions = 32;
  c.n_embd = 256;
  c.n_layer = 1;
  c.n_head = 4;
  c.n_inner = 2048;
  EXPECT_GE(256.0 * 2048, kParallelWork);   // the MLP's matrices and the LM head are split
  TrainingOptions o;
  o.seq_len = 32;
  test::TempDir f32, bf16;
  Trainer(c, o).save_model(f32.path());
  // The same tensors as BF16 (every value rounded), beside the same config.
  const SafeTensors file = SafeTensors::open(f32.path() / "model.safetensors");
  std::vector<std::vector<std::uint16_t>> halves;
  std::vector<TensorData> tensors;
  for (const TensorInfo& t : file.tensors()) {
    std::vector<float> values(static_cast<std::size_t>(t.numel));
    std::memcpy(values.data(), t.bytes.data(), t.bytes.size());
    std::vector<std::uint16_t>& h = halves.emplace_back(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) h[i] = f32_to_bf16(values[i]);
    tensors.push_back({t.name, DType::BF16, t.shape, std::as_bytes(std::span(h))});
  }
  std::filesystem::copy_file(f32.path() / "config.json", bf16.path() / "config.json");
  test::write_file(bf16.path() / "model.safetensors", safetensors_bytes(tensors));

  std::vector<std::int32_t> ids;
  for (int i = 0; i < 24; ++i) ids.push_back((i * 37 + 11) % 2048);
  for (const auto* dir : {&f32, &bf16})
    for (Quantization q : {Quantization::Int8, Quantization::Int4, Quantization::None}) {
      Result one;
      {
        ThreadCount t(1);
        one = forward_all(Model::load(dir->path(), LoadOptions{q}), ids);
      }
      for (int threads : {2, 5, 16}) {
        std::optional<Model> model;
        {
          ThreadCount t(threads);
          model.emplace(Model::load(dir->path(), LoadOptions{q}));
        }
        ThreadCount t(1);
        EXPECT_EQ(forward_all(*model, ids).logits, one.logits)
            << (dir == &f32 ? "F32" : "BF16") << " file, " << quantization_name(q) << ", loaded on " << threads
            << " threads";
      }
    }
}

// Several threads' forward passes at once: the pool runs one thread's jobs while the others run
// theirs inline (the 48-token prompts make every matrix product a job for the pool).
TEST(Threads, ConcurrentForwardPassesShareOnePool) {
  test::TempDir dir;
  write_random_model(dir);
  const Model model = Model::load(dir.path());
  ThreadCount t(2);
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<Result> want;
  for (int p = 0; p < 4; ++p) {
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 48; ++i) ids.push_back((i * (p + 3) + 7 * p) % 512);
    prompts.push_back(ids);
    want.push_back(forward_all(model, ids));
  }
  std::vector<std::thread> threads;
  std::atomic<int> wrong = 0;
  for (int p = 0; p < 4; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < 10; ++i)
        if (forward_all(model, prompts[p]).logits != want[p].logits) ++wrong;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
}

}   // namespace
}   // namespace glassbox
