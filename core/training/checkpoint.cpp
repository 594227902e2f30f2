// What a Trainer saves: its model in the Hugging Face layout (config.json, model.safetensors),
// and checkpoints, from which a run goes on exactly as if it had never stopped.
#include <cmath>
#include <cstring>
#include <span>

#include "glassbox/atomic_file.h"
#include "glassbox/error.h"
#include "glassbox/safetensors.h"
#include "io/dtype.h"
#include "training/trainer_impl.h"

namespace glassbox {

// model.safetensors of the current parameters, in the given dtype.
std::string Trainer::Impl::weights_file(DType dtype) const {
  const std::size_t width = dtype_size(dtype);
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
    throw InvalidArgument("models are saved as F32, F16 or BF16");
  std::vector<std::byte> converted(dtype == DType::F32 ? 0 : params.size() * width);
  for (std::size_t i = 0; i < converted.size() / width; ++i) {
    const std::uint16_t h = dtype == DType::F16 ? f32_to_f16(params[i]) : f32_to_bf16(params[i]);
    std::memcpy(converted.data() + 2 * i, &h, 2);
  }
  const std::byte* base = dtype == DType::F32 ? reinterpret_cast<const std::byte*>(params.data()) : converted.data();
  std::vector<TensorData> tensors;
  const bool classifier = !config.labels.empty();   // named as GPT2ForSequenceClassification's state
  for (const auto& s : layout.slots())
    tensors.push_back({(classifier && s.name != "score.weight" ? "transformer." : "") + s.name,
                       dtype,
                       s.shape,
                       {base + s.offset * width, s.size * width}});
  return safetensors_bytes(tensors, {{"format", "pt"}});
}

void Trainer::save_model(const std::filesystem::path& dir, DType dtype) const {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "model.safetensors", impl_->weights_file(dtype));
  write_file_atomically(dir / "config.json", impl_->config.to_json());
}

std::string Trainer::model_file(DType dtype) const { return impl_->weights_file(dtype); }

Model Trainer::to_model() const {
  auto bytes = std::make_shared<std::string>(impl_->weights_file(DType::F32));
  const std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes->data()), bytes->size());
  return Model::from_parts(impl_->config.to_json(), SafeTensors::parse(view, "(model in training)", bytes));
}

// A checkpoint is one safetensors file, so that writing it (to a temporary name, then renamed)
// is atomic: "param.NAME", "adam_m.NAME", "adam_v.NAME" for every tensor, F32, and metadata.
constexpr const char* kCheckpointFormat = "glassbox-training-checkpoint-1";

void Trainer::save_checkpoint(const std::filesystem::path& file,
                              const std::map<std::string, std::string>& extra) const {
  const Impl& t = *impl_;
  std::vector<TensorData> tensors;
  for (const auto& [prefix, values] :
       {std::pair{"param.", &t.params}, std::pair{"adam_m.", &t.m}, std::pair{"adam_v.", &t.v}})
    for (const auto& s : t.layout.slots())
      tensors.push_back({std::string(prefix) + s.name,
                         DType::F32,
                         s.shape,
                         {reinterpret_cast<const std::byte*>(values->data() + s.offset), s.size * 4}});
  std::map<std::string, std::string> meta = {{"format", kCheckpointFormat},
                                             {"step", std::to_string(t.step)},
                                             {"config", t.config.to_json()},
                                             {"options", t.options.to_json()}};
  for (const auto& [k, v] : extra) meta["extra." + k] = v;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  write_file_atomically(file, safetensors_bytes(tensors, meta));
}

namespace {

// A damaged checkpoint (a NaN or an infinity among the weights, a negative second moment, whose
// square root AdamW takes) would make the first step's loss NaN, which reads as a learning rate
// too high: say what is wrong with the file instead.
void check_values(const std::string& source, const std::string& tensor, std::span<const float> values,
                  bool second_moment) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i]) && !(second_moment && values[i] < 0)) continue;
    throw ModelFormatError(source, "tensor '" + tensor + "' has " +
                                       (std::isfinite(values[i]) ? "a negative value " + std::to_string(values[i])
                                        : std::isnan(values[i])  ? std::string("a non-finite value (NaN)")
                                                                 : std::string("a non-finite value (infinity)")) +
                                       " at index " + std::to_string(i) +
                                       ": the checkpoint is damaged (resume from a good copy or train again)");
  }
}

}   // namespace

Trainer Trainer::from_checkpoint(const std::filesystem::path& file) {
  const SafeTensors st = SafeTensors::open(file);
  const auto& meta = st.metadata();
  auto get = [&](const std::string& key) -> const std::string& {
    auto it = meta.find(key);
    if (it == meta.end())
      throw ModelFormatError(st.source(), "not a glassbox training checkpoint (no \"" + key + "\")");
    return it->second;
  };
  if (get("format") != kCheckpointFormat)
    throw ModelFormatError(st.source(), "not a glassbox training checkpoint (format \"" + get("format") +
                                            "\", expected " + kCheckpointFormat + ")");
  const ModelConfig config = ModelConfig::parse(get("config"), st.source() + " (config)");
  TrainingOptions options;
  try {
    options = TrainingOptions::from_json(get("options"));
    options.validate(config);
  } catch (const InvalidArgument& e) {
    throw ModelFormatError(st.source(), e.what());
  }
  auto impl = std::make_unique<Impl>(config, options);
  try {
    impl->step = std::stoi(get("step"));
  } catch (const std::logic_error&) {
    impl->step = -1;
  }
  if (impl->step < 0 || impl->step > options.steps)
    throw ModelFormatError(st.source(), "bad step \"" + get("step") + "\"");
  for (const auto& [k, v] : meta)
    if (k.rfind("extra.", 0) == 0) impl->extra[k.substr(6)] = v;
  const std::size_t n = impl->layout.size();
  for (auto* values : {&impl->params, &impl->m, &impl->v}) values->resize(n);
  for (const auto& [prefix, values] :
       {std::pair{"param.", &impl->params}, std::pair{"adam_m.", &impl->m}, std::pair{"adam_v.", &impl->v}}) {
    for (const auto& s : impl->layout.slots()) {
      const TensorInfo* t = st.find(std::string(prefix) + s.name);
      if (!t) throw ModelFormatError(st.source(), "missing tensor '" + std::string(prefix) + s.name + "'");
      if (t->dtype != DType::F32 || t->shape != s.shape)
        throw ModelFormatError(st.source(),
                               "tensor '" + t->name + "' does not have the dtype F32 and the shape the config implies");
      std::memcpy(values->data() + s.offset, t->bytes.data(), s.size * 4);
      check_values(st.source(), t->name, std::span(values->data() + s.offset, s.size), values == &impl->v);
    }
  }
  if (st.tensors().size() != 3 * impl->layout.slots().size())
    throw ModelFormatError(st.source(), "unexpected tensors in the checkpoint (does its config match?)");
  return Trainer(std::move(impl));
}

}   // namespace glassbox
