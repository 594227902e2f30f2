#include "weights.h"

#include <set>

#include "dtype.h"
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
  const float* take(const std::string& name, std::vector<std::int64_t> shape, bool transpose = false) {
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
    // F32 in its final layout and suitably aligned: use the mapped bytes in place, no copy.
    if (t->dtype == DType::F32 && !transpose &&
        reinterpret_cast<std::uintptr_t>(t->bytes.data()) % alignof(float) == 0)
      return reinterpret_cast<const float*>(t->bytes.data());

    float* buf = out_.owned.emplace_back(new float[static_cast<std::size_t>(t->numel)]).get();
    if (transpose)   // Conv1D (in, out) -> nn.Linear (out, in)
      to_f32_transposed(*t, shape[0], shape[1], buf);
    else
      to_f32(*t, buf);
    return buf;
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
  const SafeTensors& file_;
  ModelWeights& out_;
  std::string prefix_;
  std::set<std::string> used_;
};

}  // namespace

ModelWeights load_weights(const ModelConfig& c, const SafeTensors& file) {
  ModelWeights w;
  w.file = file;
  Loader load(w.file, w);
  const std::int64_t C = c.n_embd, F = c.n_inner, V = c.vocab_size, P = c.n_positions;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  w.wte = load.take(gpt2 ? "wte.weight" : "tokens_embed.weight", {V, C});
  w.wpe = load.take(gpt2 ? "wpe.weight" : "positions_embed.weight", {P, C});
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    LayerWeights L;
    L.ln_1_w = load.take(h + "ln_1.weight", {C});
    L.ln_1_b = load.take(h + "ln_1.bias", {C});
    L.qkv_w = load.take(h + "attn.c_attn.weight", {C, 3 * C}, /*transpose=*/true);
    L.qkv_b = load.take(h + "attn.c_attn.bias", {3 * C});
    L.proj_w = load.take(h + "attn.c_proj.weight", {C, C}, true);
    L.proj_b = load.take(h + "attn.c_proj.bias", {C});
    L.ln_2_w = load.take(h + "ln_2.weight", {C});
    L.ln_2_b = load.take(h + "ln_2.bias", {C});
    L.fc_w = load.take(h + "mlp.c_fc.weight", {C, F}, true);
    L.fc_b = load.take(h + "mlp.c_fc.bias", {F});
    L.fc_proj_w = load.take(h + "mlp.c_proj.weight", {F, C}, true);
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
