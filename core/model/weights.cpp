#include "model/weights.h"

#include <set>

#include "io/dtype.h"
#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "glassbox/error.h"

namespace glassbox {
namespace {

// Each array the loader allocates is aligned to 64 bytes (model/arena.h): at most that much more
// than its size.
constexpr std::uint64_t kAllocationSlack = 64;

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Finds and checks every tensor, and either converts it into `out` or, given a footprint, only
// counts what converting would allocate (the file may then be a header alone: parse_header).
class Loader {
 public:
  Loader(const SafeTensors& file, ModelWeights& out, LoadFootprint* count = nullptr)
      : file_(file), out_(out), count_(count) {
    // Hub checkpoints saved from *LMHeadModel carry a "transformer." prefix; base models do not.
    const bool prefixed = file.find("transformer.wte.weight") || file.find("transformer.tokens_embed.weight");
    prefix_ = prefixed ? "transformer." : "";
  }

  // The tensor `name` as F32 with the given shape: the file's bytes in place when they already
  // are F32 (and aligned), else a converted copy.
  // top_level: a tensor of the task head beside the transformer ("score.weight"), which has no
  // prefix even when the transformer's tensors have one.
  const float* take(const std::string& name, const std::vector<std::int64_t>& shape, bool top_level = false) {
    const TensorInfo& t = find(name, shape, top_level);
    if (usable_in_place(t)) return reinterpret_cast<const float*>(t.bytes.data());
    float* copy = own<float>(t.numel);
    if (count_) return nullptr;
    to_f32(t, copy);
    file_.drop_pages(t);
    return copy;
  }

  // The matrix `name` as (N,K) in nn.Linear layout (GPT's Conv1D weights, stored (K,N), are
  // transposed), packed for the kernels or quantized to int8 blocks, read straight from the file
  // when it holds aligned F32; F16/BF16, and Conv1D weights to quantize, go through one F32 copy
  // in (N,K) rows, freed once the final form exists. The file's pages of the tensor are then
  // dropped from memory (SafeTensors::drop_pages): the model keeps only its own copies.
  Matrix matrix(const std::string& name, std::int64_t N, std::int64_t K, bool transpose, Quantization quantize) {
    const TensorInfo& t = find(name, transpose ? std::vector{K, N} : std::vector{N, K});
    const int n = static_cast<int>(N), k = static_cast<int>(K);
    const bool in_place = usable_in_place(t);
    const bool straight = quantize == Quantization::None && in_place && transpose;   // packed from (K,N)
    const bool rows_first = !straight && (!in_place || transpose);                    // via (N,K) F32 rows
    float* packed = nullptr;
    std::int8_t* q = nullptr;
    float* d = nullptr;
    const kernels::Q8Shape s(n, k);
    if (quantize == Quantization::None) {
      packed = own<float>(N * K);
    } else {
      q = own<std::int8_t>(static_cast<std::int64_t>(s.q_size()));
      d = own<float>(static_cast<std::int64_t>(s.d_size()));
    }
    if (count_) {   // counting: the F32 copy on the way is the only other allocation
      if (rows_first) count_->transient = std::max(count_->transient, 4 * std::uint64_t(t.numel));
      return {nullptr, nullptr, nullptr, n, k};
    }
    const float* f32 = in_place ? reinterpret_cast<const float*>(t.bytes.data()) : nullptr;
    std::unique_ptr<float[]> copy;
    if (rows_first) {
      copy.reset(new float[static_cast<std::size_t>(t.numel)]);
      transpose ? to_f32_transposed(t, K, N, copy.get()) : to_f32(t, copy.get());
      f32 = copy.get();
    }
    if (straight) kernels::pack_matrix_transposed(packed, f32, n, k);
    else if (packed) kernels::pack_matrix(packed, f32, n, k);
    else kernels::quantize_weights_q8(q, d, f32, n, k);
    const Matrix m{packed, q, d, n, k};
    file_.drop_pages(t);
    return m;
  }

  // Every tensor in the file must have been used, except buffers Hugging Face stores alongside.
  void check_all_used(const ModelConfig& c) const {
    for (const auto& t : file_.tensors()) {
      if (used_.count(t.name)) continue;
      const std::string& n = t.name;
      auto ends_with = [&](std::string_view s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
      if (ends_with(".attn.bias") || ends_with(".attn.masked_bias")) continue;   // causal mask buffers
      if (n == "lm_head.weight" && t.shape == std::vector<std::int64_t>{c.vocab_size, c.n_embd}) continue;  // tied
      throw ModelFormatError(file_.source(), "unexpected tensor '" + n + "' " + shape_str(t.shape) +
                                                 " (does the config match the weights? it has n_layer " +
                                                 std::to_string(c.n_layer) + ")");
    }
  }

  bool has(const std::string& name) const { return file_.find(prefix_ + name) != nullptr; }

  // The sinusoidal position table (P, C), computed (counting: nothing to compute).
  const float* sinusoidal_table(std::int64_t P, std::int64_t C) {
    float* table = own<float>(P * C);
    if (!count_) sinusoidal_positions(table, static_cast<int>(P), static_cast<int>(C));
    return table;
  }

  // n values of T the model owns (uninitialised: ModelWeights::owned); counting, none (null).
  template <class T>
  T* own(std::int64_t n) {
    if (count_) {
      count_->owned += sizeof(T) * std::uint64_t(n) + kAllocationSlack;
      return nullptr;
    }
    return out_.owned.allocate<T>(static_cast<std::size_t>(n));
  }

 private:

  // The tensor `name`, checked: present, with this shape and a float dtype. Marks it used.
  const TensorInfo& find(const std::string& name, const std::vector<std::int64_t>& shape, bool top_level = false) {
    const std::string full = (top_level ? "" : prefix_) + name;
    const TensorInfo* t = file_.find(full);
    if (!t) throw ModelFormatError(file_.source(), "missing tensor '" + full + "'");
    if (!count_ && t->numel > 0 && t->bytes.empty())
      throw ModelFormatError(file_.source(), "tensor '" + full + "' has no data here (only the header was read)");
    used_.insert(t->name);
    if (t->shape != shape)
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has shape " + shape_str(t->shape) +
                                                 ", the config implies " + shape_str(shape));
    if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has dtype " +
                                                 std::string(dtype_name(t->dtype)) +
                                                 "; weights must be F32, F16 or BF16");
    return *t;
  }

