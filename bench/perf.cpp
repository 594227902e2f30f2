// glassbox_perf: one timed run of the engine, for scripts/bench (a benchmark, never a test). The
// same source builds natively and as WebAssembly for Node, so both are measured the same way; the
// script runs it several times, each in a fresh process, and reports medians.
//
//   glassbox_perf model DIR --ids FILE [--decode N]   load, prefill the prompt ids (JSON array in
//                 [--triad-after MB] [--lens K]        FILE), then N greedy tokens with the KV cache
//                 [--warm-up]                          (with --lens, each pass also computes the
//                                                      logit lens, K tokens per layer); then, the
//                                                      model freed, the triad. --warm-up: first an
//                                                      untimed 16-token prompt and 4 tokens
//   glassbox_perf patch DIR [--tokens T] [--at P]      activation patching (resid_pre, then every
//                 [--threads N]                        site) of a T-token prompt against one that
//                                                      differs at position P (default T / 2)
//   glassbox_perf tokenizer DIR TEXT                   encode and decode TEXT's bytes
//   glassbox_perf triad [--mb N]                       single-core memory bandwidth (STREAM triad)
//   glassbox_perf kernels [--keys S] [--prompt T]      the kernels alone on GPT-2 small's shapes
//                                                      (random values): the int8 and int4 products
//                                                      of one token, attention over S cached keys
//                                                      in all 12 layers, quantizing activations,
//                                                      and one layer's products for a T-row prompt
//                                                      (F32, int8, int4)
//
// Prints one JSON object. Times are wall-clock (steady_clock); peak memory is the process's
// resident high-water mark (getrusage natively; Node's process.resourceUsage() in WebAssembly), and
// the resident memory right after the load (/proc/self/statm; Node's process.memoryUsage()).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "model/arena.h"
#include "glassbox/experiments.h"
#include "glassbox/model.h"
#include "glassbox/threads.h"
#include "glassbox/tokenizer.h"
#ifdef GLASSBOX_PERF_TRAINING
#include "glassbox/trainer.h"
#endif

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double peak_rss_mb() {
#ifdef __EMSCRIPTEN__
  // Node's own high-water mark: the WebAssembly heap lives inside the process.
  return EM_ASM_DOUBLE({ return process.resourceUsage().maxRSS; }) / 1024.0;
#else
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;   // Linux: kilobytes
#endif
}

