// ModelLoader: a model loaded from its file's bytes in pieces, as a download or a file read in
// chunks gives them, is the model loaded from the whole file (Model::from_parts) bit for bit, on
// every fixture, with F32 and int8 matrices and any split of the bytes; a file that ends early,
// runs long or disagrees with its header is a clear error that leaves nothing loaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/model_loader.h"
#include "io/dtype.h"
#include "io/sha256.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::bytes_of;

std::string header_of(const std::string& file) { return file.substr(0, ModelLoader::header_size(bytes_of(file))); }

// Every position's logits for a context-long run over ids that visit the vocabulary: every row of
// the position table and every row of the LM head takes part.
std::vector<float> all_logits(const Model& m) {
  const ModelConfig& c = m.config();
  std::vector<std::int32_t> ids;
  for (int i = 0; i < std::min(c.n_positions, 64); ++i)
    ids.push_back(static_cast<std::int32_t>((i * 7919) % c.vocab_size));
  KVCache cache = m.new_cache();
  return m.forward(ids, cache, {.all_logits = true, .causal = !c.bidirectional});
}

// The file fed through window()/commit() in pieces of `piece(i)` bytes.
template <class Piece>
Model load_in_pieces(const std::string& config, const std::string& file, Quantization q, Piece piece) {
  ModelLoader loader(config, bytes_of(header_of(file)), {q});
  EXPECT_EQ(loader.size(), file.size());
  std::size_t at = 0;
  for (int i = 0; at < file.size(); ++i) {
    const std::span<std::byte> w = loader.window();
    const std::size_t n = std::min({w.size(), file.size() - at, piece(i)});
    std::memcpy(w.data(), file.data() + at, n);
    loader.commit(n);
    at += n;
    EXPECT_EQ(loader.received(), at);
  }
  EXPECT_TRUE(loader.window().empty());
  return loader.finish();
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

class ModelLoaderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelLoaderTest, AnySplitOfTheBytesGivesTheWholeFilesModel) {
  const auto dir = test::fixture_dir(GetParam());
  const std::string config = test::read_file(dir / "config.json");
  const std::string file = test::read_file(dir / "model.safetensors");
  for (const Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    const std::vector<float> want = all_logits(Model::load(dir, {q}));
    std::mt19937 rng(7);
    const std::vector<std::pair<std::string, std::function<std::size_t(int)>>> splits = {
        {"whole", [](int) { return SIZE_MAX; }},
        {"1 byte", [](int) { return std::size_t(1); }},
        {"3 bytes", [](int) { return std::size_t(3); }},
        {"4 KiB", [](int) { return std::size_t(4096); }},
        {"random", [&](int) { return std::size_t(1 + rng() % 10000); }},
    };
    for (const auto& [name, piece] : splits) {
      const std::string what = std::string(quantization_name(q)) + ", pieces: " + name;
      expect_same_bits(all_logits(load_in_pieces(config, file, q, piece)), want, what);
    }
    // write(): the same, with the copying done by the loader.
    ModelLoader loader(config, bytes_of(file.substr(0, 100'000)), {q});   // more than the header: ignored
    loader.write(bytes_of(file));
    expect_same_bits(all_logits(loader.finish()), want, "write()");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelLoaderTest, ::testing::ValuesIn(test::single_file_fixtures()),
                         test::fixture_test_name);

// Shapes the fixtures do not have: a vocabulary and widths that are not multiples of the kernels'
// row groups (8) and int8 blocks (32), and three heads, in F32 and F16, the tensors in a shuffled
// order in the file. Model::from_parts reads them in place or converts them whole.
TEST(ModelLoader, OddShapesInAnyOrder) {
  const std::int64_t V = 97, C = 36, P = 11, F = 83;
  const std::string config = R"({"model_type": "gpt2", "vocab_size": 97, "n_positions": 11, "n_embd": 36,
                                 "n_layer": 2, "n_head": 3, "n_inner": 83})";
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 0.2f);
  for (const char* dtype : {"F32", "F16"}) {
    std::vector<test::RawTensor> tensors;
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
      std::int64_t n = 1;
      for (auto d : shape) n *= d;
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& x : v) x = normal(rng);
      test::RawTensor t = test::f32_tensor(name, shape, v);
      if (std::string(dtype) == "F16") {
        std::string half;
        for (float x : v) {
          const std::uint16_t h = f32_to_f16(x);
          half.append(reinterpret_cast<const char*>(&h), 2);
        }
        t.dtype = "F16";
        t.bytes = half;
      }
      tensors.push_back(t);
    };
    add("wte.weight", {V, C});
    add("wpe.weight", {P, C});
    for (int l = 0; l < 2; ++l) {
      const std::string h = "h." + std::to_string(l) + ".";
      add(h + "ln_1.weight", {C});
      add(h + "ln_1.bias", {C});
      add(h + "attn.c_attn.weight", {C, 3 * C});
      add(h + "attn.c_attn.bias", {3 * C});
      add(h + "attn.c_proj.weight", {C, C});
      add(h + "attn.c_proj.bias", {C});
      add(h + "ln_2.weight", {C});
      add(h + "ln_2.bias", {C});
      add(h + "mlp.c_fc.weight", {C, F});
      add(h + "mlp.c_fc.bias", {F});
      add(h + "mlp.c_proj.weight", {F, C});
      add(h + "mlp.c_proj.bias", {C});
    }
    add("ln_f.weight", {C});
    add("ln_f.bias", {C});
    std::shuffle(tensors.begin(), tensors.end(), rng);
    const std::string file = test::make_safetensors(tensors);
    for (const Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
      const std::vector<float> kept = all_logits(
          Model::from_parts(config, SafeTensors::parse(bytes_of(file), "model.safetensors"), "config.json", {q}));
      for (std::size_t piece : {std::size_t(1), std::size_t(5), std::size_t(1) << 20}) {
        const std::string what =
            std::string(dtype) + ", " + quantization_name(q) + ", pieces of " + std::to_string(piece);
        expect_same_bits(all_logits(load_in_pieces(config, file, q, [&](int) { return piece; })), kept, what);
      }
    }
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelLoader, AFileThatEndsEarlyRunsLongOrChangesIsAnErrorAndNothingIsKept) {
  const auto dir = test::fixture_dir("gpt2-f32");
  const std::string config = test::read_file(dir / "config.json");
  const std::string file = test::read_file(dir / "model.safetensors");
  const std::string header = header_of(file);
  // Cut anywhere (inside the header, at a tensor's boundary, inside a tensor): finish() says where.
  for (std::size_t cut :
       {std::size_t(0), std::size_t(20), header.size(), header.size() + 1, file.size() / 2, file.size() - 1}) {
    ModelLoader loader(config, bytes_of(header));
    loader.write(bytes_of(file).first(cut));
    const std::string e = error_of([&] { loader.finish(); });
    EXPECT_NE(e.find("model.safetensors: the file ends after " + std::to_string(cut) + " of its " +
                     std::to_string(file.size()) + " bytes"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("(file truncated?)"), std::string::npos) << e;
    EXPECT_NE(error_of([&] { loader.window(); }).find("failed earlier"), std::string::npos);
  }
  {   // one byte more than the header promises
    ModelLoader loader(config, bytes_of(header));
    const std::string e = error_of([&] { loader.write(bytes_of(file + "x")); });
    EXPECT_NE(e.find("1 bytes after the last tensor belong to no tensor"), std::string::npos) << e;
    EXPECT_NE(error_of([&] { loader.finish(); }).find("failed earlier"), std::string::npos);
  }
  {   // the header read first, and the one in the bytes, differ
    std::string changed = file;
    changed[header.size() - 2] = changed[header.size() - 2] == ' ' ? '\t' : ' ';
    ModelLoader loader(config, bytes_of(header));
    const std::string e = error_of([&] { loader.write(bytes_of(changed)); });
    EXPECT_NE(e.find("its header changed while the file was being read"), std::string::npos) << e;
  }
  {   // a commit larger than its window
    ModelLoader loader(config, bytes_of(header));
    const std::size_t n = loader.window().size();
    EXPECT_THROW(loader.commit(n + 1), InvalidArgument);
  }
  // A header that does not fit the config fails before any data: the constructor throws.
  const std::string other =
      R"({"model_type": "gpt2", "vocab_size": 300, "n_positions": 32, "n_embd": 64, "n_layer": 2, "n_head": 2})";
  EXPECT_THROW(ModelLoader(other, bytes_of(header)), ModelFormatError);
  EXPECT_THROW(ModelLoader(config, bytes_of(header.substr(0, header.size() - 1))), ModelFormatError);
  // Destroyed halfway: nothing leaks (the sanitizer build checks).
  {
    ModelLoader loader(config, bytes_of(header));
    loader.write(bytes_of(file).first(file.size() / 2));
  }
  // Finished once: the model is handed over, and the loader is done.
  ModelLoader loader(config, bytes_of(header));
  loader.write(bytes_of(file));
  const Model model = loader.finish();
  EXPECT_NE(error_of([&] { loader.finish(); }).find("already handed its model over"), std::string::npos);
}

// FIPS 180-4's examples, and any split of the input giving the same digest.
TEST(Sha256, KnownDigestsInAnyPieces) {
  auto digest = [](const std::string& s, std::size_t piece) {
    Sha256 h;
    for (std::size_t i = 0; i < s.size(); i += piece) h.update(bytes_of(s.substr(i, piece)));
    return h.hex();
  };
  for (std::size_t piece : {std::size_t(1), std::size_t(7), std::size_t(64), std::size_t(1) << 20}) {
    EXPECT_EQ(digest("", piece), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(digest("abc", piece), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", piece),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(digest(std::string(1'000'000, 'a'), std::max<std::size_t>(piece, 1000)),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}

TEST(ModelLoader, HashesTheBytesItLoads) {
  const auto dir = test::fixture_dir("gpt2-f16");
  const std::string config = test::read_file(dir / "config.json");
  const std::string file = test::read_file(dir / "model.safetensors");
  ModelLoader loader(config, bytes_of(header_of(file)), {}, /*sha256=*/true);
  loader.write(bytes_of(file));
  Sha256 whole;
  whole.update(bytes_of(file));
  EXPECT_EQ(loader.sha256_hex(), whole.hex());
  EXPECT_THROW(ModelLoader(config, bytes_of(header_of(file))).sha256_hex(), Error);
}

}   // namespace
}   // namespace glassbox
