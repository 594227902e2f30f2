// config.json of llama, mistral, qwen2, qwen3, gpt_neox and gpt_neo: one table row per model type
// (its key names and transformers' defaults, from configuration_<type>.py), read into the
// features of ModelConfig (config.h). Both forms of the rotary settings are read: the classic
// hub keys (rope_theta, rope_scaling, rotary_pct, rotary_emb_base) and transformers v5's
// (rope_parameters, partial_rotary_factor).
#include "io/config_decoders.h"

#include <array>
#include <cfloat>
#include <cmath>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "io/config_fields.h"

namespace glassbox {
namespace {

using nlohmann::json;
using namespace config_fields;

// How a type's layers get their attention windows.
enum class Windows {
  None,                  // every layer sees all earlier keys
  Every,                 // mistral: sliding_window (default 4096; null: none) on every layer
  FromMaxWindowLayers,   // qwen2/qwen3: with use_sliding_window, sliding_window on the layers
                         // layer_types marks "sliding_attention", or else on layers >= max_window_layers
  AttentionTypes,        // gpt_neo: attention_types [[["global", "local"], n], ...], window_size
};

// One model type: its keys and transformers' defaults.
struct DecoderType {
  std::string_view model_type;
  Architecture architecture;
  const char* class_name;   // "architectures", as to_json writes it
  const char* layers_key;
  const char* heads_key;
  const char* eps_key;
  const char* act_key;
  int vocab, positions, width, layers, heads;
  int kv_heads;          // num_key_value_heads when absent; 0: the type has no such key (= heads)
  int inner;             // intermediate_size when absent or null; 0: 4 * width
  int head_dim;          // head_dim when absent; 0: width / heads
  bool reads_head_dim;   // the type reads a "head_dim" key
  double eps;
  const char* act;
  Norm norm;
  Mlp mlp;
  PositionEncoding positions_kind;
  double rotary_fraction;   // partial_rotary_factor when the config gives none
  bool tie;
  const char* attention_bias_key;   // q/k/v and output biases together; nullptr: fixed as below
  bool qkv_bias, out_bias;
  const char* mlp_bias_key;   // nullptr: fixed as below
  bool mlp_bias;
  bool qk_norm;
  bool scale_scores;        // scores divided by sqrt(head_dim) (gpt_neo: not)
  bool parallel_residual;   // reads use_parallel_residual (gpt_neox, default true)
  Windows windows;
  int bos, eos;   // -1: none
};

// clang-format off
constexpr std::array<DecoderType, 6> kTypes = {{
  {"llama", Architecture::Llama, "LlamaForCausalLM", "num_hidden_layers", "num_attention_heads", "rms_norm_eps",
   "hidden_act", 32000, 2048, 4096, 32, 32, -1, 11008, 0, true, 1e-6, "silu", Norm::RMSNorm, Mlp::Gated,
   PositionEncoding::Rotary, 1.0, false, "attention_bias", false, false, "mlp_bias", false, false, true, false,
   Windows::None, 1, 2},
  {"mistral", Architecture::Mistral, "MistralForCausalLM", "num_hidden_layers", "num_attention_heads", "rms_norm_eps",
   "hidden_act", 32000, 4096 * 32, 4096, 32, 32, 8, 14336, 0, true, 1e-6, "silu", Norm::RMSNorm, Mlp::Gated,
   PositionEncoding::Rotary, 1.0, false, nullptr, false, false, nullptr, false, false, true, false,
   Windows::Every, 1, 2},
  {"qwen2", Architecture::Qwen2, "Qwen2ForCausalLM", "num_hidden_layers", "num_attention_heads", "rms_norm_eps",
   "hidden_act", 151936, 32768, 4096, 32, 32, 32, 22016, 0, true, 1e-6, "silu", Norm::RMSNorm, Mlp::Gated,
   PositionEncoding::Rotary, 1.0, false, nullptr, true, false, nullptr, false, false, true, false,
   Windows::FromMaxWindowLayers, -1, -1},
  {"qwen3", Architecture::Qwen3, "Qwen3ForCausalLM", "num_hidden_layers", "num_attention_heads", "rms_norm_eps",
   "hidden_act", 151936, 32768, 4096, 32, 32, 32, 22016, 128, true, 1e-6, "silu", Norm::RMSNorm, Mlp::Gated,
   PositionEncoding::Rotary, 1.0, false, "attention_bias", false, false, nullptr, false, true, true, false,
   Windows::FromMaxWindowLayers, -1, -1},
  {"gpt_neox", Architecture::GPTNeoX, "GPTNeoXForCausalLM", "num_hidden_layers", "num_attention_heads", "layer_norm_eps",
   "hidden_act", 50432, 2048, 6144, 44, 64, 0, 24576, 0, false, 1e-5, "gelu", Norm::LayerNorm, Mlp::Plain,
   PositionEncoding::Rotary, 0.25, false, "attention_bias", true, true, nullptr, true, false, true, true,
   Windows::None, 0, 2},
  {"gpt_neo", Architecture::GPTNeo, "GPTNeoForCausalLM", "num_layers", "num_heads", "layer_norm_epsilon",
   "activation_function", 50257, 2048, 2048, 24, 16, 0, 0, 0, false, 1e-5, "gelu_new", Norm::LayerNorm, Mlp::Plain,
   PositionEncoding::Learned, 1.0, true, nullptr, false, true, nullptr, true, false, false, false,
   Windows::AttentionTypes, 50256, 50256},
}};
// clang-format on

const DecoderType& type_of(Architecture arch) {
  for (const auto& t : kTypes)
    if (t.architecture == arch) return t;
  throw InvalidArgument("not a decoder type");   // unreachable: config.cpp hands only these here
}

bool is_null(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_null();
}

// A number > 0 (theta, factors): number_field's bounds are inclusive. At most FLT_MAX, since the
// frequencies are computed in float.
double positive_field(const json& j, const char* key, double fallback, const std::string& source) {
  const double v = number_field(j, key, fallback, 0.0, FLT_MAX, source);
  if (!(v > 0)) throw ModelFormatError(source, std::string("\"") + key + "\" must be a number > 0");
  return v;
}

// A number > 0 that `params` (rope_scaling / rope_parameters) must give; v5 may keep it at the top.
double required_rope_number(const json& params, const json& top, const char* key, const char* params_key,
                            const std::string& source) {
  const double v = number_field(params, key, number_field(top, key, NAN, 0.0, FLT_MAX, source), 0.0, FLT_MAX, source);
  if (!(v > 0))
    throw ModelFormatError(source, std::string("\"") + params_key + "\" needs \"" + key + "\", a number > 0");
  return v;
}

// rope_parameters (v5) or rope_scaling (classic), with rope_theta and partial_rotary_factor
// where either form keeps them.
void read_rotary(const json& j, const DecoderType& t, ModelConfig& c, const std::string& source) {
  const char* params_key = "rope_parameters";
  json params = json::object();
  if (auto it = j.find("rope_parameters"); it != j.end() && !it->is_null()) {
    params = *it;
  } else if (auto sc = j.find("rope_scaling"); sc != j.end() && !sc->is_null()) {
    params = *sc;
    params_key = "rope_scaling";
  }
  if (!params.is_object()) throw ModelFormatError(source, std::string("\"") + params_key + "\" must be an object");
  // v5 nests the parameters per layer type where layers differ: glassbox runs one set.
  if (auto full = params.find("full_attention"); full != params.end() && full->is_object()) {
    if (auto sliding = params.find("sliding_attention"); sliding != params.end() && *sliding != *full)
      throw ModelFormatError(source, std::string("\"") + params_key +
                                         "\" differs between full_attention and sliding_attention layers; "
                                         "glassbox runs one set of rotary parameters");
    json flat = *full;
    params = flat;
  }
  const bool neox = t.architecture == Architecture::GPTNeoX;
  const double top_theta =
      positive_field(j, "rope_theta", neox ? positive_field(j, "rotary_emb_base", 10000.0, source) : 10000.0, source);
  c.rotary.theta = positive_field(params, "rope_theta", top_theta, source);
  const double top_fraction = number_field(
      j, "partial_rotary_factor",
      neox ? number_field(j, "rotary_pct", t.rotary_fraction, 0.0, 1.0, source) : t.rotary_fraction, 0.0, 1.0, source);
  c.rotary.fraction = number_field(params, "partial_rotary_factor", top_fraction, 0.0, 1.0, source);

  const std::string type = string_field(params, "rope_type", string_field(params, "type", "default", source), source);
  if (type == "default") {
    c.rotary.scaling = RopeScaling::Default;
  } else if (type == "linear") {
    c.rotary.scaling = RopeScaling::Linear;
    c.rotary.factor = required_rope_number(params, json::object(), "factor", params_key, source);
  } else if (type == "llama3") {
    c.rotary.scaling = RopeScaling::Llama3;
    c.rotary.factor = required_rope_number(params, json::object(), "factor", params_key, source);
    c.rotary.low_freq_factor = required_rope_number(params, json::object(), "low_freq_factor", params_key, source);
    c.rotary.high_freq_factor = required_rope_number(params, json::object(), "high_freq_factor", params_key, source);
    if (!(c.rotary.high_freq_factor > c.rotary.low_freq_factor))
      throw ModelFormatError(source,
                             std::string("\"") + params_key + "\": llama3 needs high_freq_factor > low_freq_factor");
    const double original = required_rope_number(params, j, "original_max_position_embeddings", params_key, source);
    if (original != std::floor(original) || original > (1 << 24))
      throw ModelFormatError(source, std::string("\"") + params_key +
                                         "\": original_max_position_embeddings must be a whole number of positions "
                                         "up to 16777216");
    c.rotary.original_max_position_embeddings = static_cast<int>(original);
  } else {
    throw ModelFormatError(source, "rope type " + quote_text(type) + " (\"" + params_key +
                                       "\") is not supported: glassbox runs \"default\", \"linear\" and \"llama3\"");
  }

  const int rot = c.rotary_dim();
  if (rot < 2 || rot % 2 != 0)
    throw ModelFormatError(source, "the rotary part of each head, int(head_dim " + std::to_string(c.head_dim()) +
                                       " x partial_rotary_factor " + json(c.rotary.fraction).dump() +
                                       ") = " + std::to_string(rot) + ", must be even and at least 2");
}

// A window size: an integer >= 1, or 0 for null (no window).
int window_field(const json& j, const char* key, int fallback, const std::string& source) {
  return is_null(j, key) ? 0 : int_field(j, key, fallback, 1, 1 << 30, source);
}

void read_windows(const json& j, const DecoderType& t, ModelConfig& c, const std::string& source) {
  std::vector<int>& w = c.attention_windows;
  w.assign(c.n_layer, 0);
  switch (t.windows) {
    case Windows::None:
      break;
    case Windows::Every:
      w.assign(c.n_layer, window_field(j, "sliding_window", 4096, source));
      break;
    case Windows::FromMaxWindowLayers: {
      // configuration_qwen2.py: sliding_window = sliding_window if use_sliding_window else None
      const int window =
          bool_field(j, "use_sliding_window", false, source) ? window_field(j, "sliding_window", 4096, source) : 0;
      auto types = j.find("layer_types");
      if (types != j.end() && !types->is_null()) {
        if (!types->is_array() || types->size() != std::size_t(c.n_layer))
          throw ModelFormatError(source, "\"layer_types\" must list " + std::to_string(c.n_layer) +
                                             " layers, each \"full_attention\" or \"sliding_attention\"");
        for (int l = 0; l < c.n_layer; ++l) {
          const json& kind = (*types)[l];
          if (kind != "full_attention" && kind != "sliding_attention")
            throw ModelFormatError(source, "\"layer_types\"[" + std::to_string(l) + "] is " + quote_text(kind.dump()) +
                                               ": expected \"full_attention\" or \"sliding_attention\"");
          if (kind == "sliding_attention") w[l] = window;
        }
      } else {
        const int first = int_field(j, "max_window_layers", 28, 0, 1 << 30, source);
        for (int l = first; l < c.n_layer; ++l) w[l] = window;
      }
      break;
    }
    case Windows::AttentionTypes: {
      // configuration_gpt_neo.py expand_attention_types_params: [[["global", "local"], 12]] is
      // global, local, global, ... 24 layers.
      const int window = int_field(j, "window_size", 256, 1, 1 << 30, source);
      json types = json::parse(R"([[["global", "local"], 12]])");
      if (auto it = j.find("attention_types"); it != j.end() && !it->is_null()) types = *it;
      const std::string form = "\"attention_types\" must be a list of [[\"global\" or \"local\", ...], count]";
      if (!types.is_array()) throw ModelFormatError(source, form);
      std::vector<int> expanded;
      for (const json& item : types) {
        if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer() ||
            item[1].get<std::int64_t>() < 0 || item[1].get<std::int64_t>() > 65536)
          throw ModelFormatError(source, form);
        for (std::int64_t r = 0; r < item[1].get<std::int64_t>(); ++r)
          for (const json& kind : item[0]) {
            if (kind != "global" && kind != "local")
              throw ModelFormatError(source, form + ", got " + quote_text(kind.dump()));
            if (expanded.size() > 65536) throw ModelFormatError(source, form);
            expanded.push_back(kind == "local" ? window : 0);
          }
      }
      if (expanded.size() != std::size_t(c.n_layer))
        throw ModelFormatError(source, "\"attention_types\" describes " + std::to_string(expanded.size()) +
                                           " layers, but num_layers is " + std::to_string(c.n_layer));
      w = expanded;
      break;
    }
  }
  bool any = false;
  for (int x : w) any |= x > 0;
  if (!any) w.clear();   // one form for "no windows": empty
}

std::string activation_key_value(Activation a) {
  switch (a) {
    case Activation::GeluErf:
      return "gelu";
    case Activation::GeluTanh:
      return "gelu_new";
    case Activation::Relu:
      return "relu";
    case Activation::Silu:
      return "silu";
  }
  return "?";
}

}   // namespace

