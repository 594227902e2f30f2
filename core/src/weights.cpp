#include "weights.h"

#include <bit>
#include <cstring>
#include <set>

#include "glassbox/error.h"

namespace glassbox {
namespace {

// IEEE half -> float, exact for every value including subnormals, infinities and NaN.
float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0 && mant == 0) {
    bits = sign;
  } else if (exp == 0) {   // subnormal: shift the mantissa up until it has its implicit 1
    exp = 127 - 15 + 1;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

// bfloat16 is the top half of a float.
float bf16_to_f32(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

float element(const TensorInfo& t, std::size_t i) {
  const std::byte* p = t.bytes.data();
  switch (t.dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case DType::F16:
    case DType::BF16: {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return t.dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
    default:
      return 0.0f;   // unreachable: Loader::take checks the dtype
  }
}

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

    auto& buf = out_.owned.emplace_back(static_cast<std::size_t>(t->numel));
    if (transpose) {   // (rows, cols) -> (cols, rows)
      const auto rows = static_cast<std::size_t>(shape[0]), cols = static_cast<std::size_t>(shape[1]);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) buf[c * rows + r] = element(*t, r * cols + c);
    } else {
      for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = element(*t, i);
    }
    return buf.data();
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
