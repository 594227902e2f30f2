#include "glassbox/model.h"

#include <algorithm>
#include <cmath>

#include "glassbox/error.h"
#include "kernels/kernels.h"
#include "model/blocks.h"
#include "model/model_internals.h"
#include "model/non_finite.h"
#include "model/rotary.h"
#include "model/weights.h"

namespace glassbox {

struct Model::Impl {
  ModelConfig config;
  std::string config_json;
  Quantization quantization = Quantization::None;
  Arithmetic arithmetic = Arithmetic::Portable;
  ModelWeights w;
  std::vector<float> inv_freq;   // (rotary_dim / 2) rotary positions' frequencies, else empty
  int context = 0;               // the most positions a sequence holds
};

Quantization parse_quantization(std::string_view name) {
  if (name == "none") return Quantization::None;
  if (name == "int8") return Quantization::Int8;
  if (name == "int4") return Quantization::Int4;
  throw InvalidArgument("unknown quantization '" + std::string(name) + "' (use none, int8 or int4)");
}

Arithmetic parse_arithmetic(std::string_view name) {
  if (name == "fused") return Arithmetic::Fused;
  if (name == "portable") return Arithmetic::Portable;
  throw InvalidArgument("unknown arithmetic '" + std::string(name) + "' (use fused or portable)");
}

const char* arithmetic_name(Arithmetic a) { return a == Arithmetic::Fused ? "fused" : "portable"; }

const char* quantization_name(Quantization q) {
  switch (q) {
    case Quantization::Int8:
      return "int8";
    case Quantization::Int4:
      return "int4";
    default:
      return "none";
  }
}

namespace {

// Throws InvalidArgument unless `tokens` can run at positions pos0 ..: not empty, within the
// context, every id in the vocabulary. `what` names the sequence in a batch ("" otherwise).
void check_tokens(const ModelConfig& c, int context, std::span<const std::int32_t> tokens, int pos0,
                  const std::string& what) {
  if (tokens.empty()) throw InvalidArgument(what + "no tokens to run");
  if (tokens.size() > static_cast<std::size_t>(context - pos0))
    throw InvalidArgument(what + std::to_string(pos0 + tokens.size()) + " tokens do not fit in the context of " +
                          std::to_string(context) + " positions");
  for (std::int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size)
      throw InvalidArgument(what + "token id " + std::to_string(id) + " is out of range: the vocabulary has ids 0.." +
                            std::to_string(c.vocab_size - 1));
}

// rows (R,C) of the residual stream -> [final norm] -> logits (R,V) through the tied LM head,
// the largest matmul: only the rows asked for go through it.
std::vector<float> lm_logits(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, Activations& a,
                             const ForwardOptions& o) {
  rows = final_norm(c, w, rows, R, a);
  std::vector<float> logits(std::size_t(R) * c.vocab_size);
  linear(logits.data(), rows, w.lm_head, nullptr, R, a);   // (R,C) @ lm_head^T -> (R,V)
  emit(o, "logits", -1, {R, c.vocab_size}, 2, logits.data());
  return logits;
}

// The logit lens of one block's output, rows (R,C): each row's `k` most probable next tokens as
// the model's head would give them (final norm, LM head), appended to *out; ids from
// tokenizer_size on (no token) never among them. Rows go through the head a few at a time: a (R,V)
// block of logits would be large for a long prompt. Returns false, appending nothing more, at the
// first row whose logits are not finite.
bool append_lens(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, int k, int tokenizer_size,
                 Activations& a, std::vector<TokenProbability>& out) {
  constexpr int kRowsAtOnce = 16;
  std::vector<float> logits(std::size_t(std::min(R, kRowsAtOnce)) * c.vocab_size);
  for (int r0 = 0; r0 < R; r0 += kRowsAtOnce) {
    const int n = std::min(kRowsAtOnce, R - r0);
    const float* normed = final_norm(c, w, rows + std::size_t(r0) * c.n_embd, n, a);
    linear(logits.data(), normed, w.lm_head, nullptr, n, a);   // (n,C) @ lm_head^T -> (n,V)
    if (mask_and_check(logits.data(), std::size_t(n), c.vocab_size, tokenizer_size)) return false;
    for (int r = 0; r < n; ++r) {
      const auto top = most_probable(std::span(logits).subspan(std::size_t(r) * c.vocab_size, c.vocab_size), k);
      out.insert(out.end(), top.begin(), top.end());
    }
  }
  return true;
}

// A steering vector: n_embd finite floats, for a block the model has.
void check_steering(const ModelConfig& c, int layer, std::span<const float> v) {
  if (layer < 0 || layer >= c.n_layer)
    throw InvalidArgument("steering: there is no layer " + std::to_string(layer) + ": the model has layers 0.." +
                          std::to_string(c.n_layer - 1));
  if (v.size() != std::size_t(c.n_embd))
    throw InvalidArgument("steering: the vector has " + std::to_string(v.size()) +
                          " values; the model's residual stream " + std::to_string(c.n_embd));
  for (const float x : v)
    if (!std::isfinite(x)) throw InvalidArgument("steering: the vector holds a value that is not a finite number");
}

void check_forward_options(const ModelConfig& c, const ForwardOptions& o) {
  if (!o.head_mask.empty()) {
    const std::size_t want = std::size_t(c.n_layer) * c.n_head;
    if (o.head_mask.size() != want)
      throw InvalidArgument("a head mask needs n_layer x n_head = " + std::to_string(c.n_layer) + " x " +
                            std::to_string(c.n_head) + " = " + std::to_string(want) + " factors, got " +
                            std::to_string(o.head_mask.size()));
    for (std::size_t i = 0; i < want; ++i)
      if (!std::isfinite(o.head_mask[i]))
        throw InvalidArgument("head mask: layer " + std::to_string(i / c.n_head) + " head " +
                              std::to_string(i % c.n_head) + " has a factor that is not a finite number");
  }
  if (!o.steer.empty()) check_steering(c, o.steer_layer, o.steer);
  if (o.lens && (o.lens_k < 1 || o.lens_k > c.vocab_size))
    throw InvalidArgument("the lens shows 1 to " + std::to_string(c.vocab_size) +
                          " tokens per layer (the vocabulary), got " + std::to_string(o.lens_k));
}

// ForwardOptions::logit_rows for a call of T tokens: increasing positions below T, and neither
// all_logits nor the lens beside them (which rows those would cover is then unclear).
void check_logit_rows(const ForwardOptions& o, int T) {
  if (o.logit_rows.empty()) return;
  if (o.all_logits || o.lens) throw InvalidArgument("logit rows go without all_logits and the lens");
  for (std::size_t i = 0; i < o.logit_rows.size(); ++i) {
    const std::int32_t t = o.logit_rows[i];
    if (t < 0 || t >= T || (i > 0 && t <= o.logit_rows[i - 1]))
      throw InvalidArgument("logit rows must be increasing positions below " + std::to_string(T) + ", got " +
                            std::to_string(t));
  }
}

// Where the first non-finite value of a pass over `tokens` (at positions cache.size() ..) appears:
// the pass again, with a hook that looks at every tensor (forward()'s failure path only). Leaves
// the cache's size as it was. `head`: what comes after the blocks, if not the LM head.
[[gnu::cold, gnu::noinline]] std::string locate_non_finite(const ModelConfig& c, const ModelWeights& w,
                                                           std::span<const float> inv_freq,
                                                           std::span<const std::int32_t> tokens, KVCache& cache,
                                                           const ForwardOptions& given, const char* head = nullptr) {
  const int T = static_cast<int>(tokens.size());
  NonFiniteFinder finder(cache.size(), c.vocab_size, given.tokenizer_size);
  const TensorHook hook = finder.hook();
  ForwardOptions o;
  o.hook = &hook;
  o.causal = given.causal;
  o.encoder_states = given.encoder_states;
  o.head_mask = given.head_mask;
  o.steer = given.steer;
  o.steer_layer = given.steer_layer;
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, cache.size() + T);
  run_blocks(c, w, inv_freq, std::span(&seq, 1), a, o);
  if (head) return finder.where(head);
  if (!finder.found()) lm_logits(c, w, a.x.data(), T, a, o);
  return finder.where("the logits");
}

// forward_batch's refusals, out of its way (once per failed call).
[[gnu::cold, gnu::noinline]] void throw_batch_too_large(std::uint64_t tokens, int V) {
  throw InvalidArgument("the batch asks for " + std::to_string(tokens * std::uint64_t(V)) + " logits (" +
                        std::to_string(tokens) + " tokens x " + std::to_string(V) + "), more than the " +
                        std::to_string(Model::kMaxBatchLogits) + " one call returns at most: split it");
}

// A batch's sequence b whose logits are not finite, alone through forward() (its logits are
// exactly its own forward's), which names where it went non-finite.
[[gnu::cold, gnu::noinline]] void throw_non_finite_sequence(const Model& model, std::span<const std::int32_t> ids,
                                                            std::size_t b, int tokenizer_size) {
  KVCache cache = model.new_cache();
  try {
    model.forward(ids, cache, {.all_logits = true, .tokenizer_size = tokenizer_size});
  } catch (const ModelFormatError& e) {
    throw ModelFormatError("sequence " + std::to_string(b), e.what());
  }
  throw non_finite_error("sequence " + std::to_string(b) + "'s logits");
}

}   // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

