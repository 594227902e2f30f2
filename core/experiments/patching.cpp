// Activation patching (glassbox/experiments.h): the corrupted prompt run again with one activation
// from the clean run, every layer and position (or head) of each site asked for.
//
// Cost: a patch at layer l and position p changes nothing before them, so each run starts from
// the corrupted pass's residual stream entering block l, over positions p.. only, attending to the
// corrupted pass's keys and values of the positions before p (KVCache::assign_prefix). The runs of
// one layer go through the blocks together, as one batch of sequences (one read of each layer's
// weights for all of them, where run one by one a short run is bound by reading the weights).
// A replacement equal to what it replaces (every position before the first token where the two
// prompts differ, in a causal model) changes nothing: its result is 0 without a run; a head's run
// starts at the first position where its z differs.
#include <algorithm>
#include <cmath>
#include <string>

#include "experiments/experiment_pass.h"
#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "model/model_internals.h"

namespace glassbox {

std::string_view patch_site_name(PatchSite site) {
  switch (site) {
    case PatchSite::ResidPre:
      return "resid_pre";
    case PatchSite::AttnOut:
      return "attn_out";
    case PatchSite::MlpOut:
      return "mlp_out";
    case PatchSite::Head:
      return "head";
  }
  return "?";
}

PatchSite parse_patch_site(std::string_view name) {
  for (PatchSite s : {PatchSite::ResidPre, PatchSite::AttnOut, PatchSite::MlpOut, PatchSite::Head})
    if (name == patch_site_name(s)) return s;
  throw InvalidArgument("unknown patching site '" + std::string(name) + "' (use resid_pre, attn_out, mlp_out or head)");
}

std::vector<float>& PatchResult::grid(PatchSite site) {
  switch (site) {
    case PatchSite::ResidPre:
      return resid_pre;
    case PatchSite::AttnOut:
      return attn_out;
    case PatchSite::MlpOut:
      return mlp_out;
    case PatchSite::Head:
      return head;
  }
  return head;
}

const std::vector<float>& PatchResult::grid(PatchSite site) const { return const_cast<PatchResult*>(this)->grid(site); }

namespace {

using experiments::Captured;

// One patched run: the corrupted prompt from position `start` on, at layers `layer` on, with one
// replacement (a site's value at position `start`, or one head's z at every position from it).
struct Run {
  int start;
  int head;   // PatchSite::Head
};

// The inputs every run of one experiment reads.
struct Inputs {
  const Model& model;
  std::span<const std::int32_t> corrupted;
  const Captured& clean;
  const Captured& dirty;   // the corrupted pass's
  KVCache& dirty_cache;
  const experiments::Metric& metric;
};

// How many runs go through the blocks at once: their caches (a copy of the corrupted one each)
// and activations are held together, so a long prompt's runs are split into groups of at most
// about 64 MB.
int runs_per_group(const ModelConfig& c, int T) {
  const std::uint64_t cache = std::uint64_t(T) * c.n_layer * 2 * c.kv_heads() * c.head_dim() * sizeof(float);
  const std::uint64_t rows = std::uint64_t(T) * (4 * c.n_embd + 2 * c.n_inner) * sizeof(float);
  return static_cast<int>(std::max<std::uint64_t>(1, (std::uint64_t(64) << 20) / (cache + rows)));
}

// The metric of each run of `runs` (all at `layer`, for `site`), through layers layer.. in one batch.
std::vector<double> run_group(const Inputs& in, PatchSite site, int layer, std::span<const Run> runs) {
  const Model& model = in.model;
  const ModelConfig& c = model.config();
  const ModelWeights& w = ModelInternals::weights(model);
  const int T = static_cast<int>(in.corrupted.size()), C = c.n_embd, Dq = Activations::q_width(c);
  const std::size_t LT = std::size_t(layer) * T;   // the first row of `layer` in a captured (L,T,width)
  std::vector<KVCache> caches;
  std::vector<Sequence> seqs;
  caches.reserve(runs.size());
  int rows = 0;
  for (const Run& r : runs) {
    caches.push_back(model.new_cache());
    caches.back().reserve(T);
    caches.back().assign_prefix(in.dirty_cache, r.start);
    seqs.push_back({in.corrupted.subspan(std::size_t(r.start)), T - r.start, &caches.back()});
    rows += T - r.start;
  }
  Activations a(c, rows, T);
  embed(c, w, ModelInternals::inv_freq(model), seqs, a);   // each row's rotary angles (a.x is replaced next)
  std::vector<BlockEdit> edits;
  int row = 0;
  for (const Run& r : runs) {
    // the stream entering block `layer`: the corrupted one, at positions start..
    const float* dirty = in.dirty.resid_pre.data() + (LT + r.start) * C;
    std::copy_n(dirty, std::size_t(T - r.start) * C, a.x.data() + std::size_t(row) * C);
    const std::size_t at = (LT + r.start) * C;   // position `start` of `layer` in a (L,T,C) capture
    switch (site) {
      case PatchSite::ResidPre:
        std::copy_n(in.clean.resid_pre.data() + at, C, a.x.data() + std::size_t(row) * C);
        break;
      case PatchSite::AttnOut:
        edits.push_back({BlockEdit::Site::AttnOut, layer, row, 1, 0, in.clean.attn_out.data() + at, C});
        break;
      case PatchSite::MlpOut:
        edits.push_back({BlockEdit::Site::MlpOut, layer, row, 1, 0, in.clean.mlp_out.data() + at, C});
        break;
      case PatchSite::Head:
        edits.push_back({BlockEdit::Site::HeadZ, layer, row, T - r.start, r.head,
                         in.clean.z.data() + (LT + r.start) * Dq + std::size_t(r.head) * c.head_dim(), Dq});
        break;
    }
    row += T - r.start;
  }
  run_layers(c, w, seqs, a, ForwardOptions{}, layer, edits);
  std::vector<double> metrics;
  row = 0;
  for (const Run& r : runs) {
    row += T - r.start;
    metrics.push_back(in.metric(a.x.data() + std::size_t(row - 1) * C));   // the run's last row
  }
  return metrics;
}

// The first position where the clean run's activation at (layer, i) differs from the corrupted
// run's, or T where they are equal: position i's vector, or head i's z at every position (the
// positions before it are then the corrupted run's, and the patched run starts there).
int first_change(const Inputs& in, PatchSite site, int layer, int i) {
  const ModelConfig& c = in.model.config();
  const int T = static_cast<int>(in.corrupted.size());
  const std::size_t C = std::size_t(c.n_embd), Dq = std::size_t(Activations::q_width(c));
  auto same = [](const std::vector<float>& a, const std::vector<float>& b, std::size_t at, std::size_t n) {
    return std::equal(a.begin() + std::ptrdiff_t(at), a.begin() + std::ptrdiff_t(at + n),
                      b.begin() + std::ptrdiff_t(at));
  };
  const std::size_t row = (std::size_t(layer) * T + i) * C;
  switch (site) {
    case PatchSite::ResidPre:
      return same(in.clean.resid_pre, in.dirty.resid_pre, row, C) ? T : i;
    case PatchSite::AttnOut:
      return same(in.clean.attn_out, in.dirty.attn_out, row, C) ? T : i;
    case PatchSite::MlpOut:
      return same(in.clean.mlp_out, in.dirty.mlp_out, row, C) ? T : i;
    case PatchSite::Head: {
      const std::size_t hd = std::size_t(c.head_dim());
      for (int t = 0; t < T; ++t)
        if (!same(in.clean.z, in.dirty.z, (std::size_t(layer) * T + t) * Dq + i * hd, hd)) return t;
      return T;
    }
  }
  return i;
}

}   // namespace

// What a patching run holds between its steps: the clean and corrupted passes' tensors, the
// corrupted pass's cache, and where it is.
struct Patching::State {
  State(const Model& m, std::span<const std::int32_t> dirty, std::vector<PatchSite> s, std::int32_t answer,
        std::int32_t wrong)
      : model(m),
        corrupted(dirty.begin(), dirty.end()),
        sites(std::move(s)),
        metric(m, answer, wrong),
        dirty_cache(m.new_cache()) {}
  const Model& model;
  std::vector<std::int32_t> corrupted;
  std::vector<PatchSite> sites;   // as asked, each once
  experiments::Metric metric;
  KVCache dirty_cache;
  Captured clean_run, dirty_run;
  PatchResult result;
  double gap = 0;
  int group = 1;
  std::size_t site = 0;   // the next step's site (an index into sites) and layer
  int layer = 0, done = 0, total = 0;
};

Patching::Patching(const Model& model, std::span<const std::int32_t> clean, std::span<const std::int32_t> corrupted,
                   std::int32_t answer, std::int32_t wrong, const std::vector<PatchSite>& asked_sites) {
  const ModelConfig& c = model.config();
  experiments::check_next_token_model(model, "patching");
  if (clean.size() != corrupted.size())
    throw InvalidArgument("the clean prompt has " + std::to_string(clean.size()) + " tokens and the corrupted one " +
                          std::to_string(corrupted.size()) + ": patching needs prompts of the same length");
  experiments::check_prompt(model, clean, "the clean prompt");
  experiments::check_prompt(model, corrupted, "the corrupted prompt");
  experiments::check_id(model, answer, "the answer");
  experiments::check_id(model, wrong, "the wrong answer");
  std::vector<PatchSite> sites;
  for (const PatchSite s : asked_sites)
    if (std::find(sites.begin(), sites.end(), s) == sites.end()) sites.push_back(s);
  if (sites.empty()) throw InvalidArgument("patching: no site asked for (resid_pre, attn_out, mlp_out, head)");
  auto asked = [&](PatchSite s) { return std::find(sites.begin(), sites.end(), s) != sites.end(); };

  const int T = static_cast<int>(clean.size()), L = c.n_layer, H = c.n_head;
  state_ = std::make_unique<State>(model, corrupted, sites, answer, wrong);
  State& s = *state_;
  KVCache clean_cache = model.new_cache();
  const experiments::CaptureWhat what = {true, asked(PatchSite::AttnOut), asked(PatchSite::MlpOut),
                                         asked(PatchSite::Head)};
  s.clean_run = experiments::capture(model, clean, clean_cache, what);
  s.dirty_run = experiments::capture(model, corrupted, s.dirty_cache, what);
  PatchResult& result = s.result;
  result.clean = s.metric(s.clean_run.final_stream.data() + std::size_t(T - 1) * c.n_embd);
  result.corrupted = s.metric(s.dirty_run.final_stream.data() + std::size_t(T - 1) * c.n_embd);
  result.layers = L;
  result.positions = T;
  result.heads = H;
  s.gap = result.clean - result.corrupted;
  if (!(std::fabs(s.gap) >= 1e-6))
    throw InvalidArgument("the clean and corrupted prompts give the same metric (" + std::to_string(result.clean) +
                          " and " + std::to_string(result.corrupted) +
                          "): patching's results, (patched - corrupted) / (clean - corrupted), are undefined; "
                          "choose prompts, answer and wrong that the model tells apart");
  for (const PatchSite site : s.sites)
    result.grid(site).assign(std::size_t(L) * (site == PatchSite::Head ? H : T), 0.0f);
  s.group = runs_per_group(c, T);
  s.total = static_cast<int>(s.sites.size()) * L;
}

Patching::Patching(Patching&&) noexcept = default;
Patching& Patching::operator=(Patching&&) noexcept = default;
Patching::~Patching() = default;

bool Patching::done() const { return state_->done == state_->total; }

const PatchResult& Patching::result() const { return state_->result; }

PatchResult Patching::take() { return std::move(state_->result); }

PatchProgress Patching::step() {
  if (done()) throw InvalidArgument("patching: every layer of every site is done");
  State& s = *state_;
  const PatchSite site = s.sites[s.site];
  const int l = s.layer, T = s.result.positions;
  const bool by_head = site == PatchSite::Head;
  const int width = by_head ? s.result.heads : T;
  std::vector<float>& grid = s.result.grid(site);
  const Inputs in{s.model, s.corrupted, s.clean_run, s.dirty_run, s.dirty_cache, s.metric};
  std::vector<Run> runs;   // those that change something (the others' results stay 0)
  std::vector<int> cells;
  for (int i = 0; i < width; ++i)
    if (const int start = first_change(in, site, l, i); start < T) {
      runs.push_back({start, by_head ? i : 0});
      cells.push_back(i);
    }
  for (std::size_t first = 0; first < runs.size(); first += std::size_t(s.group)) {
    const std::size_t n = std::min(runs.size() - first, std::size_t(s.group));
    const std::vector<double> m = run_group(in, site, l, std::span(runs).subspan(first, n));
    for (std::size_t i = 0; i < n; ++i)   // + 0.0f: no -0
      grid[std::size_t(l) * width + cells[first + i]] = static_cast<float>((m[i] - s.result.corrupted) / s.gap) + 0.0f;
  }
  ++s.done;
  if (++s.layer == s.result.layers) {
    s.layer = 0;
    ++s.site;
  }
  return {site, l, std::span<const float>(grid).subspan(std::size_t(l) * width, width), s.done, s.total};
}

PatchResult patch(const Model& model, std::span<const std::int32_t> clean, std::span<const std::int32_t> corrupted,
                  std::int32_t answer, std::int32_t wrong, const PatchOptions& options) {
  Patching patching(model, clean, corrupted, answer, wrong, options.sites);
  while (!patching.done()) {
    const PatchProgress p = patching.step();
    if (options.progress && !options.progress(p)) throw Cancelled("patching was stopped");
  }
  return patching.take();
}

}   // namespace glassbox
