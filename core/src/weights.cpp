#include "weights.h"

#include <set>

#include "dtype.h"
#include "quantized.h"
#include "glassbox/error.h"

namespace glassbox {
namespace {

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class Loader {
 public:
  Loader(const SafeTensors& file, ModelWeights& out) : file_(file), out_(out) {
    // Hub checkpoints saved from *LMHeadModel carry a "transformer." prefix; base models do not.
    const bool prefixed = file.find("transformer.wte.weight") || file.find("transformer.tokens_embed.weight");
    prefix_ = prefixed ? "transformer." : "";
  }

  // The tensor `name` as F32 with the given shape; transposed (rows <-> cols) for Conv1D weights.
  const float* take(const std::string& name, const std::vector<std::int64_t>& shape, bool transpose = false) {
    std::unique_ptr<float[]> copy;
    const float* f32 = read(name, shape, transpose, copy);
    if (copy) out_.owned.push_back(std::move(copy));
    return f32;
  }

  // The matrix `name`, (N,K) once in nn.Linear layout; as int8 blocks if asked, in which case the
  // F32 copy read() may have made (transposed or converted) is dropped as soon as the blocks exist.
  Matrix matrix(const std::string& name, std::int64_t N, std::int64_t K, bool transpose, Quantization quantize) {
    if (quantize == Quantization::None) return f32_matrix(take(name, transpose ? std::vector{K, N} : std::vector{N, K}, transpose), N, K);
    std::unique_ptr<float[]> copy;
    const float* f32 = read(name, transpose ? std::vector{K, N} : std::vector{N, K}, transpose, copy);
    return quantized_matrix(f32, N, K);
  }

  static Matrix f32_matrix(const float* f32, std::int64_t N, std::int64_t K) {
    return Matrix{f32, nullptr, nullptr, static_cast<int>(N), static_cast<int>(K)};
  }

  Matrix quantized_matrix(const float* f32, std::int64_t N, std::int64_t K) {
    const kernels::Q8Shape s(static_cast<int>(N), static_cast<int>(K));
    std::int8_t* q = out_.owned_q.emplace_back(new std::int8_t[s.q_size()]).get();
    float* d = out_.owned.emplace_back(new float[s.d_size()]).get();
    kernels::quantize_weights_q8(q, d, f32, s.N, s.K);
    return Matrix{nullptr, q, d, s.N, s.K};
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

 private:
  // Finds and checks the tensor, and returns its values as F32: the mapped bytes in place when
  // they already are (F32, this layout, aligned), else a converted copy, handed over in `copy`.
  const float* read(const std::string& name, const std::vector<std::int64_t>& shape, bool transpose,
                    std::unique_ptr<float[]>& copy) {
    const TensorInfo* t = file_.find(prefix_ + name);
    if (!t) throw ModelFormatError(file_.source(), "missing tensor '" + prefix_ + name + "'");
    used_.insert(t->name);
    if (t->shape != shape)
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has shape " + shape_str(t->shape) +
                                                 ", the config implies " + shape_str(shape));
    if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
      throw ModelFormatError(file_.source(), "tensor '" + t->name + "' has dtype " +
                                                 std::string(dtype_name(t->dtype)) +
                                                 "; weights must be F32, F16 or BF16");
    if (t->dtype == DType::F32 && !transpose &&
        reinterpret_cast<std::uintptr_t>(t->bytes.data()) % alignof(float) == 0)
      return reinterpret_cast<const float*>(t->bytes.data());
    copy.reset(new float[static_cast<std::size_t>(t->numel)]);
    if (transpose)   // Conv1D (in, out) -> nn.Linear (out, in)
      to_f32_transposed(*t, shape[0], shape[1], copy.get());
    else
      to_f32(*t, copy.get());
    return copy.get();
  }

  const SafeTensors& file_;
  ModelWeights& out_;
  std::string prefix_;
  std::set<std::string> used_;
};

}  // namespace

ModelWeights load_weights(const ModelConfig& c, const SafeTensors& file, Quantization quantize) {
  ModelWeights w;
  w.file = file;
  Loader load(w.file, w);
  const std::int64_t C = c.n_embd, F = c.n_inner, V = c.vocab_size, P = c.n_positions;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  w.wte = load.take(gpt2 ? "wte.weight" : "tokens_embed.weight", {V, C});
  // The LM head is the embedding, tied; quantized it is a second copy (the embedding stays F32).
  w.lm_head = quantize == Quantization::None ? Loader::f32_matrix(w.wte, V, C) : load.quantized_matrix(w.wte, V, C);
  w.wpe = load.take(gpt2 ? "wpe.weight" : "positions_embed.weight", {P, C});
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
    w.layers.push_back(L);
  }
  if (gpt2) {
    w.ln_f_w = load.take("ln_f.weight", {C});
    w.ln_f_b = load.take("ln_f.bias", {C});
  }
  load.check_all_used(c);
  return w;
}

}  // namespace glassbox
