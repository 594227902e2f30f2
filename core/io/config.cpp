#include "glassbox/config.h"

#include <cfloat>
#include <cmath>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "io/config_decoders.h"
#include "io/config_fields.h"
#include "io/mapped_file.h"

namespace glassbox {

namespace config_fields {

using nlohmann::json;

int int_field(const json& j, const char* key, int fallback, int lo, int hi, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) throw ModelFormatError(source, std::string("\"") + key + "\" must be an integer");
  // Compare as the JSON number it is: a huge unsigned value must not wrap to a small signed one.
  const bool in_range = it->is_number_unsigned() ? it->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                                                       static_cast<std::int64_t>(it->get<std::uint64_t>()) >= lo
                                                 : it->get<std::int64_t>() >= lo && it->get<std::int64_t>() <= hi;
  if (!in_range)
    throw ModelFormatError(source, std::string("\"") + key + "\" is " + it->dump() + ", outside [" +
                                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(it->get<std::int64_t>());
}

bool bool_field(const json& j, const char* key, bool fallback, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw ModelFormatError(source, std::string("\"") + key + "\" must be true or false");
  return it->get<bool>();
}

Activation activation_of(Architecture arch, const std::string& name, const std::string& source) {
  if (name == "relu") return Activation::Relu;
  if (name == "silu" || name == "swish") return Activation::Silu;
  if (arch == Architecture::OpenAIGPT) {
    // modeling_openai.py: ACT_FNS = {"relu": ..., "silu": ..., "gelu": gelu_new, "swish": ...}
    if (name == "gelu") return Activation::GeluTanh;
  } else {
    // activations.py: "gelu" is the exact erf form; the others are the tanh approximation.
    if (name == "gelu") return Activation::GeluErf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GeluTanh;
  }
  throw ModelFormatError(source, "unsupported activation " + quote_text(name));
}

double number_field(const json& j, const char* key, double fallback, double lo, double hi, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number() || !(it->get<double>() >= lo && it->get<double>() <= hi))
    throw ModelFormatError(source, std::string("\"") + key + "\" must be a number from " + json(lo).dump() + " to " +
                                       json(hi).dump() + ", got " + quote_text(it->dump()));
  return it->get<double>();
}

std::string string_field(const json& j, const char* key, const std::string& fallback, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw ModelFormatError(source, std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

std::vector<std::int32_t> eos_ids(const json& j, std::vector<std::int32_t> fallback, int vocab_size,
                                  const std::string& source) {
  auto eos = j.find("eos_token_id");
  if (eos == j.end() || eos->is_null()) return fallback;
  std::vector<std::int32_t> out;
  const json ids = eos->is_array() ? *eos : json::array({*eos});
  for (const auto& id : ids)
    out.push_back(int_field(json{{"eos_token_id", id}}, "eos_token_id", 0, 0, vocab_size - 1, source));
  return out;
}

}   // namespace config_fields

namespace {

using nlohmann::json;
using namespace config_fields;

// "gpt2", "openai-gpt", "llama", ... quoted, for messages.
std::string supported_list() {
  std::string out;
  const auto& types = supported_model_types();
  for (std::size_t i = 0; i < types.size(); ++i)
    out += (i == 0 ? "" : i + 1 == types.size() ? " and " : ", ") + quote_text(types[i]);
  return out;
}

// gpt2 / openai-gpt, or the decoder type config_decoders.cpp reads.
Architecture architecture_of(const json& j, const std::string& source) {
  std::string type;
  if (auto it = j.find("model_type"); it != j.end() && it->is_string()) {
    type = it->get<std::string>();
  } else if (auto arch = j.find("architectures");
             arch != j.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
    // Old configs name only the class: GPT2LMHeadModel, OpenAIGPTLMHeadModel, ...
    const auto cls = (*arch)[0].get<std::string>();
    if (cls.rfind("GPT2", 0) == 0)
      type = "gpt2";
    else if (cls.rfind("OpenAIGPT", 0) == 0)
      type = "openai-gpt";
    else
      type = cls;
  } else {
    throw ModelFormatError(source, "no \"model_type\": expected one of " + supported_list());
  }
  if (type == "gpt2") return Architecture::GPT2;
  if (type == "openai-gpt") return Architecture::OpenAIGPT;
  if (auto decoder = decoder_architecture(type)) return *decoder;
  throw ModelFormatError(source,
                         "unknown architecture " + quote_text(type) + ": glassbox runs model_type " + supported_list());
}

// The label names of a classifier ("architectures": [...ForSequenceClassification]), by id:
// id2label {"0": name, ...} with ids 0..n-1, or LABEL_0.. for num_labels alone (Hugging Face's
// defaults). Any other model has none, whatever id2label says: every Hugging Face config carries
// the default {"0": "LABEL_0", "1": "LABEL_1"}.
std::vector<std::string> labels_of(const json& j, const std::string& source) {
  auto arch = j.find("architectures");
  const bool classifier = arch != j.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string() &&
                          (*arch)[0].get<std::string>().ends_with("ForSequenceClassification");
  if (!classifier) return {};
  std::vector<std::string> labels;
  auto id2label = j.find("id2label");
  if (id2label != j.end() && !id2label->is_null()) {
    if (!id2label->is_object() || id2label->empty() || id2label->size() > 100'000)
      throw ModelFormatError(source, "\"id2label\" must be an object of 1 to 100000 labels, {\"0\": \"name\", ...}");
    labels.resize(id2label->size());
    std::vector<bool> seen(labels.size());
    for (const auto& [key, name] : id2label->items()) {
      std::size_t id = labels.size();
      if (!key.empty() && key.size() < 7 && key.find_first_not_of("0123456789") == std::string::npos)
        id = std::stoul(key);
      if (id >= labels.size() || seen[id] || !name.is_string())
        throw ModelFormatError(
            source, "\"id2label\" must map the ids 0.." + std::to_string(labels.size() - 1) +
                        " to names, each once; got " + quote_text(key) + ": " +
                        (name.is_string() ? quote_text(name.get<std::string>()) : std::string(name.type_name())));
      seen[id] = true;
      labels[id] = name.get<std::string>();
    }
    for (std::size_t i = 0; i < labels.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (labels[i] == labels[k])
          throw ModelFormatError(source, "\"id2label\" names " + quote_text(labels[i]) + " twice (ids " +
                                             std::to_string(k) + " and " + std::to_string(i) + ")");
  } else {
    const int n = int_field(j, "num_labels", 2, 1, 100'000, source);
    for (int i = 0; i < n; ++i) labels.push_back("LABEL_" + std::to_string(i));
  }
  return labels;
}

}   // namespace

const std::vector<std::string_view>& supported_model_types() {
  static const std::vector<std::string_view> types = {"gpt2",  "openai-gpt", "llama",    "mistral",
                                                      "qwen2", "qwen3",      "gpt_neox", "gpt_neo"};
  return types;
}

std::string_view ModelConfig::architecture_name() const {
  return supported_model_types()[static_cast<std::size_t>(architecture)];   // the enum's order
}

std::string_view activation_name(Activation activation) {
  switch (activation) {
    case Activation::GeluTanh:
      return "gelu (tanh approximation)";
    case Activation::GeluErf:
      return "gelu (exact erf)";
    case Activation::Relu:
      return "relu";
    case Activation::Silu:
      return "silu";
  }
  return "?";
}

ModelConfig ModelConfig::load(const std::filesystem::path& path) { return parse(read_file(path), path.string()); }

ModelConfig ModelConfig::parse(std::string_view json_text, const std::string& source) {
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {
    throw ModelFormatError(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ModelFormatError(source, "not a JSON object");

  ModelConfig c;
  c.architecture = architecture_of(j, source);
  if (c.architecture != Architecture::GPT2 && c.architecture != Architecture::OpenAIGPT)
    return parse_decoder(j, c.architecture, source);
  const bool gpt2 = c.architecture == Architecture::GPT2;
  // Limits keep every tensor size below 2^31 elements per dimension product we index with int64.
  c.vocab_size = int_field(j, "vocab_size", gpt2 ? 50257 : 40478, 1, 4'000'000, source);
  c.n_positions = int_field(j, "n_positions", gpt2 ? 1024 : 512, 1, 1'000'000, source);
  c.n_embd = int_field(j, "n_embd", 768, 1, 65'536, source);
  c.n_layer = int_field(j, "n_layer", 12, 1, 4'096, source);
  c.n_head = int_field(j, "n_head", 12, 1, 65'536, source);
  // openai-gpt's MLP is always 4 * n_embd (OpenAIGPTConfig has no n_inner).
  c.n_inner = gpt2 ? int_field(j, "n_inner", 4 * c.n_embd, 1, 1'000'000, source) : 4 * c.n_embd;
  if (c.n_embd % c.n_head != 0)
    throw ModelFormatError(
        source, "n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " + std::to_string(c.n_head));

  if (auto it = j.find("position_encoding"); it != j.end() && !it->is_null()) {
    if (*it == "sinusoidal")
      c.position_encoding = PositionEncoding::Sinusoidal;
    else if (*it != "learned")
      throw ModelFormatError(source,
                             "\"position_encoding\" must be \"learned\" or \"sinusoidal\", got " +
                                 (it->is_string() ? quote_text(it->get<std::string>()) : std::string(it->type_name())));
  }

  if (auto it = j.find("layer_norm_epsilon"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= FLT_MAX))
      throw ModelFormatError(source, "\"layer_norm_epsilon\" must be a number from 0 to FLT_MAX");
    c.layer_norm_epsilon = it->get<double>();
  }

  const char* act_key = gpt2 ? "activation_function" : "afn";
  std::string act = gpt2 ? "gelu_new" : "gelu";
  if (auto it = j.find(act_key); it != j.end() && !it->is_null()) {
    if (!it->is_string()) throw ModelFormatError(source, std::string("\"") + act_key + "\" must be a string");
    act = it->get<std::string>();
  }
  c.activation = activation_of(c.architecture, act, source);

  if (gpt2) {
    c.scale_attn_weights = bool_field(j, "scale_attn_weights", true, source);
    c.scale_attn_by_inverse_layer_idx = bool_field(j, "scale_attn_by_inverse_layer_idx", false, source);
    c.add_cross_attention = bool_field(j, "add_cross_attention", false, source);
  }
  if (!bool_field(j, "tie_word_embeddings", true, source))
    throw ModelFormatError(source,
                           "\"tie_word_embeddings\": false is not supported: the LM head is the token embedding");

  c.bidirectional = bool_field(j, "bidirectional", false, source);
  if (auto it = j.find("mask_token_id"); it != j.end() && !it->is_null())
    c.mask_token_id = int_field(j, "mask_token_id", -1, 0, c.vocab_size - 1, source);
  c.labels = labels_of(j, source);

  // GPT2Config defaults eos_token_id to 50256 (<|endoftext|>); a list means any of them ends the text.
  c.eos_token_ids =
      eos_ids(j, gpt2 && c.vocab_size > 50256 ? std::vector<std::int32_t>{50256} : std::vector<std::int32_t>{},
              c.vocab_size, source);
  return c;
}

std::string ModelConfig::to_json() const {
  if (architecture != Architecture::GPT2 && architecture != Architecture::OpenAIGPT) return decoder_to_json(*this);
  const bool gpt2 = architecture == Architecture::GPT2;
  json j;
  j["model_type"] = gpt2 ? "gpt2" : "openai-gpt";
  const bool classifier = !labels.empty();
  j["architectures"] = {std::string(gpt2 ? "GPT2" : "OpenAIGPT") +
                        (classifier ? "ForSequenceClassification" : "LMHeadModel")};
  j["vocab_size"] = vocab_size;
  j["n_positions"] = n_positions;
  j["n_ctx"] = n_positions;   // older Hugging Face versions read the context length from here
  if (position_encoding == PositionEncoding::Sinusoidal) j["position_encoding"] = "sinusoidal";
  j["n_embd"] = n_embd;
  j["n_layer"] = n_layer;
  j["n_head"] = n_head;
  j["layer_norm_epsilon"] = layer_norm_epsilon;
  std::string act;
  switch (activation) {
    case Activation::GeluTanh:
      act = gpt2 ? "gelu_new" : "gelu";
      break;
    case Activation::GeluErf:
      if (!gpt2) throw InvalidArgument("openai-gpt configs cannot express the exact (erf) GELU");
      act = "gelu";
      break;
    case Activation::Relu:
      act = "relu";
      break;
    case Activation::Silu:
      act = "silu";
      break;
  }
  if (gpt2) {
    j["n_inner"] = n_inner;
    j["activation_function"] = act;
    j["scale_attn_weights"] = scale_attn_weights;
    j["scale_attn_by_inverse_layer_idx"] = scale_attn_by_inverse_layer_idx;
    if (add_cross_attention) j["add_cross_attention"] = true;
  } else {
    if (n_inner != 4 * n_embd) throw InvalidArgument("openai-gpt's MLP width is always 4 * n_embd");
    j["afn"] = act;
  }
  if (eos_token_ids.size() == 1) {
    j["eos_token_id"] = eos_token_ids[0];
    j["bos_token_id"] = eos_token_ids[0];
  } else if (!eos_token_ids.empty()) {
    j["eos_token_id"] = eos_token_ids;
  }
  j["tie_word_embeddings"] = true;
  if (bidirectional) j["bidirectional"] = true;
  if (mask_token_id >= 0) j["mask_token_id"] = mask_token_id;
  if (classifier) {
    json id2label = json::object(), label2id = json::object();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      id2label[std::to_string(i)] = labels[i];
      label2id[labels[i]] = i;
    }
    j["id2label"] = id2label;
    j["label2id"] = label2id;
    // No pad_token_id: Hugging Face's classifier would then read the token before the first pad
    // (the last token that is not one), and glassbox's classifiers read <|endoftext|>, which
    // would be that pad. Without it, Hugging Face reads the last token of one unpadded text, as
    // glassbox does.
  }
  return j.dump(2) + "\n";
}

void sinusoidal_positions(float* table, int P, int C) {
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < C; ++j) {
      const double angle = p / std::pow(10000.0, double(j - j % 2) / C);   // columns 2i and 2i+1 share it
      table[std::size_t(p) * C + j] = static_cast<float>(j % 2 ? std::cos(angle) : std::sin(angle));
    }
}

}   // namespace glassbox