  // Whether the tensor's bytes can be read as floats where they are: F32 and aligned for them.
  // Given only the header, the file is taken to start at an address aligned for floats (as
  // malloc's and a mapping's are).
  bool usable_in_place(const TensorInfo& t) const {
    if (t.dtype != DType::F32) return false;
    const std::uint64_t address = t.bytes.empty() ? file_.data_start() + t.offset
                                                  : reinterpret_cast<std::uintptr_t>(t.bytes.data());
    return address % alignof(float) == 0;
  }

  const SafeTensors& file_;
  ModelWeights& out_;
  LoadFootprint* count_;
  std::string prefix_;
  std::set<std::string> used_;
};

// Every parameter of the model, through `load`, into its place in `w`.
void load_all(const ModelConfig& c, Loader& load, Quantization quantize, ModelWeights& w) {
  const std::int64_t C = c.n_embd, F = c.n_inner, V = c.vocab_size, P = c.n_positions;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  // The LM head is the embedding, tied, in a second copy: packed or int8 for the products, while
  // the embedding stays in rows for looking tokens up (natively the file's pages, read back on
  // demand: a token's row is one or two pages).
  const std::string wte = gpt2 ? "wte.weight" : "tokens_embed.weight";
  w.lm_head = load.matrix(wte, V, C, /*transpose=*/false, quantize);
  w.wte = load.take(wte, {V, C});
  if (c.position_encoding == PositionEncoding::Sinusoidal) {
    // Computed. The project's own models also store the table (for other GPT-2 loaders): its
    // shape is checked, its values are not used.
    const std::string stored = gpt2 ? "wpe.weight" : "positions_embed.weight";
    if (load.has(stored)) load.take(stored, {P, C});
    w.wpe = load.sinusoidal_table(P, C);
  } else {
    w.wpe = load.take(gpt2 ? "wpe.weight" : "positions_embed.weight", {P, C});
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    LayerWeights L;
    L.ln_1_w = load.take(h + "ln_1.weight", {C});
    L.ln_1_b = load.take(h + "ln_1.bias", {C});
    L.qkv_w = load.matrix(h + "attn.c_attn.weight", 3 * C, C, /*transpose=*/true, quantize);
    L.qkv_b = load.take(h + "attn.c_attn.bias", {3 * C});
    L.proj_w = load.matrix(h + "attn.c_proj.weight", C, C, true, quantize);
    L.proj_b = load.take(h + "attn.c_proj.bias", {C});
    L.ln_2_w = load.take(h + "ln_2.weight", {C});
    L.ln_2_b = load.take(h + "ln_2.bias", {C});
    L.fc_w = load.matrix(h + "mlp.c_fc.weight", F, C, true, quantize);
    L.fc_b = load.take(h + "mlp.c_fc.bias", {F});
    L.fc_proj_w = load.matrix(h + "mlp.c_proj.weight", C, F, true, quantize);
    L.fc_proj_b = load.take(h + "mlp.c_proj.bias", {C});
    if (c.add_cross_attention) {
      L.ln_cross_w = load.take(h + "ln_cross_attn.weight", {C});
      L.ln_cross_b = load.take(h + "ln_cross_attn.bias", {C});
      L.cross_q_w = load.matrix(h + "crossattention.q_attn.weight", C, C, true, quantize);
      L.cross_q_b = load.take(h + "crossattention.q_attn.bias", {C});
      L.cross_kv_w = load.matrix(h + "crossattention.c_attn.weight", 2 * C, C, true, quantize);
      L.cross_kv_b = load.take(h + "crossattention.c_attn.bias", {2 * C});
      L.cross_proj_w = load.matrix(h + "crossattention.c_proj.weight", C, C, true, quantize);
      L.cross_proj_b = load.take(h + "crossattention.c_proj.bias", {C});
    }
    w.layers.push_back(L);
  }
  if (gpt2) {
    w.ln_f_w = load.take("ln_f.weight", {C});
    w.ln_f_b = load.take("ln_f.bias", {C});
  }
  if (!c.labels.empty()) w.score = load.take("score.weight", {std::int64_t(c.labels.size()), C}, /*top_level=*/true);
  load.check_all_used(c);
}

}  // namespace

ModelWeights load_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize) {
  ModelWeights w;
  w.file = file;
  Loader load(w.file, w);
  load_all(config, load, quantize, w);
  return w;
}

LoadFootprint load_footprint(const ModelConfig& config, const SafeTensors& file, Quantization quantize) {
  LoadFootprint footprint;
  ModelWeights unused;
  Loader count(file, unused, &footprint);
  load_all(config, count, quantize, unused);
  return footprint;
}

}  // namespace glassbox