int context_length(const ModelConfig& c, int asked) {
  if (asked < 0 || asked > c.n_positions)
    throw InvalidArgument("the context must be 1.." + std::to_string(c.n_positions) +
                          " positions (the model's n_positions; 0: at most " + std::to_string(kDefaultContext) +
                          "), got " + std::to_string(asked));
  return asked ? asked : std::min(c.n_positions, kDefaultContext);
}

std::uint64_t kv_cache_bytes(const ModelConfig& c, int context) {
  return KVCache::peak_bytes(c.n_layer, context, c.kv_heads() * c.head_dim());
}

Model Model::from_weights(const std::string& config_json, ModelConfig config, const LoadOptions& options,
                          ModelWeights&& weights) {
  auto impl = std::make_unique<Impl>();
  impl->context = context_length(config, options.context);
  impl->config = std::move(config);
  impl->config_json = config_json;
  impl->quantization = options.quantize;
  impl->w = std::move(weights);
  if (options.arithmetic == Arithmetic::Fused && options.quantize == Quantization::None &&
      kernels::has_fused_multiply_add()) {
    impl->arithmetic = Arithmetic::Fused;
    use_fused_products(impl->w);
  }
  if (impl->config.position_encoding == PositionEncoding::Rotary)
    impl->inv_freq = rotary_inv_freq(impl->config.rotary, impl->config.rotary_dim());
  return Model(std::move(impl));
}