std::optional<Architecture> decoder_architecture(std::string_view model_type) {
  for (const auto& t : kTypes)
    if (t.model_type == model_type) return t.architecture;
  return std::nullopt;
}

ModelConfig parse_decoder(const json& j, Architecture arch, const std::string& source) {
  const DecoderType& t = type_of(arch);
  ModelConfig c;
  c.architecture = arch;
  c.vocab_size = int_field(j, "vocab_size", t.vocab, 1, 4'000'000, source);
  c.n_positions = int_field(j, "max_position_embeddings", t.positions, 1, 1 << 24, source);
  c.n_embd = int_field(j, "hidden_size", t.width, 1, 65'536, source);
  c.n_layer = int_field(j, t.layers_key, t.layers, 1, 4'096, source);
  c.n_head = int_field(j, t.heads_key, t.heads, 1, 65'536, source);

  // Key/value heads: a null num_key_value_heads means as many as query heads.
  c.n_kv_head = c.n_head;
  if (t.kv_heads != 0 && !is_null(j, "num_key_value_heads"))
    c.n_kv_head = int_field(j, "num_key_value_heads", t.kv_heads < 0 ? c.n_head : t.kv_heads, 1, 65'536, source);
  if (c.n_kv_head > c.n_head || c.n_head % c.n_kv_head != 0)
    throw ModelFormatError(source, "num_attention_heads " + std::to_string(c.n_head) +
                                       " is not a multiple of num_key_value_heads " + std::to_string(c.n_kv_head) +
                                       ": each key/value head serves a whole group of query heads");

  // head_dim: the config's where the type reads one, else its default, else width / heads.
  const bool given = t.reads_head_dim && j.contains("head_dim") && !j["head_dim"].is_null();
  if (given) {
    c.n_head_dim = int_field(j, "head_dim", 0, 1, 65'536, source);
  } else if (t.head_dim > 0) {
    c.n_head_dim = t.head_dim;
  } else {
    if (c.n_embd % c.n_head != 0)
      throw ModelFormatError(source, "hidden_size " + std::to_string(c.n_embd) + " is not divisible by " + t.heads_key +
                                         " " + std::to_string(c.n_head) +
                                         (t.reads_head_dim ? ", and the config gives no head_dim" : ""));
    c.n_head_dim = c.n_embd / c.n_head;
    // The type splits hidden_size into its heads: a head_dim that says otherwise contradicts it.
    if (!t.reads_head_dim && j.contains("head_dim") && !j["head_dim"].is_null() &&
        int_field(j, "head_dim", 0, 1, 65'536, source) != c.n_head_dim)
      throw ModelFormatError(source, "head_dim " + j["head_dim"].dump() + " x " + t.heads_key + " " +
                                         std::to_string(c.n_head) + " is not hidden_size " + std::to_string(c.n_embd) +
                                         ": " + std::string(t.model_type) + " splits hidden_size into its heads");
  }
  if (std::int64_t(c.n_head) * c.n_head_dim > 1'000'000)
    throw ModelFormatError(source, "head_dim " + std::to_string(c.n_head_dim) + " x " + t.heads_key + " " +
                                       std::to_string(c.n_head) + " is more than 1000000");

  c.n_inner = int_field(j, "intermediate_size", t.inner > 0 ? t.inner : 4 * c.n_embd, 1, 1'000'000, source);
  c.layer_norm_epsilon = number_field(j, t.eps_key, t.eps, 0.0, FLT_MAX, source);
  // hidden_act / activation_function: transformers' ACT2FN names, as gpt2 reads them.
  c.activation = activation_of(Architecture::GPT2, string_field(j, t.act_key, t.act, source), source);
  c.norm = t.norm;
  c.mlp = t.mlp;
  c.position_encoding = t.positions_kind;
  if (c.position_encoding == PositionEncoding::Rotary) read_rotary(j, t, c, source);

  const bool attention_bias = t.attention_bias_key ? bool_field(j, t.attention_bias_key, t.qkv_bias, source) : false;
  c.qkv_bias = t.attention_bias_key ? attention_bias : t.qkv_bias;
  c.attn_out_bias = t.attention_bias_key ? attention_bias : t.out_bias;
  c.mlp_bias = t.mlp_bias_key ? bool_field(j, t.mlp_bias_key, t.mlp_bias, source) : t.mlp_bias;
  c.qk_norm = t.qk_norm;
  c.scale_attn_weights = t.scale_scores;
  c.parallel_residual = t.parallel_residual && bool_field(j, "use_parallel_residual", true, source);
  c.tie_word_embeddings = bool_field(j, "tie_word_embeddings", t.tie, source);
  read_windows(j, t, c, source);

  // Token ids: the type's defaults where they fit the vocabulary; an explicit null is none.
  const int V = c.vocab_size;
  c.bos_token_id =
      is_null(j, "bos_token_id") ? -1 : int_field(j, "bos_token_id", t.bos < V ? t.bos : -1, 0, V - 1, source);
  std::vector<std::int32_t> eos;
  if (t.eos >= 0 && t.eos < V && !is_null(j, "eos_token_id")) eos = {t.eos};
  c.eos_token_ids = eos_ids(j, eos, V, source);
  return c;
}

std::string decoder_to_json(const ModelConfig& c) {
  const DecoderType& t = type_of(c.architecture);
  json j;
  j["model_type"] = std::string(t.model_type);
  j["architectures"] = {t.class_name};
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.n_positions;
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.n_inner;
  j[t.layers_key] = c.n_layer;
  j[t.heads_key] = c.n_head;
  if (t.kv_heads != 0) j["num_key_value_heads"] = c.kv_heads();
  if (t.reads_head_dim) j["head_dim"] = c.head_dim();
  j[t.eps_key] = c.layer_norm_epsilon;
  j[t.act_key] = activation_key_value(c.activation);
  if (c.position_encoding == PositionEncoding::Rotary) {
    const bool neox = c.architecture == Architecture::GPTNeoX;
    j[neox ? "rotary_emb_base" : "rope_theta"] = c.rotary.theta;
    if (neox)
      j["rotary_pct"] = c.rotary.fraction;
    else if (c.rotary.fraction != 1.0)
      j["partial_rotary_factor"] = c.rotary.fraction;
    switch (c.rotary.scaling) {
      case RopeScaling::Default:
        j["rope_scaling"] = nullptr;
        break;
      case RopeScaling::Linear:
        j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", c.rotary.factor}};
        break;
      case RopeScaling::Llama3:
        j["rope_scaling"] = {{"rope_type", "llama3"},
                             {"factor", c.rotary.factor},
                             {"low_freq_factor", c.rotary.low_freq_factor},
                             {"high_freq_factor", c.rotary.high_freq_factor},
                             {"original_max_position_embeddings", c.rotary.original_max_position_embeddings}};
        break;
    }
  }
  if (t.attention_bias_key) j[t.attention_bias_key] = c.qkv_bias;
  if (t.mlp_bias_key) j[t.mlp_bias_key] = c.mlp_bias;
  if (t.parallel_residual) j["use_parallel_residual"] = c.parallel_residual;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  switch (t.windows) {
    case Windows::None:
      break;
    case Windows::Every:
      if (c.attention_windows.empty())
        j["sliding_window"] = nullptr;
      else
        j["sliding_window"] = c.attention_windows[0];
      break;
    case Windows::FromMaxWindowLayers: {
      int window = 0;
      json types = json::array();
      for (int l = 0; l < c.n_layer; ++l) {
        window = std::max(window, c.attention_window(l));
        types.push_back(c.attention_window(l) > 0 ? "sliding_attention" : "full_attention");
      }
      j["use_sliding_window"] = window > 0;
      j["sliding_window"] = window > 0 ? json(window) : json(nullptr);
      j["layer_types"] = types;
      break;
    }
    case Windows::AttentionTypes: {
      int window = 256;
      json types = json::array();
      for (int l = 0; l < c.n_layer; ++l) {
        if (c.attention_window(l) > 0) window = c.attention_window(l);
        types.push_back(json::array({json::array({c.attention_window(l) > 0 ? "local" : "global"}), 1}));
      }
      j["attention_types"] = types;
      j["window_size"] = window;
      break;
    }
  }
  j["bos_token_id"] = c.bos_token_id >= 0 ? json(c.bos_token_id) : json(nullptr);
  if (c.eos_token_ids.size() == 1)
    j["eos_token_id"] = c.eos_token_ids[0];
  else if (c.eos_token_ids.empty())
    j["eos_token_id"] = nullptr;
  else
    j["eos_token_id"] = c.eos_token_ids;
  // What the type's config.json cannot say (a bias it never has, windows of different sizes,
  // a classifier) would be lost: refuse rather than write another model.
  if (parse_decoder(j, c.architecture, "config.json") != c)
    throw InvalidArgument("this " + std::string(t.model_type) + " config has features its config.json cannot express");
  return j.dump(2) + "\n";
}

int ModelConfig::rotary_dim() const {
  return static_cast<int>(head_dim() * rotary.fraction);   // int(head_dim * partial_rotary_factor)
}

int ModelConfig::attention_window(int layer) const {
  return layer >= 0 && std::size_t(layer) < attention_windows.size() ? attention_windows[layer] : 0;
}

}   // namespace glassbox