// The process's resident memory now: after a load, the model's arrays (and the program itself).
double rss_mb() {
#ifdef __EMSCRIPTEN__
  return EM_ASM_DOUBLE({ return process.memoryUsage().rss; }) / double(1 << 20);
#else
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / double(1 << 20);
#endif
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::int32_t argmax(const std::vector<float>& logits) {
  return static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// Load; the prompt in one forward pass (time to first token = that + the argmax); then `decode`
// greedy tokens one forward pass each, exactly as the peers' loop does.
json run_model(const std::string& dir, const std::string& ids_file, int decode, const glassbox::LoadOptions& load,
               int lens_k, bool warm_up) {
  const auto prompt = json::parse(read_file(ids_file)).get<std::vector<std::int32_t>>();
  auto t0 = Clock::now();
  const glassbox::Model model = glassbox::Model::load(dir, load);
  const double load_ms = ms_since(t0);
  const double rss_after_load_mb = rss_mb();

  std::vector<glassbox::TokenProbability> lens;
  const glassbox::ForwardOptions options{.lens_k = lens_k, .lens = lens_k > 0 ? &lens : nullptr};
  if (warm_up) {   // what a peer's warm-up does: a 16-token prompt and 4 tokens, untimed
    glassbox::KVCache cache = model.new_cache();
    std::vector<std::int32_t> ids(prompt.begin(), prompt.begin() + std::min<std::size_t>(16, prompt.size()));
    for (int i = 0; i < 5; ++i) ids = {argmax(model.forward(ids, cache, options))};
  }
  // The first token's time includes making the cache, with room for every position up front, as
  // generation does (Generator): growing the cache between two tokens would time a one-off copy of
  // it among the decoded tokens.
  t0 = Clock::now();
  glassbox::KVCache cache = model.new_cache();
  cache.reserve(std::min<int>(model.config().n_positions, int(prompt.size()) + decode));
  std::vector<float> logits = model.forward(prompt, cache, options);
  std::int32_t next = argmax(logits);
  const double ttft_ms = ms_since(t0);

  std::vector<std::int32_t> generated = {next};
  t0 = Clock::now();
  for (int i = 0; i < decode; ++i) {
    const std::int32_t token = generated.back();
    logits = model.forward(std::span(&token, 1), cache, options);
    generated.push_back(argmax(logits));
  }
  const double decode_ms = ms_since(t0);
  generated.pop_back();   // the last argmax was not fed back
  return {{"quantize", glassbox::quantization_name(model.quantization())},
          {"arithmetic", glassbox::arithmetic_name(model.arithmetic())},
          {"lens", lens_k},
          {"load_ms", load_ms},
          {"rss_after_load_mb", rss_after_load_mb},
          {"prompt_tokens", prompt.size()},
          {"ttft_ms", ttft_ms},
          {"prefill_tok_s", 1000.0 * static_cast<double>(prompt.size()) / ttft_ms},
          {"decode_tokens", decode},
          {"decode_tok_s", 1000.0 * decode / decode_ms},
          {"peak_rss_mb", peak_rss_mb()},
          {"tokens", generated}};
}

json run_tokenizer(const std::string& dir, const std::string& text_file) {
  const glassbox::Tokenizer tokenizer = glassbox::Tokenizer::load(dir);
  const std::string text = read_file(text_file);
  const double mb = static_cast<double>(text.size()) / 1e6;
  auto t0 = Clock::now();
  const auto ids = tokenizer.encode(text);
  const double encode_ms = ms_since(t0);
  t0 = Clock::now();
  const std::string back = tokenizer.decode(ids);
  const double decode_ms = ms_since(t0);
  if (back != text) throw std::runtime_error("decode(encode(text)) != text");
  return {{"text_bytes", text.size()},
          {"tokens", ids.size()},
          {"encode_mb_s", 1000.0 * mb / encode_ms},
          {"decode_mb_s", 1000.0 * mb / decode_ms}};
}

// The median of `reps` timings of fn(), in ms; before() runs untimed before each.
template <typename F, typename B>
double median_ms(int reps, F&& fn, B&& before) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    before();
    const auto t0 = Clock::now();
    fn();
    ms.push_back(ms_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The kernels a decoded token of GPT-2 small spends its time in, alone: what each costs, and how
// close to the memory's speed the bandwidth-bound ones get (docs/performance.md, Int8 kernels).
json run_kernels(int keys, int prompt, int reps) {
  namespace k = glassbox::kernels;
  constexpr int L = 12, H = 12, hd = 64, C = H * hd, F = 4 * C, V = 50257;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  const auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
  };
  // Every int8 matrix of a token, in the order the forward pass reads them, on huge pages as the
  // model's weights are (arena.h).
  struct Q8Matrix {
    int N, K;
    std::int8_t* q;
    float* d;
  };
  std::vector<std::pair<int, int>> shapes;
  for (int l = 0; l < L; ++l) shapes.insert(shapes.end(), {{3 * C, C}, {C, C}, {F, C}, {C, F}});
  shapes.push_back({V, C});
  const auto padded = [](std::size_t n) { return (n + 63) / 64 * 64; };
  std::size_t bytes = 0;
  for (const auto& [N, K] : shapes)
    bytes += padded(k::Q8Shape(N, K).q_size()) + padded(sizeof(float) * k::Q8Shape(N, K).d_size());
  glassbox::LargeBlock block(bytes);
  std::vector<Q8Matrix> matrices;
  std::byte* at = block.data();
  for (const auto& [N, K] : shapes) {
    const k::Q8Shape s(N, K);
    Q8Matrix m{N, K, reinterpret_cast<std::int8_t*>(at), reinterpret_cast<float*>(at + padded(s.q_size()))};
    at += padded(s.q_size()) + padded(sizeof(float) * s.d_size());
    k::quantize_weights_q8(m.q, m.d, random(std::size_t(N) * K).data(), N, K);
    matrices.push_back(m);
  }
  const auto x = random(F);
  k::Q8Activations narrow, wide;
  k::quantize_activations_q8(narrow, x.data(), 1, C);
  k::quantize_activations_q8(wide, x.data(), 1, F);
  std::vector<float> out(V);
  const auto products = [&] {
    for (const Q8Matrix& m : matrices) k::matmul_q8(out.data(), m.K == C ? narrow : wide, m.q, m.d, nullptr, m.N);
  };
  const auto nothing = [] {};
  const double products_ms = median_ms(reps, products, nothing);

  // The same matrices as int4 (half the bytes of the values): the int8 ones stay allocated, so the
  // int4 ones start cold in the caches too.
  struct Q4Matrix {
    int N, K;
    std::uint8_t* q;
    float* d;
  };
  std::size_t bytes4 = 0;
  for (const auto& [N, K] : shapes)
    bytes4 += padded(k::Q8Shape(N, K).q4_size()) + padded(sizeof(float) * k::Q8Shape(N, K).d_size());
  glassbox::LargeBlock block4(bytes4);
  std::vector<Q4Matrix> matrices4;
  at = block4.data();
  for (const auto& [N, K] : shapes) {
    const k::Q8Shape s(N, K);
    Q4Matrix m{N, K, reinterpret_cast<std::uint8_t*>(at), reinterpret_cast<float*>(at + padded(s.q4_size()))};
    at += padded(s.q4_size()) + padded(sizeof(float) * s.d_size());
    k::quantize_weights_q4(m.q, m.d, random(std::size_t(N) * K).data(), N, K);
    matrices4.push_back(m);
  }
  const double products4_ms = median_ms(
      reps,
      [&] {
        for (const Q4Matrix& m : matrices4) k::matmul_q4(out.data(), m.K == C ? narrow : wide, m.q, m.d, nullptr, m.N);
      },
      nothing);
  const double values = 100.0 * L * (3 * C + F);   // each layer's 4 products quantize C, C, C and F values
  const double quantize_ms = median_ms(
      reps,
      [&] {
        for (int i = 0; i < 100 * L; ++i) {
          for (int j = 0; j < 3; ++j) k::quantize_activations_q8(narrow, x.data(), 1, C);
          k::quantize_activations_q8(wide, x.data(), 1, F);
        }
      },
      nothing);

  // Attention of one query over `keys` cached positions in every layer: the cache's rows hold the
  // heads side by side (KVCache), one pass for all heads, and per head as prompts do. Before
  // each, the products stream the weights through the caches, as in a decoded token.
  const std::size_t matrix = std::size_t(keys) * C;   // one layer's keys or values, on huge pages as KVCache's
  glassbox::LargeBlock cache_block(2 * L * matrix * sizeof(float));
  std::vector<float*> cache(2 * L);
  for (int i = 0; i < 2 * L; ++i) {
    cache[i] = reinterpret_cast<float*>(cache_block.data()) + i * matrix;
    const auto filler = random(matrix);
    std::copy(filler.begin(), filler.end(), cache[i]);
  }
  const auto q = random(3 * C);
  std::vector<float> heads(C), scratch(std::size_t(H) * keys);
  const double one_query_ms = median_ms(
      reps,
      [&] {
        for (int l = 0; l < L; ++l)
          k::attention_one_query(heads.data(), q.data(), cache[2 * l], cache[2 * l + 1], C, keys, H, hd, 0.125f,
                                 nullptr, scratch.data());
      },
      products);
  const double per_head_ms = median_ms(
      reps,
      [&] {
        for (int l = 0; l < L; ++l)
          for (int h = 0; h < H; ++h)
            k::attention(heads.data() + h * hd, C, q.data() + h * hd, 3 * C, cache[2 * l] + h * hd,
                         cache[2 * l + 1] + h * hd, C, 1, keys - 1, hd, 0.125f, nullptr, scratch.data());
      },
      products);
  // A prompt's products, bound by arithmetic: one layer's four matrices against `prompt` rows, F32
  // (packed, kernels.h), int8 and int4 (the activations quantized as each product does).
  const int T = prompt;
  const auto prompt_x = random(std::size_t(T) * F);
  std::vector<float> wide_out(std::size_t(T) * F);
  double flops = 0;
  for (int i = 0; i < 4; ++i) flops += 2.0 * T * shapes[i].first * shapes[i].second;
  std::vector<std::vector<float>> packed;
  for (int i = 0; i < 4; ++i) {
    const auto [N, K] = shapes[i];
    packed.emplace_back(std::size_t(N) * K);
    k::pack_matrix(packed.back().data(), random(std::size_t(N) * K).data(), N, K);
  }
  const auto prompt_f32_ms = [&](auto product) {
    return median_ms(
        reps,
        [&] {
          for (int i = 0; i < 4; ++i)
            product(wide_out.data(), prompt_x.data(), packed[i].data(), nullptr, T, shapes[i].second, shapes[i].first,
                    0);
        },
        nothing);
  };
  const double prompt_portable_ms = prompt_f32_ms(k::matmul), prompt_fused_ms = prompt_f32_ms(k::matmul_fused);
  k::Q8Activations prompt_narrow, prompt_wide;
  const auto prompt_ms = [&](auto product) {
    return median_ms(
        reps,
        [&] {
          k::quantize_activations_q8(prompt_narrow, prompt_x.data(), T, C);
          k::quantize_activations_q8(prompt_wide, prompt_x.data(), T, F);
          for (int i = 0; i < 4; ++i) product(i, shapes[i].second == C ? prompt_narrow : prompt_wide);
        },
        nothing);
  };
  const double prompt_int8_ms = prompt_ms([&](int i, const k::Q8Activations& a) {
    k::matmul_q8(wide_out.data(), a, matrices[i].q, matrices[i].d, nullptr, matrices[i].N);
  });
  const double prompt_int4_ms = prompt_ms([&](int i, const k::Q8Activations& a) {
    k::matmul_q4(wide_out.data(), a, matrices4[i].q, matrices4[i].d, nullptr, matrices4[i].N);
  });

  const double cache_bytes = 2.0 * L * keys * C * sizeof(float);
  const double mb = static_cast<double>(bytes) / 1e6, mb4 = static_cast<double>(bytes4) / 1e6;
  return {
      {"int8_products", {{"mb", mb}, {"ms", products_ms}, {"gb_s", mb / products_ms}, {"tok_s", 1000.0 / products_ms}}},
      {"int4_products",
       {{"mb", mb4}, {"ms", products4_ms}, {"gb_s", mb4 / products4_ms}, {"tok_s", 1000.0 / products4_ms}}},
      {"prompt_products",
       {{"tokens", T},
        {"f32_gflop_s", flops / prompt_fused_ms / 1e6},   // fused multiply-adds (the native default)
        {"f32_portable_gflop_s", flops / prompt_portable_ms / 1e6},
        {"fused", k::has_fused_multiply_add()},
        {"int8_gflop_s", flops / prompt_int8_ms / 1e6},
        {"int4_gflop_s", flops / prompt_int4_ms / 1e6}}},
      {"quantize_activations", {{"ns_per_value", 1e6 * quantize_ms / values}}},
      {"attention",
       {{"keys", keys},
        {"cache_mb", cache_bytes / 1e6},
        {"one_query_ms", one_query_ms},
        {"one_query_gb_s", cache_bytes / one_query_ms / 1e6},
        {"per_head_ms", per_head_ms},
        {"per_head_gb_s", cache_bytes / per_head_ms / 1e6}}}};
}

#ifdef GLASSBOX_PERF_TRAINING
// Training steps of a GPT-2-shaped model on a fixed stream of random ids (the speed of a step does
// not depend on what the ids say), one step at a time through the public Trainer, as `glassbox
// train` runs them. tokens/s is the median over the steps after the first two (warm-up: the
// workspaces are allocated in the first).
json run_training(const glassbox::ModelConfig& config, const glassbox::TrainingOptions& options) {
  std::mt19937 rng(1);   // its outputs are the same everywhere (the distributions' are not)
  std::vector<std::int32_t> stream(std::size_t(1) << 18);
  for (auto& t : stream) t = static_cast<std::int32_t>(rng() % std::uint32_t(config.vocab_size));
  glassbox::Trainer trainer(config, options);
  std::vector<std::int32_t> inputs, targets;
  std::vector<double> step_ms;
  std::vector<double> losses;
  for (int s = 0; s < options.steps; ++s) {
    glassbox::sample_batch(stream, options.batch_size, options.seq_len, options.seed, s, inputs, targets);
    const auto t0 = Clock::now();
    losses.push_back(trainer.train_step(inputs, targets, options.batch_size, options.seq_len).loss);
    step_ms.push_back(ms_since(t0));
  }
  std::vector<double> timed(step_ms.begin() + std::min<std::size_t>(2, step_ms.size() - 1), step_ms.end());
  std::sort(timed.begin(), timed.end());
  const double median_ms = timed[timed.size() / 2];
  return {{"n_layer", config.n_layer},
          {"n_embd", config.n_embd},
          {"n_head", config.n_head},
          {"vocab_size", config.vocab_size},
          {"batch_size", options.batch_size},
          {"seq_len", options.seq_len},
          {"threads", options.threads},
          {"steps", options.steps},
          {"step_ms_median", median_ms},
          {"tokens_per_s", 1000.0 * options.batch_size * options.seq_len / median_ms},
          {"losses", losses},
          {"peak_rss_mb", peak_rss_mb()}};
}
#endif

// a[i] = b[i] + s * c[i] over three arrays much larger than the caches; 12 bytes move per element
// (two floats read, one written). The best of 5 passes, as STREAM reports. The arrays are on huge
// pages where the model's weights are (arena.h), so that the roofline is the one the weights see.
json run_triad(int megabytes) {
  const std::size_t n = static_cast<std::size_t>(megabytes) * (1 << 20) / sizeof(float);
  glassbox::LargeBlock blocks[3] = {glassbox::LargeBlock(n * sizeof(float)), glassbox::LargeBlock(n * sizeof(float)),
                                    glassbox::LargeBlock(n * sizeof(float))};
  float* a = reinterpret_cast<float*>(blocks[0].data());
  float* b = reinterpret_cast<float*>(blocks[1].data());
  float* c = reinterpret_cast<float*>(blocks[2].data());
  std::fill(a, a + n, 0.0f);
  std::fill(b, b + n, 1.0f);
  std::fill(c, c + n, 2.0f);
  double best_ms = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    const float s = 0.5f + static_cast<float>(pass);
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    best_ms = std::min(best_ms, ms_since(t0));
  }
  volatile float sink = a[n / 2];   // keep the loop
  (void)sink;
  return {{"array_mb", megabytes}, {"gb_s", 12.0 * static_cast<double>(n) / best_ms / 1e6}};
}

// Activation patching on a made-up prompt pair: ids 11, 18, 25, ... (mod the vocabulary), and the
// same with position `at` changed; the answer and wrong ids 5 and 6. The time of the whole
// experiment (the two captured passes and every patched run), for resid_pre alone and for all four
// sites.
json run_patch(const std::string& dir, int tokens, int at) {
  const glassbox::Model model = glassbox::Model::load(dir);
  const int V = model.config().vocab_size;
  std::vector<std::int32_t> clean(tokens), corrupted;
  for (int i = 0; i < tokens; ++i) clean[i] = (11 + 7 * i) % V;
  corrupted = clean;
  corrupted[at] = (clean[at] + V / 2) % V;
  auto time = [&](std::vector<glassbox::PatchSite> sites) {
    glassbox::PatchOptions options;
    options.sites = std::move(sites);
    const auto t0 = Clock::now();
    glassbox::patch(model, clean, corrupted, 5, 6, options);
    return ms_since(t0);
  };
  json out{{"tokens", tokens}, {"at", at}};
  out["resid_pre_ms"] = time({glassbox::PatchSite::ResidPre});
  out["all_sites_ms"] = time({glassbox::PatchSite::ResidPre, glassbox::PatchSite::AttnOut, glassbox::PatchSite::MlpOut,
                              glassbox::PatchSite::Head});
  return out;
}

}   // namespace

