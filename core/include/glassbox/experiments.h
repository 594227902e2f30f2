// Interpretability experiments, as TransformerLens defines them: activation patching, direct logit
// attribution, steering by activation addition and the MLP's neurons, on any model type the
// engine loads. Saliency, which needs a backward pass, is in glassbox/saliency.h.
//
// The metric of patching and attribution is the logit difference at the last position,
//   metric = logit(answer) - logit(wrong)      (or logit(answer) alone when there is no wrong)
// computed from the final hidden state and the LM head's rows for the two tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "glassbox/model.h"

namespace glassbox {

// ---------------------------------------------------------------------------------------------
// Activation patching: the corrupted prompt run again with one activation taken from the clean
// run, for every layer and position (or head); each result normalized as
//   (patched - corrupted) / (clean - corrupted)
// so that 1 is the clean answer and 0 the corrupted one.

// Where an activation is replaced.
enum class PatchSite {
  ResidPre,   // the residual stream entering block l, at one position      -> [layer][position]
  AttnOut,    // block l's attention output (after its projection), one position
  MlpOut,     // block l's MLP output, one position
  Head,       // one head's attention-weighted values before the output projection (TransformerLens's
              // z), at every position                                        -> [layer][head]
};
std::string_view patch_site_name(PatchSite site);   // "resid_pre", "attn_out", "mlp_out", "head"
// "resid_pre", "attn_out", "mlp_out" or "head"; throws InvalidArgument naming the accepted names.
PatchSite parse_patch_site(std::string_view name);

// One layer of one site done: its row of normalized results (positions, or heads).
struct PatchProgress {
  PatchSite site;
  int layer;
  std::span<const float> row;
  int done, total;   // layers done over every site asked for, and how many there are
};

struct PatchOptions {
  std::vector<PatchSite> sites = {PatchSite::ResidPre, PatchSite::AttnOut, PatchSite::MlpOut, PatchSite::Head};
  // Called after each layer of each site; returning false stops the experiment (patch() then
  // throws Cancelled).
  std::function<bool(const PatchProgress&)> progress;
};

struct PatchResult {
  double clean = 0, corrupted = 0;   // the raw metrics of the two prompts
  int layers = 0, positions = 0, heads = 0;
  // Normalized results, laid out [layer][position] (or [layer][head]); empty for a site not asked for.
  std::vector<float> resid_pre, attn_out, mlp_out, head;
  const std::vector<float>& grid(PatchSite site) const;
  std::vector<float>& grid(PatchSite site);
};

// Throws InvalidArgument when the prompts' lengths differ (naming both), for an answer or wrong id
// outside the vocabulary, for prompts the model cannot run (as forward()), and when the clean and
// corrupted metrics are less than 1e-6 apart (the normalization is undefined). Cost: the clean and
// corrupted passes, then for each layer l of a site one batched pass over layers l.. of the rows
// that the patch changes (positions p.. for a position's patch; the corrupted run's keys and
// values before them are reused): for resid_pre of T positions, T(T+1)/2 rows through
// L(L+1)/2 layers in all, about (T+1)L/4 times one forward pass of the prompt.
PatchResult patch(const Model& model, std::span<const std::int32_t> clean, std::span<const std::int32_t> corrupted,
                  std::int32_t answer, std::int32_t wrong, const PatchOptions& options = {});

// The same experiment one layer at a time, for a caller that returns to its event loop between
// layers (the JS API: its page draws each row as it comes and can stop the run): patch() is
// made of it, so the results are the same bits. The constructor checks what patch() checks and
// runs the clean and corrupted passes (throwing as patch() does); each step() then runs the next
// layer of the next site.
class Patching {
 public:
  Patching(const Model& model, std::span<const std::int32_t> clean, std::span<const std::int32_t> corrupted,
           std::int32_t answer, std::int32_t wrong, const std::vector<PatchSite>& sites);
  Patching(Patching&&) noexcept;
  Patching& operator=(Patching&&) noexcept;
  ~Patching();

  bool done() const;
  // The next layer of the next site; its row refers into result() (valid until the next step).
  // Throws InvalidArgument once done().
  PatchProgress step();
  // The results so far (complete once done()): rows not yet run are 0.
  const PatchResult& result() const;
  PatchResult take();   // the results, moved out (this run is then spent)

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// Direct logit attribution at the last position: the final residual stream split into its parts,
// each put through the final norm's linear map (the norm's scale taken from the whole stream:
// LayerNorm centres a part and divides it by the stream's sigma, RMSNorm divides it by the
// stream's rms; both then multiply by the norm's weight), then dotted with the unembedding of
// answer minus that of wrong (or of answer alone). The parts sum to the metric (`residual` says
// how closely: the rounding of float arithmetic, or an int8 model's quantization).
struct Attribution {
  int layers = 0, heads_per_layer = 0;
  double embed = 0;            // the token embedding
  double pos_embed = 0;        // the position embedding (0 for rotary models)
  std::vector<double> heads;   // [layer][head]: W_O,h (z_h - b_V,h), the head's output
  std::vector<double> mlp;     // [layer]: the MLP's output less its output bias
  double bias = 0;             // every output-projection bias (W_O,h b_V,h included) and the norm's beta
  double total = 0;            // the metric as the forward pass gives it
  double residual = 0;         // total minus the sum of the parts
};

// Throws InvalidArgument for a post-norm model (openai-gpt: no final norm the parts go through),
// a classifier or a masked LM (no next-token logits), and for what patch() refuses of one prompt.
Attribution attribute(const Model& model, std::span<const std::int32_t> tokens, std::int32_t answer,
                      std::optional<std::int32_t> wrong = std::nullopt);

// ---------------------------------------------------------------------------------------------
// Steering (activation addition): v = resid_pre_l(plus)[last] - resid_pre_l(minus)[last], the
// residual streams entering block l at the last positions of two prompts, times the coefficient.
// GenerateOptions::steer (ForwardOptions::steer) adds it at every position. Throws InvalidArgument
// for a layer out of range or a coefficient that is not finite, and for prompts forward() refuses.
std::vector<float> steering_vector(const Model& model, int layer, float coefficient, std::span<const std::int32_t> plus,
                                   std::span<const std::int32_t> minus);

// Saliency (gradient x input) needs a backward pass: glassbox/saliency.h, in the training library.

// ---------------------------------------------------------------------------------------------
// Neurons: the MLP's activations, after its nonlinearity (for a gated MLP the product that enters
// down_proj), (n_layer, T, n_inner) from one forward pass (the "mlp_act" tensor of TensorHook).
struct NeuronValue {
  int index;
  float value;
};
// Each layer's and position's k largest activations, largest first (ties: the lower index),
// laid out [layer][position][k]. Throws InvalidArgument for k outside 1..n_inner.
std::vector<NeuronValue> top_neurons(const Model& model, std::span<const std::int32_t> tokens, int k);
// One neuron's activation at every position (T). Throws InvalidArgument naming a layer or neuron
// the model does not have.
std::vector<float> neuron_activations(const Model& model, std::span<const std::int32_t> tokens, int layer, int neuron);

}   // namespace glassbox
