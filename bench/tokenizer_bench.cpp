// glassbox benchmarks (Google Benchmark). A benchmark, never a test: run through scripts/bench,
// which prepares the inputs, runs the peers in the same session and prints the comparison.
//
//   glassbox_bench --tokenizer DIR --text FILE [Google Benchmark flags]
//
//   tokenizer/encode   text -> ids over the whole file, reported as MB/s of UTF-8 input
//   tokenizer/decode   ids -> text of the same, reported as MB/s of UTF-8 output
//   tokenizer/load     tokenizer.json, or vocab.json and merges.txt where DIR has no
//                      tokenizer.json (already read) -> a tokenizer, as Tokenizer::load chooses
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "glassbox/tokenizer.h"

namespace {

std::string g_tokenizer_dir, g_text_file;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "glassbox_bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct TokenizerInputs {
  glassbox::Tokenizer tokenizer = glassbox::Tokenizer::load(g_tokenizer_dir);
  std::string text = read_file(g_text_file);
  std::vector<std::int32_t> ids = tokenizer.encode(text);
};

const TokenizerInputs& inputs() {
  static const TokenizerInputs in;
  return in;
}

void BM_TokenizerEncode(benchmark::State& state) {
  const auto& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(in.tokenizer.encode(in.text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.text.size()));
  state.counters["tokens"] = static_cast<double>(in.ids.size());
}

void BM_TokenizerDecode(benchmark::State& state) {
  const auto& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(in.tokenizer.decode(in.ids));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.text.size()));
}

void BM_TokenizerLoad(benchmark::State& state) {
  if (std::ifstream(g_tokenizer_dir + "/tokenizer.json")) {
    const std::string json = read_file(g_tokenizer_dir + "/tokenizer.json");
    for (auto _ : state) benchmark::DoNotOptimize(glassbox::Tokenizer::from_tokenizer_json(json));
    return;
  }
  const std::string vocab = read_file(g_tokenizer_dir + "/vocab.json"),
                    merges = read_file(g_tokenizer_dir + "/merges.txt");
  for (auto _ : state) benchmark::DoNotOptimize(glassbox::Tokenizer::from_strings(vocab, merges));
}

BENCHMARK(BM_TokenizerLoad)->Name("tokenizer/load")->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_TokenizerEncode)->Name("tokenizer/encode")->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_TokenizerDecode)->Name("tokenizer/decode")->Unit(benchmark::kMillisecond)->MinTime(1.0);

}   // namespace

int main(int argc, char** argv) {
  // Our own flags first; the rest go to Google Benchmark.
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--tokenizer") && i + 1 < argc)
      g_tokenizer_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--text") && i + 1 < argc)
      g_text_file = argv[++i];
    else
      rest.push_back(argv[i]);
  }
  if (g_tokenizer_dir.empty() || g_text_file.empty()) {
    std::fprintf(stderr, "usage: glassbox_bench --tokenizer DIR --text FILE [benchmark flags]\n");
    return 2;
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::AddCustomContext("text_file", g_text_file);
  benchmark::AddCustomContext("text_bytes", std::to_string(inputs().text.size()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
