// Direct logit attribution (glassbox/experiments.h): the final residual stream at the last
// position as a sum of parts, each part's share of the metric.
//
//   x = wte[token] + wpe[position] + sum_l (attn_out_l + mlp_out_l)
//   attn_out_l = sum_h W_O,h z_h + b_O,   z_h = sum_s p_s v_s,   v_s = W_V,h x_s + b_V,h
// Attention probabilities sum to 1, so each z_h carries b_V,h whole: W_O,h b_V,h is a bias (as
// TransformerLens folds it into b_O), and a head's part is W_O,h (z_h - b_V,h).
// The final norm is linear in x once its scale is fixed from the whole stream, so each part's
// share is  (part - [LayerNorm] mean(part)) / scale . (gamma * u)  and the norm's beta adds beta . u.
#include <cmath>
#include <string>

#include "experiments/experiment_pass.h"
#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "model/model_internals.h"

namespace glassbox {

namespace {

// Head h's value bias (head_dim floats), or null: where the checkpoint's layout puts it.
const float* value_bias(const ModelConfig& c, const LayerWeights& L, int h) {
  const int hd = c.head_dim(), Dq = c.n_head * hd, Dkv = c.kv_heads() * hd, g = h / (c.n_head / c.kv_heads());
  switch (qkv_layout(c)) {
    case QkvLayout::Separate:
      return L.v_b ? L.v_b + std::size_t(g) * hd : nullptr;
    case QkvLayout::Fused:   // [q | k | v]
      return L.qkv_b ? L.qkv_b + Dq + Dkv + std::size_t(g) * hd : nullptr;
    case QkvLayout::FusedPerHead:   // [q_h k_h v_h] head after head
      return L.qkv_b ? L.qkv_b + std::size_t(h) * 3 * hd + 2 * hd : nullptr;
  }
  return nullptr;
}

// The final norm's map of a part, with the scale of the whole stream x: the share of the metric.
class NormMap {
 public:
  NormMap(const ModelConfig& c, const ModelWeights& w, const float* x, const std::vector<float>& u)
      : layer_norm_(c.norm == Norm::LayerNorm), gu_(u.size()) {
    const std::size_t C = u.size();
    double mean = 0, square = 0;
    for (std::size_t i = 0; i < C; ++i) mean += x[i];
    mean /= double(C);
    for (std::size_t i = 0; i < C; ++i) {
      const double d = layer_norm_ ? x[i] - mean : x[i];
      square += d * d;
    }
    scale_ = std::sqrt(square / double(C) + c.layer_norm_epsilon);   // sigma, or rms
    for (std::size_t i = 0; i < C; ++i) {
      gu_[i] = double(w.ln_f_w[i]) * u[i];
      gu_sum_ += gu_[i];
      if (w.ln_f_b) beta_ += double(w.ln_f_b[i]) * u[i];
    }
  }
  double operator()(const double* part) const {
    double dot = 0, mean = 0;
    for (std::size_t i = 0; i < gu_.size(); ++i) {
      dot += part[i] * gu_[i];
      mean += part[i];
    }
    mean /= double(gu_.size());
    return (layer_norm_ ? dot - mean * gu_sum_ : dot) / scale_;
  }
  double beta() const { return beta_; }   // beta . u

 private:
  bool layer_norm_;
  std::vector<double> gu_;   // gamma * u
  double gu_sum_ = 0, beta_ = 0, scale_ = 0;
};

}   // namespace

Attribution attribute(const Model& model, std::span<const std::int32_t> tokens, std::int32_t answer,
                      std::optional<std::int32_t> wrong) {
  const ModelConfig& c = model.config();
  const ModelWeights& w = ModelInternals::weights(model);
  experiments::check_next_token_model(model, "attribution");
  if (c.architecture == Architecture::OpenAIGPT || !w.ln_f_w)
    throw InvalidArgument(
        "attribution splits the final residual stream before a final norm; this model is post-norm (openai-gpt): "
        "its stream is normed inside every block");
  experiments::check_prompt(model, tokens, "the prompt");
  experiments::check_id(model, answer, "the answer");
  if (wrong) experiments::check_id(model, *wrong, "the wrong answer");

  const int T = static_cast<int>(tokens.size()), L = c.n_layer, H = c.n_head, C = c.n_embd, hd = c.head_dim();
  const int Dq = H * hd;
  const experiments::Metric metric(model, answer, wrong);
  KVCache cache = model.new_cache();
  const auto run = experiments::capture(model, tokens, cache, {.mlp_out = true, .z = true});
  const float* x = run.final_stream.data() + std::size_t(T - 1) * C;
  const NormMap share(c, w, x, metric.direction());

  Attribution out;
  out.layers = L;
  out.heads_per_layer = H;
  out.total = metric(x);
  std::vector<double> part(C), bias(C, 0.0);
  auto of_floats = [&](const float* v) {
    for (int i = 0; i < C; ++i) part[i] = v[i];
    return share(part.data());
  };
  std::vector<float> embedding(C);
  w.wte.row(tokens[T - 1], embedding.data());
  out.embed = of_floats(embedding.data());
  out.pos_embed = w.wpe ? of_floats(w.wpe + std::size_t(T - 1) * C) : 0.0;

  std::vector<float> proj(std::size_t(C) * Dq);   // W_O (C,Dq) of one layer, row by row
  std::vector<double> z(hd);
  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = w.layers[l];
    for (int i = 0; i < C; ++i) matrix_row(lw.proj_w, i, proj.data() + std::size_t(i) * Dq);
    const float* zl = run.z.data() + (std::size_t(l) * T + (T - 1)) * Dq;   // the last position's z (Dq)
    for (int h = 0; h < H; ++h) {
      const float* bv = value_bias(c, lw, h);
      for (int j = 0; j < hd; ++j) z[j] = double(zl[h * hd + j]) - (bv ? bv[j] : 0.0f);
      for (int i = 0; i < C; ++i) {   // part = W_O,h (z_h - b_V,h); bias += W_O,h b_V,h
        const float* row = proj.data() + std::size_t(i) * Dq + h * hd;
        double sum = 0, from_bias = 0;
        for (int j = 0; j < hd; ++j) {
          sum += row[j] * z[j];
          if (bv) from_bias += double(row[j]) * bv[j];
        }
        part[i] = sum;
        bias[i] += from_bias;
      }
      out.heads.push_back(share(part.data()));
    }
    const float* mlp = run.mlp_out.data() + (std::size_t(l) * T + (T - 1)) * C;
    for (int i = 0; i < C; ++i) {
      const double b = lw.fc_proj_b ? lw.fc_proj_b[i] : 0.0f;
      part[i] = mlp[i] - b;
      bias[i] += b + (lw.proj_b ? lw.proj_b[i] : 0.0f);
    }
    out.mlp.push_back(share(part.data()));
  }
  out.bias = share(bias.data()) + share.beta();
  double sum = out.embed + out.pos_embed + out.bias;
  for (const double v : out.heads) sum += v;
  for (const double v : out.mlp) sum += v;
  out.residual = out.total - sum;
  return out;
}

}   // namespace glassbox