const ModelWeights& ModelInternals::weights(const Model& m) { return m.impl_->w; }
std::span<const float> ModelInternals::inv_freq(const Model& m) { return m.impl_->inv_freq; }

const ModelConfig& Model::config() const { return impl_->config; }
const std::string& Model::config_json() const { return impl_->config_json; }
Quantization Model::quantization() const { return impl_->quantization; }
Arithmetic Model::arithmetic() const { return impl_->arithmetic; }
int Model::context() const { return impl_->context; }

std::vector<float> silencing_head_mask(const ModelConfig& c, std::span<const std::array<int, 2>> heads) {
  std::vector<float> mask(std::size_t(c.n_layer) * c.n_head, 1.0f);
  for (const auto& [layer, head] : heads) {
    if (layer < 0 || layer >= c.n_layer)
      throw InvalidArgument("there is no layer " + std::to_string(layer) + ": the model has layers 0.." +
                            std::to_string(c.n_layer - 1));
    if (head < 0 || head >= c.n_head)
      throw InvalidArgument("there is no head " + std::to_string(head) + ": the model's layers have heads 0.." +
                            std::to_string(c.n_head - 1));
    mask[std::size_t(layer) * c.n_head + head] = 0.0f;
  }
  return mask;
}

KVCache Model::new_cache() const {
  const auto& c = impl_->config;
  return KVCache(c.n_layer, impl_->context, c.kv_heads() * c.head_dim());
}

