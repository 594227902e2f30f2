#include "forward_command.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <nlohmann/json.hpp>
#include <string_view>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/quoted.h"
#include "glassbox/saliency.h"
#include "glassbox/tokenizer.h"
#include "text_files.h"

using namespace glassbox;

namespace {

// Writes floats in the shortest form that reads back to the same float.
class JsonWriter {
 public:
  void raw(std::string_view s) { out_ += s; }
  void number(float x) {
    if (x == -INFINITY) {   // an id with no token (ForwardOptions::tokenizer_size): JSON has no -inf
      out_ += "null";
      return;
    }
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    out_.append(buf, end);
  }
  void array(const float* v, std::size_t n) {
    out_ += '[';
    for (std::size_t i = 0; i < n; ++i) {
      if (i) out_ += ',';
      number(v[i]);
    }
    out_ += ']';
    if (out_.size() > (1 << 20)) flush();
  }
  void flush() {
    std::fwrite(out_.data(), 1, out_.size(), stdout);
    out_.clear();
  }

 private:
  std::string out_;
};

// FILE holds a JSON array of token-id arrays, e.g. [[464, 2068], [15496]]: a regular file (a FIFO
// or /dev/zero would never end) of at most kMaxBatchFileBytes, read before any work.
constexpr std::uintmax_t kMaxBatchFileBytes = 512u << 20;
std::vector<std::vector<std::int32_t>> read_batch(const std::string& file) {
  std::error_code ec;
  if (const std::uintmax_t size = std::filesystem::file_size(file, ec);
      !ec && std::filesystem::is_regular_file(file) && size > kMaxBatchFileBytes)
    throw InvalidArgument(file + ": is " + std::to_string(size) + " bytes, more than the " +
                          std::to_string(kMaxBatchFileBytes) + " a batch file may have: split it");
  const std::string text = read_text(file);
  const std::string expected = ": expected a JSON array of token-id arrays, e.g. [[464, 2068], [15496]]";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InvalidArgument(file + " is not JSON (" + e.what() + ")" + expected);
  }
  if (!j.is_array()) throw InvalidArgument(file + expected);
  std::vector<std::vector<std::int32_t>> batch;
  for (const auto& seq : j) {
    if (!seq.is_array())
      throw InvalidArgument(file + ": sequence " + std::to_string(batch.size()) + " is not an array" + expected);
    auto& ids = batch.emplace_back();
    for (const auto& id : seq) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < INT32_MIN || id.get<std::int64_t>() > INT32_MAX)
        throw InvalidArgument(file + ": sequence " + std::to_string(batch.size() - 1) + " holds " + id.dump() +
                              ", not a token id" + expected);
      ids.push_back(static_cast<std::int32_t>(id.get<std::int64_t>()));
    }
  }
  return batch;
}

// --neuron "L:N" -> {L, N}
std::array<int, 2> parse_neuron(const std::string& text) {
  std::array<int, 2> v{};
  const std::size_t colon = text.find(':');
  const char* end = text.data() + text.size();
  const bool ok = colon != std::string::npos &&
                  std::from_chars(text.data(), text.data() + colon, v[0]).ptr == text.data() + colon && colon > 0 &&
                  std::from_chars(text.data() + colon + 1, end, v[1]).ptr == end && colon + 1 < text.size();
  if (!ok) throw InvalidArgument("--neuron must be LAYER:INDEX, like 3:1024, got " + quote_text(text));
  return v;
}

// The experiments forward prints beside the logits (glassbox/experiments.h), computed before any
// output so that a refusal prints nothing.
struct Probes {
  std::vector<float> saliency;
  std::int32_t target = 0;
  std::vector<NeuronValue> neurons;
  std::vector<float> neuron;
};
Probes run_probes(const Model& model, const std::vector<std::int32_t>& ids, const std::vector<float>& logits,
                  const ForwardRequest& request) {
  Probes p;
  const int V = model.config().vocab_size;
  if (!request.neuron.empty()) {
    const auto [layer, index] = parse_neuron(request.neuron);
    p.neuron = neuron_activations(model, ids, layer, index);
  }
  if (request.neurons) p.neurons = top_neurons(model, ids, *request.neurons);
  if (request.saliency) {   // the target: given, or the last position's most likely next token
    const auto last = logits.end() - V;
    p.target =
        request.target_id ? *request.target_id : static_cast<std::int32_t>(std::max_element(last, logits.end()) - last);
    p.saliency = saliency(model, ids, p.target);
  }
  return p;
}

}   // namespace

