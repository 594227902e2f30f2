// Saliency, gradient x input (glassbox/saliency.h), through the training code's backward pass
// (training/backprop.h): the loss -log p(target) at the last position alone, whose gradient with
// respect to the input of the first block the backward pass leaves in its workspace.
//
// Cost: the training code keeps its parameters in Hugging Face's layout, so the model's weights
// are copied back into it (read from the kernels' packed or int8 form) for each call: two more
// copies of the weights (parameters and their gradients) while it runs.
#include <cmath>
#include <string>

#include "experiments/experiment_pass.h"
#include "glassbox/error.h"
#include "glassbox/saliency.h"
#include "glassbox/trainer.h"
#include "model/model_internals.h"
#include "training/backprop.h"
#include "training/parameters.h"

namespace glassbox {

namespace {

// Throws unless the training code's backward pass computes this model: gpt2 or openai-gpt, its
// LM head tied to the token embeddings.
void check_backward(const ModelConfig& c) {
  const bool gpt = c.architecture == Architecture::GPT2 || c.architecture == Architecture::OpenAIGPT;
  if (!gpt)
    throw InvalidArgument(
        "saliency needs a backward pass, which glassbox has for gpt2 and openai-gpt models; this one is " +
        std::string(c.architecture_name()));
  if (!c.tie_word_embeddings)
    throw InvalidArgument(
        "saliency needs a backward pass, which glassbox has for models whose LM head is their token "
        "embedding (tie_word_embeddings); this one has its own");
}

// out (K,N), Hugging Face's Conv1D layout = m (N,K)^T.
void conv1d(const Matrix& m, float* out) {
  std::vector<float> row(m.K);
  for (int n = 0; n < m.N; ++n) {
    matrix_row(m, n, row.data());
    for (int k = 0; k < m.K; ++k) out[std::size_t(k) * m.N + n] = row[k];
  }
}

// The model's weights in the training code's layout.
std::vector<float> parameters(const ModelConfig& c, const ModelWeights& w, const training::ParameterLayout& layout) {
  std::vector<float> params(layout.size());
  const training::ModelView<float> p = layout.view(params.data());
  const std::size_t C = c.n_embd, F = c.n_inner;
  for (int v = 0; v < c.vocab_size; ++v) w.wte.row(v, p.wte + std::size_t(v) * C);
  std::copy_n(w.wpe, std::size_t(c.n_positions) * C, p.wpe);
  auto copy = [](const float* from, std::size_t n, float* to) {
    if (from)
      std::copy_n(from, n, to);
    else
      std::fill_n(to, n, 0.0f);
  };
  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = w.layers[l];
    const training::LayerView<float>& v = p.layers[l];
    copy(L.ln_1_w, C, v.ln_1_w);
    copy(L.ln_1_b, C, v.ln_1_b);
    conv1d(L.qkv_w, v.qkv_w);
    copy(L.qkv_b, 3 * C, v.qkv_b);
    conv1d(L.proj_w, v.proj_w);
    copy(L.proj_b, C, v.proj_b);
    copy(L.ln_2_w, C, v.ln_2_w);
    copy(L.ln_2_b, C, v.ln_2_b);
    conv1d(L.fc_w, v.fc_w);
    copy(L.fc_b, F, v.fc_b);
    conv1d(L.fc_proj_w, v.fc_proj_w);
    copy(L.fc_proj_b, C, v.fc_proj_b);
  }
  if (p.ln_f_w) {
    copy(w.ln_f_w, C, p.ln_f_w);
    copy(w.ln_f_b, C, p.ln_f_b);
  }
  return params;
}

}   // namespace

std::vector<float> saliency(const Model& model, std::span<const std::int32_t> tokens, std::int32_t target) {
  const ModelConfig& c = model.config();
  check_backward(c);
  experiments::check_next_token_model(model, "saliency");
  experiments::check_prompt(model, tokens, "the prompt");
  experiments::check_id(model, target, "the target");
  const int T = static_cast<int>(tokens.size()), C = c.n_embd;
  const training::ParameterLayout layout(c);
  const std::vector<float> params = parameters(c, ModelInternals::weights(model), layout);
  std::vector<float> grads(params.size(), 0.0f);
  std::vector<std::int32_t> targets(tokens.size(), kIgnoreTarget);
  targets.back() = target;   // loss = -log p(target) at the last position
  const training::Batch batch{tokens.data(), targets.data(), 1, T};
  training::Workspace<float> ws;
  training::loss_and_gradients<float>(c, layout, params.data(), grads.data(), batch, {.lm = 1}, ws);
  // ws.dx: d loss / d x (T,C), x = ws.blocks[0].x_in the embeddings; d log p = -d loss
  std::vector<float> scores(tokens.size());
  for (int t = 0; t < T; ++t) {
    double sum = 0;
    for (int i = 0; i < C; ++i) {
      const std::size_t at = std::size_t(t) * C + i;
      sum -= double(ws.dx[at]) * ws.blocks[0].x_in[at];
    }
    scores[t] = static_cast<float>(sum);
  }
  return scores;
}

}   // namespace glassbox