std::vector<float> Model::forward(std::span<const std::int32_t> tokens, KVCache& cache, const ForwardOptions& o) const {
  const ModelConfig& c = impl_->config;
  if (cache.capacity() != impl_->context || cache.n_embd() != c.kv_heads() * c.head_dim() ||
      cache.n_layer() != c.n_layer)
    throw InvalidArgument("the KV cache was made for another model (use this model's new_cache())");
  check_tokens(c, impl_->context, tokens, cache.size(), "");
  if (!is_causal(c, o) && cache.size() > 0)   // the cached positions never saw these tokens
    throw InvalidArgument(std::string(c.bidirectional ? "this model is bidirectional (an encoder): its attention needs"
                                                      : "bidirectional attention needs") +
                          " the whole sequence in one call, from an empty cache (this one holds " +
                          std::to_string(cache.size()) + " positions)");
  if (!o.encoder_states.empty()) {
    if (!c.add_cross_attention)
      throw InvalidArgument(
          "this model has no cross-attention (config.json: add_cross_attention), so it takes no encoder states");
    if (o.encoder_states.size() % std::size_t(c.n_embd) != 0)
      throw InvalidArgument("encoder states must be (S, n_embd) floats: " + std::to_string(o.encoder_states.size()) +
                            " is not a multiple of n_embd " + std::to_string(c.n_embd));
  }
  check_forward_options(c, o);
  const int T = static_cast<int>(tokens.size()), C = c.n_embd;
  check_logit_rows(o, T);
  const int R = o.all_logits ? T : 1;
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, cache.size() + T);
  // Hidden states and the lens are read off the residual stream between blocks.
  if (o.hidden_states) o.hidden_states->clear();
  if (o.lens) o.lens->clear();
  ResidualTap tap;   // made only when asked for: a decoded token makes none
  bool lens_finite = true;
  if (o.hidden_states || o.lens) {
    tap = [&](int l, const float* x) {
      if (o.hidden_states) o.hidden_states->insert(o.hidden_states->end(), x, x + std::size_t(T) * C);
      if (o.lens && l >= 0 && lens_finite)
        lens_finite = append_lens(c, impl_->w, x + std::size_t(T - R) * C, R, o.lens_k, o.tokenizer_size, a, *o.lens);
    };
  }
  cache.reserve(cache.size() + T);
  run_blocks(c, impl_->w, impl_->inv_freq, std::span(&seq, 1), a, o, tap ? &tap : nullptr);
  if (o.hidden_states) {   // Hugging Face's last hidden state is after the final norm
    const float* last = final_norm(c, impl_->w, a.x.data(), T, a);
    std::copy(last, last + std::size_t(T) * C, o.hidden_states->end() - std::ptrdiff_t(T) * C);
  }
  std::vector<float> logits;
  if (!o.logit_rows.empty()) {   // the rows asked for, gathered (R,C), into a.branch (T,C)
    float* rows = a.branch.data();
    for (const std::int32_t t : o.logit_rows) rows = std::copy_n(a.x.data() + std::size_t(t) * C, C, rows);
    logits = lm_logits(c, impl_->w, a.branch.data(), static_cast<int>(o.logit_rows.size()), a, o);
  } else {
    logits = lm_logits(c, impl_->w, a.x.data() + std::size_t(T - R) * C, R, a, o);
  }
  const bool finite = !mask_and_check(logits.data(), logits.size() / c.vocab_size, c.vocab_size, o.tokenizer_size);
  if (!finite || !lens_finite)
    throw non_finite_error(locate_non_finite(c, impl_->w, impl_->inv_freq, tokens, cache, o));
  cache.advance(T);
  return logits;
}

void Model::check_sequence(std::span<const std::int32_t> tokens, std::size_t index) const {
  check_tokens(impl_->config, impl_->context, tokens, 0, "sequence " + std::to_string(index) + ": ");
}