int run_forward(const std::string& model_dir, const LoadOptions& load, const std::vector<std::int32_t>& ids,
                const ForwardRequest& request) {
  if (request.mask != "causal" && request.mask != "bidirectional")
    throw InvalidArgument("--mask must be causal or bidirectional, got " + request.mask);
  if (ids.empty()) throw InvalidArgument("the prompt is empty: give at least one token");
  Model model = Model::load(model_dir, load);
  const ModelConfig& c = model.config();
  const int T = static_cast<int>(ids.size());
  const std::vector<float> head_mask = parse_head_mask(request.head_mask, c);

  std::vector<float> attention;   // (L, H, T, T)
  TensorHook keep_probs = [&](const NamedTensor& t) {
    if (std::string_view(t.name) != "attn_probs") return;
    attention.insert(attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
  };
  std::vector<float> hidden_states;
  std::vector<TokenProbability> lens;
  ForwardOptions options;
  options.all_logits = true;
  options.hook = request.attention ? &keep_probs : nullptr;
  options.causal = request.mask == "causal";
  options.head_mask = head_mask;
  options.hidden_states = request.hidden_states ? &hidden_states : nullptr;
  options.lens_k = request.lens.value_or(0);
  options.lens = request.lens ? &lens : nullptr;
  options.tokenizer_size = tokenizer_size_of(model_dir);
  KVCache cache = model.new_cache();
  const std::vector<float> logits = model.forward(ids, cache, options);   // finite, or it throws
  const Probes probes = run_probes(model, ids, logits, request);

  JsonWriter json;
  json.raw("{\"logits\":[");
  for (int t = 0; t < T; ++t) {
    if (t) json.raw(",\n");
    json.array(logits.data() + std::size_t(t) * c.vocab_size, c.vocab_size);
  }
  json.raw("]");
  if (request.attention) {
    json.raw(",\n\"attention\":[");
    for (int l = 0; l < c.n_layer; ++l) {
      json.raw(l ? ",[" : "[");
      for (int h = 0; h < c.n_head; ++h) {
        json.raw(h ? ",[" : "[");
        for (int q = 0; q < T; ++q) {
          if (q) json.raw(",");
          json.array(attention.data() + ((std::size_t(l) * c.n_head + h) * T + q) * T, T);
        }
        json.raw("]");
      }
      json.raw("]");
    }
    json.raw("]");
  }
  if (request.hidden_states) {   // [n_layer + 1][T][n_embd]
    json.raw(",\n\"hidden_states\":[");
    for (int i = 0; i <= c.n_layer; ++i) {
      json.raw(i ? ",[" : "[");
      for (int t = 0; t < T; ++t) {
        if (t) json.raw(",");
        json.array(hidden_states.data() + (std::size_t(i) * T + t) * c.n_embd, c.n_embd);
      }
      json.raw("]");
    }
    json.raw("]");
  }
  if (request.lens) {   // [n_layer][T] lists of K {"id", "p"}, most probable first
    json.raw(",\n\"lens\":[");
    const TokenProbability* top = lens.data();
    for (int l = 0; l < c.n_layer; ++l) {
      json.raw(l ? ",[" : "[");
      for (int t = 0; t < T; ++t) {
        json.raw(t ? ",[" : "[");
        for (int k = 0; k < *request.lens; ++k, ++top) {
          json.raw(k ? ",{\"id\":" : "{\"id\":");
          json.raw(std::to_string(top->id));
          json.raw(",\"p\":");
          json.number(top->probability);
          json.raw("}");
        }
        json.raw("]");
      }
      json.raw("]");
    }
    json.raw("]");
  }
  if (request.saliency) {
    json.raw(",\n\"saliency\":");
    json.array(probes.saliency.data(), probes.saliency.size());
    json.raw(",\"target\":" + std::to_string(probes.target));
  }
  if (request.neurons) {   // [n_layer][T] lists of K {"index", "value"}, largest first
    json.raw(",\n\"neurons\":[");
    const NeuronValue* top = probes.neurons.data();
    for (int l = 0; l < c.n_layer; ++l) {
      json.raw(l ? ",[" : "[");
      for (int t = 0; t < T; ++t) {
        json.raw(t ? ",[" : "[");
        for (int k = 0; k < *request.neurons; ++k, ++top) {
          json.raw(k ? ",{\"index\":" : "{\"index\":");
          json.raw(std::to_string(top->index));
          json.raw(",\"value\":");
          json.number(top->value);
          json.raw("}");
        }
        json.raw("]");
      }
      json.raw("]");
    }
    json.raw("]");
  }
  if (!request.neuron.empty()) {
    json.raw(",\n\"neuron\":");
    json.array(probes.neuron.data(), probes.neuron.size());
  }
  json.raw("}\n");
  json.flush();
  return 0;
}

int tokenizer_size_of(const std::string& model_dir) {
  if (!std::filesystem::exists(std::filesystem::path(model_dir) / "vocab.json")) return 0;
  return Tokenizer::load(model_dir).vocab_size();
}

// The batch in parts (at most kBatchPart sequences, kBatchPartLogits floats of logits), each
// part's logits written before the next runs: {"logits": [sequence][position][vocab]}, the same
// bytes as one pass would give.
int run_forward_batch(const std::string& model_dir, const LoadOptions& load, const std::string& file) {
  const auto batch = read_batch(file);
  if (batch.size() > kMaxBatchSequences)
    throw InvalidArgument(file + " holds " + std::to_string(batch.size()) + " sequences: --batch takes at most " +
                          std::to_string(kMaxBatchSequences) + " (split the file)");
  if (batch.empty()) throw InvalidArgument("the batch holds no sequences");
  Model model = Model::load(model_dir, load);
  const int tokenizer_size = tokenizer_size_of(model_dir);
  for (std::size_t b = 0; b < batch.size(); ++b) model.check_sequence(batch[b], b);   // before any output
  const std::size_t V = static_cast<std::size_t>(model.config().vocab_size);
  JsonWriter json;
  json.raw("{\"logits\":[");
  for (std::size_t first = 0, n = 0; first < batch.size(); first += n) {
    // At least one sequence, then more while the part's logits stay within kBatchPartLogits.
    std::size_t floats = batch[first].size() * V;
    for (n = 1; first + n < batch.size() && n < kBatchPart; ++n) {
      floats += batch[first + n].size() * V;
      if (floats > kBatchPartLogits) break;
    }
    const auto part = std::span(batch).subspan(first, n);
    std::vector<std::vector<float>> logits;
    try {
      logits = model.forward_batch(part, tokenizer_size);
    } catch (const ModelFormatError&) {   // not finite: name the sequence by its place in the file
      for (std::size_t b = 0; b < part.size(); ++b) {
        KVCache cache = model.new_cache();
        try {
          model.forward(part[b], cache, {.all_logits = true, .tokenizer_size = tokenizer_size});
        } catch (const ModelFormatError& e) {
          throw ModelFormatError("sequence " + std::to_string(first + b), e.what());
        }
      }
      throw;
    }
    for (std::size_t b = 0; b < logits.size(); ++b) {
      json.raw(first + b ? ",\n[" : "[");
      for (std::size_t t = 0; t < logits[b].size() / V; ++t) {
        if (t) json.raw(",\n");
        json.array(logits[b].data() + t * V, V);
      }
      json.raw("]");
    }
  }
  json.raw("]}\n");
  json.flush();
  return 0;
}

std::vector<float> parse_head_mask(const std::string& text, const ModelConfig& c) {
  if (text.empty()) return {};
  const auto malformed = [&] {
    return InvalidArgument("--head-mask must be layer:head pairs separated by commas, like 0:3,5:1, got " +
                           quote_text(text));
  };
  std::vector<std::array<int, 2>> heads;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int layer = 0, head = 0;
    auto [after_layer, e1] = std::from_chars(p, end, layer);
    if (e1 != std::errc() || after_layer == end || *after_layer != ':') throw malformed();
    auto [after_head, e2] = std::from_chars(after_layer + 1, end, head);
    if (e2 != std::errc() || (after_head < end && (*after_head != ',' || after_head + 1 == end))) throw malformed();
    heads.push_back({layer, head});
    p = after_head < end ? after_head + 1 : after_head;
  }
  try {
    return silencing_head_mask(c, heads);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("--head-mask: ") + e.what());
  }
}
