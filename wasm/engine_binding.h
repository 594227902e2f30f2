// The Embind class `Engine`: a loaded model and its tokenizer as the JS API's engine.mjs calls
// them (bindings.cpp registers it).
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/generate.h"
#include "glassbox/generation_config.h"
#include "glassbox/model.h"
#include "glassbox/saliency.h"
#include "glassbox/tokenizer.h"
#include "js_glue.h"

namespace glassbox::js {

// headMask: [[layer, head], ...] (integer pairs, checked by engine.mjs) -> the model's head mask,
// those heads silenced; undefined or null -> none.
inline std::vector<float> head_mask_from_js(const val& pairs, const ModelConfig& c) {
  if (pairs.isUndefined() || pairs.isNull()) return {};
  std::vector<std::array<int, 2>> heads;
  const unsigned n = pairs["length"].as<unsigned>();
  for (unsigned i = 0; i < n; ++i) heads.push_back({pairs[i][0].as<int>(), pairs[i][1].as<int>()});
  try {
    return silencing_head_mask(c, heads);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("headMask: ") + e.what());
  }
}

// A run of K most probable tokens -> [{id, probability}, ...], most probable first.
inline val top_tokens(const TokenProbability* top, int k) {
  val out = val::array();
  for (int i = 0; i < k; ++i) {
    val entry = val::object();
    entry.set("id", top[i].id);
    entry.set("probability", top[i].probability);
    out.call<void>("push", entry);
  }
  return out;
}

// A model's shape as the loader parsed config.json (ModelConfig, with its defaults for what the
// file leaves out), in the JS API's names: {positions, layers, heads, kvHeads, width, vocabulary,
// modelType}. The page reads this rather than config.json, so it never re-derives a default.
// kvHeads: the heads with keys and values of their own (ModelConfig::kv_heads(): fewer than heads
// with grouped-query attention).
inline val shape_of(const ModelConfig& c) {
  val shape = val::object();
  shape.set("positions", c.n_positions);
  shape.set("layers", c.n_layer);
  shape.set("heads", c.n_head);
  shape.set("kvHeads", c.kv_heads());
  shape.set("width", c.n_embd);
  shape.set("vocabulary", c.vocab_size);
  shape.set("modelType", std::string(c.architecture_name()));
  return shape;
}

// [layer][position] arrays of K {index, value}, largest first, from top_neurons' (L, T, K).
inline val neurons_of(const std::vector<NeuronValue>& top, int layers, int positions, int k) {
  val out = val::array();
  for (int l = 0; l < layers; ++l) {
    val rows = val::array();
    for (int t = 0; t < positions; ++t) {
      val row = val::array();
      for (int i = 0; i < k; ++i) {
        const NeuronValue& n = top[(std::size_t(l) * positions + t) * k + i];
        val entry = val::object();
        entry.set("index", n.index);
        entry.set("value", n.value);
        row.call<void>("push", entry);
      }
      rows.call<void>("push", row);
    }
    out.call<void>("push", rows);
  }
  return out;
}

class Engine {
 public:
  explicit Engine(Model model) : model_(std::move(model)) {}
  void set_tokenizer(Tokenizer tokenizer) { tokenizer_.emplace(std::move(tokenizer)); }
  void set_generation_config(GenerationConfig config) { generation_ = std::move(config); }

  // Bytes of heap that loading the model takes (Model::load_memory: its arrays, and the loader's
  // staging; the file is never held whole), from
  // config.json and the file's first bytes up to the end of its header (a Uint8Array).
  static double load_memory(const std::string& config_json, const val& weights_prefix, const std::string& quantize) {
    return guarded([&] {
      const auto prefix = emscripten::convertJSArrayToNumberVector<std::uint8_t>(weights_prefix);
      return static_cast<double>(
          Model::load_memory(config_json, std::as_bytes(std::span(prefix)), LoadOptions{parse_quantization(quantize)}));
    });
  }

  // The most heap one generation's KV cache takes on this model (kv_cache_bytes: a full context,
  // and the block it grows from), from config.json and the context asked for (0: the default).
  static double cache_memory(const std::string& config_json, int context) {
    return guarded([&] {
      const ModelConfig c = ModelConfig::parse(config_json, "config.json");
      return static_cast<double>(kv_cache_bytes(c, context_length(c, context)));
    });
  }