std::vector<std::vector<float>> Model::forward_batch(std::span<const std::vector<std::int32_t>> batch,
                                                     int tokenizer_size) const {
  const ModelConfig& c = impl_->config;
  const int C = c.n_embd, V = c.vocab_size;
  if (batch.empty()) throw InvalidArgument("the batch holds no sequences");
  std::size_t longest = 0;
  std::uint64_t tokens = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    check_sequence(batch[b], b);
    longest = std::max(longest, batch[b].size());
    tokens += batch[b].size();
  }
  if (tokens * std::uint64_t(V) > kMaxBatchLogits) throw_batch_too_large(tokens, V);
  // Right-padded to the longest with id 0 (any id would do: the mask hides padding), each
  // sequence with a cache of its own for this pass.
  const int B = static_cast<int>(batch.size()), T = static_cast<int>(longest);
  std::vector<std::vector<std::int32_t>> padded(batch.begin(), batch.end());
  std::vector<KVCache> caches;
  std::vector<Sequence> seqs;
  caches.reserve(std::size_t(B));
  for (auto& ids : padded) {
    const int valid = static_cast<int>(ids.size());
    ids.resize(longest, 0);
    caches.push_back(new_cache());
    caches.back().reserve(T);
    seqs.push_back({ids, valid, &caches.back()});
  }
  Activations a(c, B * T, T);
  const ForwardOptions o;
  run_blocks(c, impl_->w, impl_->inv_freq, seqs, a, o);
  // The real rows only, gathered, through the final norm and the LM head.
  std::vector<float> real;
  for (int b = 0; b < B; ++b) {
    const float* first = a.x.data() + std::size_t(b) * T * C;
    real.insert(real.end(), first, first + std::size_t(seqs[b].valid) * C);
  }
  const int R = static_cast<int>(real.size() / std::size_t(C));
  std::vector<float> logits = lm_logits(c, impl_->w, real.data(), R, a, o);
  if (const auto bad = mask_and_check(logits.data(), std::size_t(R), V, tokenizer_size)) {
    std::size_t b = 0;   // sequence b's rows end at `end`
    for (int end = seqs[0].valid; end <= *bad; end += seqs[b].valid) ++b;
    throw_non_finite_sequence(*this, batch[b], b, tokenizer_size);
  }
  std::vector<std::vector<float>> out;
  std::size_t row = 0;
  for (const Sequence& seq : seqs) {
    out.emplace_back(logits.begin() + std::ptrdiff_t(row * V), logits.begin() + std::ptrdiff_t((row + seq.valid) * V));
    row += std::size_t(seq.valid);
  }
  return out;
}

std::vector<float> Model::classify(std::span<const std::int32_t> tokens, std::span<const float> head_mask,
                                   const TensorHook* hook) const {
  const ModelConfig& c = impl_->config;
  const int C = c.n_embd;
  if (c.labels.empty())
    throw InvalidArgument(
        "this model has no classification head (a classifier's config.json names "
        "GPT2ForSequenceClassification in \"architectures\")");
  check_tokens(c, impl_->context, tokens, 0, "");
  ForwardOptions options;
  options.head_mask = head_mask;
  options.hook = hook;
  check_forward_options(c, options);
  const int T = static_cast<int>(tokens.size());
  KVCache cache = new_cache();
  cache.reserve(T);
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, T);
  run_blocks(c, impl_->w, impl_->inv_freq, std::span(&seq, 1), a, options);
  const float* last = final_norm(c, impl_->w, a.x.data() + std::size_t(T - 1) * C, 1, a);   // (1,C)
  std::vector<float> logits(c.labels.size());   // (1,C) @ score^T -> (n_labels): a few dot products
  for (std::size_t k = 0; k < logits.size(); ++k) {
    const float* row = impl_->w.score + k * std::size_t(C);
    float sum = 0;
    for (int i = 0; i < C; ++i) sum += row[i] * last[i];
    logits[k] = sum;
  }
  if (mask_and_check(logits.data(), 1, static_cast<int>(logits.size()), 0)) {
    cache.clear();
    throw non_finite_error(locate_non_finite(c, impl_->w, impl_->inv_freq, tokens, cache, options,
                                             "the final norm or the classification head (ln_f, score.weight)"));
  }
  return logits;
}

}   // namespace glassbox