int main(int argc, char** argv) {
  CLI::App app{"glassbox_perf: one timed run, for scripts/bench"};
  app.require_subcommand(1);
  std::string dir, ids_file, text_file, quantize = "none", arithmetic = "fused";
  int decode = 128, megabytes = 256, lens_k = 0;
  auto* model = app.add_subcommand("model", "load, prefill, greedy decode");
  model->add_option("dir", dir, "model directory")->required();
  model->add_option("--ids", ids_file, "JSON array of prompt token ids")->required();
  model->add_option("--decode", decode, "tokens to generate")->check(CLI::Range(1, 100000));
  model->add_option("--quantize", quantize, "none, int8 or int4");
  model->add_option("--arithmetic", arithmetic, "F32 products: fused or portable")->capture_default_str();
  model->add_option("--lens", lens_k, "also the logit lens, this many tokens per layer, in every pass")
      ->check(CLI::Range(1, 1 << 20));
  int threads = 1;
  model->add_option("--threads", threads, "threads for the forward pass (0: one per core)")->capture_default_str();
  bool warm_up = false;
  model->add_flag("--warm-up", warm_up, "first a 16-token prompt and 4 tokens, untimed (as a peer's warm-up)");
  int triad_after = 0;
  model
      ->add_option("--triad-after", triad_after,
                   "then the triad over arrays of this many MB, once the model is freed (0: no triad)")
      ->check(CLI::Range(0, 4096));
  auto* patching = app.add_subcommand("patch", "activation patching of a made-up prompt pair");
  int patch_tokens = 20, patch_at = -1, patch_threads = 1;
  patching->add_option("dir", dir, "model directory")->required();
  patching->add_option("--tokens", patch_tokens, "the prompts' length")
      ->check(CLI::Range(2, 1024))
      ->capture_default_str();
  patching->add_option("--at", patch_at, "the position where they differ (default: the middle)");
  patching->add_option("--threads", patch_threads, "threads (0: one per core)")->capture_default_str();
  auto* tokenizer = app.add_subcommand("tokenizer", "encode and decode a text");
  tokenizer->add_option("dir", dir, "model directory (vocab.json, merges.txt)")->required();
  tokenizer->add_option("text", text_file, "UTF-8 text file")->required();
  auto* triad = app.add_subcommand("triad", "memory bandwidth");
  triad->add_option("--mb", megabytes, "megabytes per array")->check(CLI::Range(16, 4096));
  auto* kernels = app.add_subcommand("kernels", "the decoding kernels alone, GPT-2 small's shapes");
  int keys = 192, reps = 15;
  kernels->add_option("--keys", keys, "cached positions attention reads")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  int prompt = 128;
  kernels->add_option("--prompt", prompt, "prompt rows of the prompt products")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  kernels->add_option("--reps", reps, "timings, of which the median")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
#ifdef GLASSBOX_PERF_TRAINING
  auto* train = app.add_subcommand("train", "training steps of a small GPT on random ids, one thread by default");
  int n_layer = 4, n_embd = 128, n_head = 4, vocab = 4096;
  glassbox::TrainingOptions training;
  training.batch_size = 16;
  training.seq_len = 128;
  training.steps = 12;
  training.threads = 1;
  train->add_option("--n-layer", n_layer)->capture_default_str();
  train->add_option("--n-embd", n_embd)->capture_default_str();
  train->add_option("--n-head", n_head)->capture_default_str();
  train->add_option("--vocab-size", vocab)->capture_default_str();
  train->add_option("--batch-size", training.batch_size)->capture_default_str();
  train->add_option("--seq-len", training.seq_len)->capture_default_str();
  train->add_option("--steps", training.steps)->check(CLI::Range(3, 100000))->capture_default_str();
  train->add_option("--threads", training.threads, "shards of the batch (run one after another in WebAssembly)")
      ->capture_default_str();
#endif
  CLI11_PARSE(app, argc, argv);
  try {
    json out;
    if (*model) {
      glassbox::set_num_threads(threads);
      glassbox::LoadOptions load{glassbox::parse_quantization(quantize)};
      load.arithmetic = glassbox::parse_arithmetic(arithmetic);
      out = run_model(dir, ids_file, decode, load, lens_k, warm_up);
      out["threads"] = glassbox::num_threads();
      // The memory bandwidth at the moment of this decode (a shared machine's speed drifts from one
      // minute to the next), for the decode's share of the roofline (bench/report.mjs).
      if (triad_after) out["triad_gb_s"] = run_triad(triad_after)["gb_s"];
    } else if (*patching) {
      if (patch_at < 0) patch_at = patch_tokens / 2;
      if (patch_at >= patch_tokens) throw std::invalid_argument("--at must be a position of the prompt");
      glassbox::set_num_threads(patch_threads);
      out = run_patch(dir, patch_tokens, patch_at);
      out["threads"] = glassbox::num_threads();
    } else if (*tokenizer)
      out = run_tokenizer(dir, text_file);
    else if (*kernels)
      out = run_kernels(keys, prompt, reps);
#ifdef GLASSBOX_PERF_TRAINING
    else if (*train) {
      const auto config = glassbox::ModelConfig::parse(json{{"model_type", "gpt2"},
                                                            {"vocab_size", vocab},
                                                            {"n_positions", training.seq_len},
                                                            {"n_embd", n_embd},
                                                            {"n_layer", n_layer},
                                                            {"n_head", n_head}}
                                                           .dump(),
                                                       "the model shape options");
      training.validate(config);
      out = run_training(config, training);
    }
#endif
    else
      out = run_triad(megabytes);
#ifdef __EMSCRIPTEN__
    out["build"] = "wasm";
#else
    out["build"] = "native";
#endif
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox_perf: %s\n", e.what());
    return 1;
  }
}