  // shape_of the model config.json describes, before its weights are read (the tokenizer that
  // loadModel's onTokenizer gets carries it).
  static val shape(const std::string& config_json) {
    return guarded([&] { return shape_of(ModelConfig::parse(config_json, "config.json")); });
  }

  val tokenize(const std::string& text, bool allow_special, bool add_special) const {
    return guarded([&] {
      const auto ids = tokenizer().encode(text, allow_special, add_special);
      return typed_array_copy("Int32Array", ids.data(), ids.size());
    });
  }

  val detokenize(const val& ids) const {
    return guarded([&] { return js_text(tokenizer().decode(ids_from_js(ids))); });
  }

  // options {logits, lastLogits, attention, causal, hiddenStates, classify} (booleans), lens (K, 0:
  // none), headMask (see head_mask_from_js), logitRows (positions, ForwardOptions::logit_rows; []
  // for none) -> {logits?: Float32Array(T*V, V with lastLogits, R*V with R logitRows), attention?:
  // Float32Array(L*H*T*T), hiddenStates?: Float32Array((L+1)*T*C), lens?: [layer][position] arrays of K {id,
  // probability}}; the experiments (engine.mjs checks them): saliency (boolean) with target (an id,
  // -1: the last position's argmax) -> saliency: Float32Array(T), target; neurons (K, 0: none) ->
  // [layer][position] arrays of K {index, value}; neuron ({layer, index} or null) ->
  // Float32Array(T). The page asks for attention only: all T rows of logits would cost T x V x C
  // multiply-adds it never looks at. causal false: bidirectional attention with the same weights
  // (ForwardOptions::causal). The lens covers every position (so the LM head runs on every row).
  // classify: the pass is Model::classify's (attention and headMask as above), and logits are a
  // classifier's over its labels at the last id; throws for a model without a classification head.
  val forward(const val& ids_js, const val& options) const {
    return guarded([&] {
      const bool with_logits = options["logits"].as<bool>(), with_attention = options["attention"].as<bool>();
      const bool last_only = options["lastLogits"].as<bool>();
      const bool with_states = options["hiddenStates"].as<bool>();
      const int lens_k = options["lens"].as<int>();
      const ModelConfig& c = model_.config();
      const auto ids = ids_from_js(ids_js);
      const auto mask = head_mask_from_js(options["headMask"], c);
      const auto rows = ids_from_js(options["logitRows"]);
      std::vector<float> attention, states;
      std::vector<TokenProbability> lens;
      TensorHook keep = [&](const NamedTensor& t) {
        if (std::string_view(t.name) == "attn_probs")
          attention.insert(attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
      };
      std::vector<float> logits;
      if (options["classify"].as<bool>()) {
        logits = model_.classify(ids, mask, with_attention ? &keep : nullptr);
      } else {
        KVCache cache = model_.new_cache();
        logits = model_.forward(ids, cache,
                                {.all_logits = (with_logits && !last_only && rows.empty()) || lens_k != 0,
                                 .logit_rows = rows,
                                 .hook = with_attention ? &keep : nullptr,
                                 .causal = options["causal"].as<bool>(),
                                 .head_mask = mask,
                                 .hidden_states = with_states ? &states : nullptr,
                                 .lens_k = lens_k,
                                 .lens = lens_k != 0 ? &lens : nullptr,
                                 .tokenizer_size = tokenizer_size()});
      }
      val out = val::object();
      const std::size_t V = c.vocab_size;
      if (with_logits && last_only)
        out.set("logits", typed_array_copy("Float32Array", logits.data() + logits.size() - V, V));
      else if (with_logits)
        out.set("logits", typed_array_copy("Float32Array", logits.data(), logits.size()));
      if (with_attention) out.set("attention", typed_array_copy("Float32Array", attention.data(), attention.size()));
      if (with_states) out.set("hiddenStates", typed_array_copy("Float32Array", states.data(), states.size()));
      if (lens_k != 0) {
        const std::size_t T = ids.size();
        val layers = val::array();
        for (int l = 0; l < c.n_layer; ++l) {
          val rows = val::array();
          for (std::size_t t = 0; t < T; ++t)
            rows.call<void>("push", top_tokens(lens.data() + (l * T + t) * lens_k, lens_k));
          layers.call<void>("push", rows);
        }
        out.set("lens", layers);
      }
      if (options["saliency"].as<bool>()) {   // target: the given id (>= 0), else the last position's argmax
        std::int32_t target = options["target"].as<int>();
        if (target < 0) {
          // the last position's logits: this pass's, unless it gave other rows or was not causal
          std::vector<float> own;
          if (!rows.empty() || !options["causal"].as<bool>()) {
            KVCache cache = model_.new_cache();
            own = model_.forward(ids, cache, {.tokenizer_size = tokenizer_size()});
          }
          const std::vector<float>& last = own.empty() ? logits : own;
          target = static_cast<std::int32_t>(std::max_element(last.end() - V, last.end()) - (last.end() - V));
        }
        const auto scores = saliency(model_, ids, target);
        out.set("saliency", typed_array_copy("Float32Array", scores.data(), scores.size()));
        out.set("target", target);
      }
      if (const int k = options["neurons"].as<int>(); k != 0)
        out.set("neurons", neurons_of(top_neurons(model_, ids, k), c.n_layer, static_cast<int>(ids.size()), k));
      if (const val n = options["neuron"]; !n.isNull()) {
        const auto values = neuron_activations(model_, ids, n["layer"].as<int>(), n["index"].as<int>());
        out.set("neuron", typed_array_copy("Float32Array", values.data(), values.size()));
      }
      return out;
    });
  }

  // [Float32Array(T_b*V), ...]: each sequence of the batch (a JS array of id arrays, checked by
  // engine.mjs) through Model::forward_batch, one pass for all of them.
  val forward_batch(const val& batch_js) const {
    return guarded([&] {
      std::vector<std::vector<std::int32_t>> batch;
      const unsigned n = batch_js["length"].as<unsigned>();
      for (unsigned b = 0; b < n; ++b) batch.push_back(ids_from_js(batch_js[b]));
      const auto logits = model_.forward_batch(batch, tokenizer_size());
      val out = val::array();
      for (const auto& l : logits) out.call<void>("push", typed_array_copy("Float32Array", l.data(), l.size()));
      return out;
    });
  }

  // The ids classify() reads for a text, as `glassbox train --task classify` makes them
  // (Tokenizer::encode_for_classifier): its tokens, then <|endoftext|> if the vocabulary has it,
  // cut to the context.
  val classifier_ids(const std::string& text) const {
    return guarded([&] {
      const auto ids = tokenizer().encode_for_classifier(text, model_.context());
      return typed_array_copy("Int32Array", ids.data(), ids.size());
    });
  }

  // What the parsed config says beyond config.json's own fields: {shape (shape_of), labels,
  // bidirectional, maskTokenId, generationConfig, specialTokenIds} (labels: id2label's names by id,
  // or LABEL_0.. from num_labels; [] for a language model; generationConfig: generation_config_of;
  // specialTokenIds: the tokenizer's special tokens, [] without one).
  val info() const {
    const ModelConfig& c = model_.config();
    val labels = val::array();
    for (const auto& name : c.labels) labels.call<void>("push", js_text(name));
    val out = val::object();
    out.set("shape", shape_of(c));
    out.set("contextLength", model_.context());
    out.set("labels", labels);
    out.set("bidirectional", c.bidirectional);
    out.set("maskTokenId", c.mask_token_id);
    out.set("generationConfig", generation_config_of(generation_));
    val specials = val::array();
    if (tokenizer_)
      for (const std::int32_t id : tokenizer_->special_ids()) specials.call<void>("push", id);
    out.set("specialTokenIds", specials);
    return out;
  }

  // generation_config.json as the engine read it, camel-cased: only the keys the file gives
  // ({temperature, topK, topP, repetitionPenalty, doSample, eosTokenIds}; {} without the file).
  static val generation_config_of(const GenerationConfig& g) {
    val out = val::object();
    if (g.temperature) out.set("temperature", *g.temperature);
    if (g.top_k) out.set("topK", *g.top_k);
    if (g.top_p) out.set("topP", *g.top_p);
    if (g.repetition_penalty) out.set("repetitionPenalty", *g.repetition_penalty);
    if (g.do_sample) out.set("doSample", *g.do_sample);
    if (g.eos_token_ids) {
      val ids = val::array();
      for (const std::int32_t id : *g.eos_token_ids) ids.call<void>("push", id);
      out.set("eosTokenIds", ids);
    }
    return out;
  }

  // Starts a generation (replacing any unfinished one). options: the JS API's names, checked and
  // given defaults by engine.mjs: {maxTokens, temperature, topK, topP, repetitionPenalty, seed,
  // attention, top, contextFull, lens (0: none), headMask, steer ({layer, coefficient, plus, minus},
  // plus and minus as ids; null: none)}; a sampling setting left undefined is
  // generation_config.json's, else glassbox's default (effective_generation), and the stop tokens
  // are the file's, else config.json's.
  void start(const val& prompt_ids, const val& options) {
    guarded([&] {
      stop();
      GenerationOverrides user;
      if (const val v = options["temperature"]; !v.isUndefined()) user.temperature = v.as<float>();
      if (const val v = options["topK"]; !v.isUndefined()) user.top_k = v.as<int>();
      if (const val v = options["topP"]; !v.isUndefined()) user.top_p = v.as<float>();
      if (const val v = options["repetitionPenalty"]; !v.isUndefined()) user.repetition_penalty = v.as<float>();
      const EffectiveGeneration chosen = effective_generation(generation_, user, model_.config().eos_token_ids);
      GenerateOptions o;
      o.max_tokens = options["maxTokens"].as<int>();
      o.sampling = chosen.sampling;
      o.sampling.seed = static_cast<std::uint64_t>(options["seed"].as<double>());
      o.eos_token_ids = chosen.eos_token_ids;
      o.attention = options["attention"].as<bool>();
      o.when_context_full = parse_when_context_full(options["contextFull"].as<std::string>());
      o.head_mask = head_mask_from_js(options["headMask"], model_.config());
      o.lens = options["lens"].as<int>();
      o.tokenizer_size = tokenizer_size();
      if (const val steer = options["steer"]; !steer.isNull()) {
        o.steer_layer = steer["layer"].as<int>();
        o.steer = steering_vector(model_, o.steer_layer, steer["coefficient"].as<float>(), ids_from_js(steer["plus"]),
                                  ids_from_js(steer["minus"]));
      }
      const int top = options["top"].as<int>();
      if (top < 0) throw InvalidArgument("top must be an integer >= 0, got " + std::to_string(top));
      top_ = top;
      generator_.emplace(model_, ids_from_js(prompt_ids), o);   // runs the prompt
      if (tokenizer_) decoder_.emplace(*tokenizer_);
      return 0;
    });
  }

  // One token: {id, position, windowStart, text, attention?, top?, lens?}, or {done: true, stopReason, text} at the end
  // (text then holds what the decoder still held back).
  val next() {
    return guarded([&] {
      if (!generator_) throw InvalidArgument("no generation is running");
      val out = val::object();
      const auto token = generator_->next();
      if (!token) {
        out.set("done", true);
        out.set("stopReason", std::string(stop_reason_name(*generator_->stop_reason())));
        out.set("text", js_text(decoder_ ? decoder_->finish() : std::string()));
        generator_.reset();
        return out;
      }
      out.set("id", token->id);
      out.set("position", token->position);
      out.set("windowStart", token->window_start);
      out.set("text", js_text(decoder_ ? decoder_->push(token->id) : std::string()));
      if (!token->attention.empty())
        out.set("attention", typed_array_copy("Float32Array", token->attention.data(), token->attention.size()));
      if (top_ > 0) {   // [{id, probability}], most probable first
        const auto top = most_probable(token->logits, top_);
        out.set("top", top_tokens(top.data(), static_cast<int>(top.size())));
      }
      if (!token->lens.empty()) {   // [layer] -> [{id, probability}]
        const int L = model_.config().n_layer, k = static_cast<int>(token->lens.size()) / L;
        val layers = val::array();
        for (int l = 0; l < L; ++l) layers.call<void>("push", top_tokens(token->lens.data() + std::size_t(l) * k, k));
        out.set("lens", layers);
      }
      return out;
    });
  }

  // Activation patching one layer at a time (glassbox::Patching; engine.mjs drives it, returning
  // to the event loop between layers): patch_start checks the arguments and runs the clean and
  // corrupted passes (replacing any unfinished run); what: the site names.
  void patch_start(const val& clean, const val& corrupted, int answer, int wrong, const val& what) {
    guarded([&] {
      patch_stop();
      std::vector<PatchSite> sites;
      const unsigned n = what["length"].as<unsigned>();
      for (unsigned i = 0; i < n; ++i) sites.push_back(parse_patch_site(what[i].as<std::string>()));
      patching_.emplace(model_, ids_from_js(clean), ids_from_js(corrupted), answer, wrong, sites);
      return 0;
    });
  }

  // The next layer of the next site: {site, layer, row: Float32Array(T, or n_head), done, total};
  // null once every one is done.
  val patch_step() {
    return guarded([&] {
      if (!patching_) throw InvalidArgument("no activation patching is running");
      if (patching_->done()) return val::null();
      const PatchProgress p = patching_->step();
      val out = val::object();
      out.set("site", std::string(patch_site_name(p.site)));
      out.set("layer", p.layer);
      out.set("row", typed_array_copy("Float32Array", p.row.data(), p.row.size()));
      out.set("done", p.done);
      out.set("total", p.total);
      return out;
    });
  }

  // {clean, corrupted (the raw metrics), layers, residPre?, attnOut?, mlpOut?, head?: Float32Array
  // (layers x positions, or layers x heads), the sites asked for}.
  val patch_result() const {
    return guarded([&] {
      if (!patching_) throw InvalidArgument("no activation patching is running");
      const PatchResult& r = patching_->result();
      val out = val::object();
      out.set("clean", r.clean);
      out.set("corrupted", r.corrupted);
      out.set("layers", r.layers);
      const std::pair<const char*, const std::vector<float>*> grids[] = {
          {"residPre", &r.resid_pre}, {"attnOut", &r.attn_out}, {"mlpOut", &r.mlp_out}, {"head", &r.head}};
      for (const auto& [name, grid] : grids)
        if (!grid->empty()) out.set(name, typed_array_copy("Float32Array", grid->data(), grid->size()));
      return out;
    });
  }

  // Frees a patching run's caches and tensors (engine.mjs calls it when the run ends, however).
  void patch_stop() { patching_.reset(); }

  // Direct logit attribution (glassbox::attribute) at the last position; wrong -1: none ->
  // {embed, posEmbed, layers, heads: Float32Array(layers x n_head), mlp: Float32Array(layers),
  // bias, total, residual}.
  val attribute(const val& ids, int answer, int wrong) const {
    return guarded([&] {
      const Attribution a = glassbox::attribute(model_, ids_from_js(ids), answer,
                                                wrong < 0 ? std::nullopt : std::optional<std::int32_t>(wrong));
      const std::vector<float> heads(a.heads.begin(), a.heads.end()), mlp(a.mlp.begin(), a.mlp.end());
      val out = val::object();
      out.set("embed", a.embed);
      out.set("posEmbed", a.pos_embed);
      out.set("layers", a.layers);
      out.set("heads", typed_array_copy("Float32Array", heads.data(), heads.size()));
      out.set("mlp", typed_array_copy("Float32Array", mlp.data(), mlp.size()));
      out.set("bias", a.bias);
      out.set("total", a.total);
      out.set("residual", a.residual);
      return out;
    });
  }

  // Ends the generation, if one runs, and frees its cache and decoder at once (engine.mjs calls it
  // when a generation is aborted or its loop is left early).
  void stop() {
    generator_.reset();
    decoder_.reset();
  }

 private:
  const Tokenizer& tokenizer() const {
    if (!tokenizer_)
      throw InvalidArgument("this model was loaded without tokenizer.json or vocab.json and merges.txt: no tokenizer");
    return *tokenizer_;
  }

  // The ids with a token (the rest of a padded vocabulary get -inf logits, never sampled); 0:
  // every id, for a model loaded without a tokenizer.
  int tokenizer_size() const { return tokenizer_ ? tokenizer_->vocab_size() : 0; }

  Model model_;
  std::optional<Tokenizer> tokenizer_;
  GenerationConfig generation_;          // generation_config.json's defaults (empty: none)
  int top_ = 0;                          // most probable next tokens to report per step
  std::optional<Generator> generator_;   // refers to model_: declared after it
  std::optional<StreamingDecoder> decoder_;
  std::optional<Patching> patching_;   // refers to model_ too
};

}   // namespace glassbox::js
