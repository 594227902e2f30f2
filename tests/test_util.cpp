#include <cstdio>
#include <algorithm>
#include "test_util.h"

#include <cstring>
#include <fstream>
#include <malloc.h>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

#include "glassbox/safetensors.h"

#if defined(__SANITIZE_ADDRESS__)
// From AddressSanitizer's runtime (sanitizer/allocator_interface.h, which GCC 12 does not ship).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace glassbox::test {

std::size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#elif defined(__EMSCRIPTEN__)
  return mallinfo().uordblks;
#else
  const auto m = mallinfo2();
  return m.uordblks + m.hblkhd;   // large blocks are mapped on their own
#endif
}

std::filesystem::path fixture_dir(const std::string& name) {
  return std::filesystem::path(GLASSBOX_FIXTURES_DIR) / name;
}

std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

const std::vector<std::string>& gpt2_fixtures() {
  static const std::vector<std::string> names = {
      "gpt2-f32",         "gpt2-f16",          "gpt2-bf16",       "gpt2-prefixed",
      "gpt2-single-head", "gpt2-full-context", "openai-gpt",      "openai-gpt-relu-f16",
      "gpt2-bytes",       "gpt2-attn-scaling", "gpt2-sinusoidal", "gpt2-cross-attention",
      "gpt2-classifier"};
  return names;
}

const std::vector<std::string>& model_fixtures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = gpt2_fixtures();
    for (const char* name :
         {"llama-gqa", "llama-mqa-bias-v5", "llama-llama3-bf16", "llama-llama3-v5", "llama-linear-sharded",
          "mistral-sliding", "qwen2-bf16", "qwen2-sliding-v5", "qwen3-qk-norm", "qwen3-sliding-bias-v5",
          "gpt-neox-parallel", "gpt-neox-sequential-f16-v5", "gpt-neo-local"})
      all.push_back(name);
    return all;
  }();
  return names;
}

const std::vector<std::string>& single_file_fixtures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> some;
    for (const std::string& name : model_fixtures())
      if (std::filesystem::exists(fixture_dir(name) / "model.safetensors")) some.push_back(name);
    return some;
  }();
  return names;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(read_file(path)); }

std::vector<RawTensor> read_tensors(const std::filesystem::path& file) {
  auto st = SafeTensors::open(file);
  std::vector<RawTensor> out;
  for (const auto& t : st.tensors())
    out.push_back({t.name, std::string(dtype_name(t.dtype)), t.shape,
                   std::string(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size())});
  return out;
}

std::string make_safetensors_raw(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string make_safetensors(const std::vector<RawTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& t : tensors) {
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8) text += ' ';
  return make_safetensors_raw(text, data);
}

RawTensor f32_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values) {
  return {name, "F32", std::move(shape), std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4)};
}

TensorShapes one_layer_gpt2_shapes(std::int64_t V, std::int64_t C, std::int64_t P) {
  return {{"wte.weight", {V, C}},
          {"wpe.weight", {P, C}},
          {"h.0.ln_1.weight", {C}},
          {"h.0.ln_1.bias", {C}},
          {"h.0.attn.c_attn.weight", {C, 3 * C}},
          {"h.0.attn.c_attn.bias", {3 * C}},
          {"h.0.attn.c_proj.weight", {C, C}},
          {"h.0.attn.c_proj.bias", {C}},
          {"h.0.ln_2.weight", {C}},
          {"h.0.ln_2.bias", {C}},
          {"h.0.mlp.c_fc.weight", {C, 4 * C}},
          {"h.0.mlp.c_fc.bias", {4 * C}},
          {"h.0.mlp.c_proj.weight", {4 * C, C}},
          {"h.0.mlp.c_proj.bias", {C}},
          {"ln_f.weight", {C}},
          {"ln_f.bias", {C}}};
}

std::string f16_header(const TensorShapes& tensors, std::uint64_t* data_bytes) {
  nlohmann::json j = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    std::uint64_t n = 2;
    for (auto d : shape) n *= std::uint64_t(d);
    j[name] = {{"dtype", "F16"}, {"shape", shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = j.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  std::string header(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(header.data(), &n, 8);
  if (data_bytes) *data_bytes = offset;
  return header + text;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() / ("glassbox-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void copy_fixture(const std::string& name, const std::filesystem::path& dir) {
  for (const char* f : {"config.json", "model.safetensors"})
    std::filesystem::copy_file(fixture_dir(name) / f, dir / f, std::filesystem::copy_options::overwrite_existing);
}

std::string shard_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map) {
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [name, file] : weight_map) map[name] = file;
  return nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(2);
}

std::vector<std::string> write_sharded_fixture(const std::string& name, const std::filesystem::path& dir, int shards) {
  std::filesystem::copy_file(fixture_dir(name) / "config.json", dir / "config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const std::vector<RawTensor> tensors = read_tensors(fixture_dir(name) / "model.safetensors");
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> weight_map;
  const std::size_t per = (tensors.size() + shards - 1) / shards;
  for (int i = 0; i < shards; ++i) {
    char file[64];
    std::snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", i + 1, shards);
    const auto first = tensors.begin() + std::min(tensors.size(), i * per);
    const std::vector<RawTensor> part(first, tensors.begin() + std::min(tensors.size(), (i + 1) * per));
    for (const RawTensor& t : part) weight_map.emplace_back(t.name, file);
    write_file(dir / file, make_safetensors(part));
    names.push_back(file);
  }
  write_file(dir / "model.safetensors.index.json", shard_index_json(weight_map));
  return names;
}

namespace {
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}   // namespace

CommandResult run_cli(const std::vector<std::string>& args, const std::string& stdin_text) {
  TempDir tmp;
  write_file(tmp.path() / "in", stdin_text);
  std::string cmd = shell_quote(GLASSBOX_CLI_PATH);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " <" + shell_quote((tmp.path() / "in").string()) + " 2>" + shell_quote((tmp.path() / "err").string());
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  std::string out;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, read_file(tmp.path() / "err")};
}

}   // namespace glassbox::test
