// `glassbox train`: learns (or reuses) a BPE vocabulary, then trains a model of the chosen shape
// from scratch, with periodic evaluation on held-out text, atomic checkpoints and --resume. The
// task (--task) decides what the model learns: a GPT, a masked-LM encoder or a classifier of
// labelled lines (train_tasks.h).
//
// Nothing is written until every setting and the text have been checked; from the first checkpoint
// on, the output directory is a loadable model (config.json, model.safetensors, vocab.json,
// merges.txt, rewritten at every checkpoint) plus:
//   checkpoint.safetensors   parameters, AdamW state, step, options (glassbox::Trainer)
//   training_log.jsonl       one JSON object per logged step / evaluation (plots, model cards)
#include "train_command.h"

#include "output_dir.h"
#include "text_files.h"
#include "train_tasks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "glassbox/atomic_file.h"
#include "glassbox/error.h"
#include "glassbox/memory.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "glassbox/trainer.h"
#include "glassbox/training_setup.h"
#include "glassbox/training_text.h"

namespace {

using namespace glassbox;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);   // a second Ctrl-C kills at once (the files stay whole: atomic writes)
}

std::string duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

class Log {   // training_log.jsonl, kept consistent with the checkpoint on resume
 public:
  Log(const fs::path& path, int resume_step) : path_(path) {
    std::vector<std::string> kept;
    if (resume_step > 0) {   // drop what an interrupted run logged after its last checkpoint
      std::ifstream in(path);
      for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.value("step", 0) <= resume_step && !j.contains("final")) kept.push_back(line);
      }
    }
    std::string text;
    for (const auto& l : kept) text += l + '\n';
    write_file_atomically(path, text);   // the kept lines, then append
    out_.open(path, std::ios::app);
    if (!out_) throw Error("cannot write " + path.string());
  }
  void write(const nlohmann::json& j) {
    out_ << j.dump() << '\n';
    out_.flush();
  }

 private:
  fs::path path_;
  std::ofstream out_;
};

DType dtype_of(const std::string& name) {
  if (name == "f32") return DType::F32;
  if (name == "f16") return DType::F16;
  if (name == "bf16") return DType::BF16;
  throw InvalidArgument("--save-dtype must be f32, f16 or bf16");
}

}   // namespace

void add_train_command(CLI::App& app, TrainCommand& c) {
  auto* t = app.add_subcommand("train",
                               "train a GPT (or an encoder, or a classifier: --task) from scratch on text files "
                               "(Hugging Face model directory out)");
  c.command = t;
  t->add_option("text", c.inputs, "training text: UTF-8 files, or folders of them")->required();
  t->add_option("-o,--output", c.output, "model directory to write (and checkpoint to)")->required();
  t->add_flag("--resume", c.resume,
              "continue from OUTPUT/checkpoint.safetensors (same text; options from the checkpoint)");
  t->add_option("--task", c.task,
                "lm (next token: a GPT), mlm (masked tokens, bidirectional attention: an encoder) or classify "
                "(labelled lines \"label<TAB>text\": a classifier)")
      ->capture_default_str();
  t->add_option("--lm-weight", c.settings.options.lm_weight,
                "classify: weight of the LM loss beside the label loss (GPT-1's 0.5)")
      ->capture_default_str();
  t->add_option("--mask-rate", c.settings.mask_rate,
                "mlm: the share of tokens chosen to be predicted (BERT's 0.15; more gives more to learn from per step)")
      ->capture_default_str();
  t->add_option("--valid", c.valid, "held-out text files or folders for evaluation");
  t->add_option("--valid-fraction", c.settings.valid_fraction,
                "without --valid: hold out this fraction of the end of the text (classify: of each label's lines)")
      ->capture_default_str();
  t->add_option("--tokenizer", c.tokenizer_dir, "reuse vocab.json + merges.txt from this directory");
  t->add_option("--init-from", c.init_from,
                "start from the parameters of another run of the same shape (its output directory: its checkpoint and, "
                "unless --tokenizer says otherwise, its tokenizer), e.g. a GPT's for an encoder; ignored on --resume");
  t->add_option("--vocab-size", c.settings.vocab_size, "without --tokenizer: learn a BPE vocabulary of this size")
      ->capture_default_str();
  t->add_option("--arch", c.settings.architecture, "gpt2 (pre-LayerNorm) or openai-gpt (post-LayerNorm)")
      ->capture_default_str();
  t->add_option("--activation", c.settings.activation,
                "MLP activation as the config names it (default: gelu_new, openai-gpt: gelu)");
  t->add_option("--positions", c.settings.positions,
                "position encoding: learned (GPT-2's) or sinusoidal (fixed sin/cos)")
      ->capture_default_str();
  t->add_option("--n-layer", c.settings.n_layer, "blocks")->capture_default_str();
  t->add_option("--n-embd", c.settings.n_embd, "width of the residual stream")->capture_default_str();
  t->add_option("--n-head", c.settings.n_head, "attention heads")->capture_default_str();
  t->add_option("--n-positions", c.settings.n_positions, "context length")->capture_default_str();
  t->add_option("--steps", c.settings.options.steps, "optimisation steps")->capture_default_str();
  t->add_option("--batch-size", c.settings.options.batch_size, "sequences per step")->capture_default_str();
  t->add_option("--seq-len", c.settings.options.seq_len, "tokens per sequence (at most --n-positions)")
      ->capture_default_str();
  t->add_option("--lr", c.settings.options.learning_rate, "peak learning rate")->capture_default_str();
  t->add_option("--min-lr", c.settings.options.min_learning_rate, "learning rate at the end of the cosine decay")
      ->capture_default_str();
  t->add_option("--warmup", c.settings.options.warmup_steps, "linear warmup steps")->capture_default_str();
  t->add_option("--weight-decay", c.settings.options.weight_decay, "AdamW weight decay on matrices")
      ->capture_default_str();
  t->add_option("--grad-clip", c.settings.options.grad_clip, "max gradient norm (0: off)")->capture_default_str();
  t->add_option("--dropout", c.settings.options.dropout, "dropout on embeddings and residual branches while training")
      ->capture_default_str();
  t->add_option("--seed", c.settings.options.seed, "initialisation and batch order")->capture_default_str();
  t->add_option("--threads", c.settings.options.threads, "threads (the batch is split into this many shards)")
      ->capture_default_str();
  t->add_option("--eval-every", c.settings.eval_every, "evaluate every N steps (0: only at the end)")
      ->capture_default_str();
  t->add_option("--eval-tokens", c.settings.eval_tokens,
                "tokens (mlm: masked tokens; classify: lines) per periodic evaluation (0: all; the final one uses all)")
      ->capture_default_str();
  t->add_option("--checkpoint-every", c.checkpoint_every, "save a checkpoint every N steps")->capture_default_str();
  t->add_option("--save-dtype", c.save_dtype,
                "dtype of model.safetensors: f32, f16 or bf16 (default: f32, or the run's on --resume)");
  t->add_option("--pause-at", c.pause_at, "checkpoint and stop after this step; continue with --resume");
  t->add_option("--time-limit", c.time_limit, "checkpoint and stop after this many minutes; continue with --resume");
  t->add_option("--max-memory", c.max_memory_mb,
                "the most memory the run may take, in MB (0: what the system has available); a run that needs "
                "more is refused before it starts");
}

// The options that only the command line has, checked with their names (the settings
// themselves are checked by set_up_training).
void check_options(const TrainCommand& c) {
  const TrainingSettings& s = c.settings;
  if (s.architecture != "gpt2" && s.architecture != "openai-gpt")
    throw InvalidArgument("--arch must be gpt2 or openai-gpt");
  if (c.task != "lm" && c.task != "mlm" && c.task != "classify")
    throw InvalidArgument("--task must be lm, mlm or classify, got " + c.task);
  if (c.command && c.command->count("--lm-weight") && c.task != "classify")
    throw InvalidArgument("--lm-weight weighs the LM loss beside a classifier's label loss: it needs --task classify");
  if (c.task == "classify" && s.options.seq_len != s.n_positions)   // the positions it predicts at are those it learned
    throw InvalidArgument("--task classify cuts texts to the context: give --seq-len equal to --n-positions (" +
                          std::to_string(s.options.seq_len) + " and " + std::to_string(s.n_positions) + ")");
  if (s.positions != "learned" && s.positions != "sinusoidal")
    throw InvalidArgument("--positions must be learned or sinusoidal, got " + s.positions);
}

// --init-from: the parameters of another run (from its checkpoint, by name) replace the new run's
// initialisation. Parameters that run lacks (a classifier's score head, after a GPT) keep theirs;
// its AdamW moments and step are not taken: this is a new run that starts from those weights.
void start_from(Trainer& trainer, const fs::path& dir) {
  const Trainer from = Trainer::from_checkpoint(dir / "checkpoint.safetensors");
  const std::vector<std::string> names = from.parameter_names();
  for (const std::string& name : trainer.parameter_names()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    const std::span<const float> values = from.parameter(name);
    if (values.size() != trainer.parameter(name).size())
      throw InvalidArgument("--init-from " + dir.string() + ": its " + name + " has " + std::to_string(values.size()) +
                            " values, this run's " + std::to_string(trainer.parameter(name).size()) +
                            " (give both runs the same shape and vocabulary)");
    trainer.set_parameter(name, values);
  }
}

// The task a model was made for, from its config.
std::string task_of(const ModelConfig& m) { return !m.labels.empty() ? "classify" : m.bidirectional ? "mlm" : "lm"; }

// On --resume the run's settings come from its checkpoint: the same command line with --resume
// added is fine, but an option given with another value than the run's is an error, not ignored.
void check_unchanged(const TrainCommand& c, const Trainer& t) {
  const ModelConfig& m = t.config();
  const TrainingOptions& o = t.options();
  const TrainingSettings& s = c.settings;
  const TrainingOptions& given = s.options;
  const std::pair<const char*, bool> same[] = {
      {"--arch", s.architecture == m.architecture_name()},
      {"--n-layer", s.n_layer == m.n_layer},
      {"--n-embd", s.n_embd == m.n_embd},
      {"--n-head", s.n_head == m.n_head},
      {"--n-positions", s.n_positions == m.n_positions},
      {"--steps", given.steps == o.steps},
      {"--batch-size", given.batch_size == o.batch_size},
      {"--seq-len", given.seq_len == o.seq_len},
      {"--lr", given.learning_rate == o.learning_rate},
      {"--min-lr", given.min_learning_rate == o.min_learning_rate},
      {"--warmup", given.warmup_steps == o.warmup_steps},
      {"--weight-decay", given.weight_decay == o.weight_decay},
      {"--grad-clip", given.grad_clip == o.grad_clip},
      {"--dropout", given.dropout == o.dropout},
      {"--seed", given.seed == o.seed},
      {"--threads", given.threads == o.threads},
      {"--task", c.task == task_of(m)},
      {"--lm-weight", given.lm_weight == o.lm_weight},
      {"--valid-fraction", !t.checkpoint_extra().count("valid_fraction") ||
                               std::atof(t.checkpoint_extra().at("valid_fraction").c_str()) == s.valid_fraction},
      {"--mask-rate", !t.checkpoint_extra().count("mask_rate") ||
                          std::atof(t.checkpoint_extra().at("mask_rate").c_str()) == s.mask_rate}};
  for (const auto& [name, equal] : same)
    if (c.command && c.command->count(name) && !equal)
      throw InvalidArgument(std::string(name) +
                            " cannot change when resuming: the run's settings are in its checkpoint");
}

std::vector<TrainingDocument> read_documents(const std::vector<fs::path>& files) {
  std::vector<TrainingDocument> docs;
  for (const auto& f : files) docs.push_back({f.string(), read_text(f)});
  return docs;
}

// Refuses a run whose parameters, optimizer state and activations (Trainer::memory_bytes) need
// more than --max-memory or what the system has available, before any of it is allocated.
void check_training_memory(const ModelConfig& config, const TrainingOptions& options, std::uint64_t max_memory_mb) {
  check_memory(Trainer::memory_bytes(config, options), megabytes_to_bytes(max_memory_mb), "training this model",
               "its parameters, gradients, optimizer state and the activations of a batch",
               "make it smaller (--n-layer, --n-embd, --vocab-size, --batch-size, --seq-len)");
}

int run_train(const TrainCommand& c) {
  const fs::path out = c.output;
  const fs::path checkpoint = out / "checkpoint.safetensors";
  if (c.checkpoint_every < 1) throw InvalidArgument("--checkpoint-every must be at least 1");
  const TrainingSettings& settings = c.settings;
  if (settings.eval_every < 0 || settings.eval_tokens < 0)
    throw InvalidArgument("--eval-every and --eval-tokens must not be negative");
  if (c.pause_at < 0 || !(c.time_limit >= 0)) throw InvalidArgument("--pause-at and --time-limit must not be negative");
  if (!(settings.valid_fraction >= 0 && settings.valid_fraction < 1))
    throw InvalidArgument("--valid-fraction must be in [0, 1)");
  if (c.resume) {
    if (!fs::exists(checkpoint)) throw Error(checkpoint.string() + ": no checkpoint to resume from");
  } else {
    if (fs::exists(checkpoint))
      throw Error(checkpoint.string() + " exists: pass --resume to continue that run, or choose another --output");
    if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
      throw Error(out.string() +
                  " exists and is not an empty folder: choose a new --output (nothing there is overwritten)");
    if (!c.init_from.empty() && !fs::exists(fs::path(c.init_from) / "checkpoint.safetensors"))
      throw Error("--init-from " + c.init_from +
                  ": no checkpoint.safetensors there (give the output folder of a glassbox train run)");
  }
  check_output_dir(out, "-o");   // said now, not when the first checkpoint is saved
  std::vector<TrainingDocument> train_docs = read_documents(list_files(c.inputs));
  std::vector<TrainingDocument> valid_docs = read_documents(list_files(c.valid));

  // 1. The run: from the checkpoint, or new (every setting checked before any work is done).
  std::optional<Trainer> trainer;
  std::optional<Tokenizer> reused;
  const std::string tokenizer_dir = !c.tokenizer_dir.empty() ? c.tokenizer_dir : c.init_from;
  if (c.resume) {
    trainer.emplace(Trainer::from_checkpoint(checkpoint));
    check_unchanged(c, *trainer);
  } else {
    if (!tokenizer_dir.empty()) reused.emplace(Tokenizer::load(tokenizer_dir));   // its files named by their paths
    check_options(c);
    const ModelConfig config = training_model_config(settings, reused ? reused->vocab_size() : settings.vocab_size);
    settings.options.validate(config);
    check_training_memory(config, settings.options, c.max_memory_mb);
  }
  const std::map<std::string, std::string> extra =
      c.resume ? trainer->checkpoint_extra() : std::map<std::string, std::string>{};
  const std::string dtype_name = !c.save_dtype.empty()       ? c.save_dtype
                                 : extra.count("save_dtype") ? extra.at("save_dtype")
                                                             : "f32";
  const DType save_dtype = dtype_of(dtype_name);
  const double valid_fraction = c.resume && extra.count("valid_fraction")
                                    ? std::atof(extra.at("valid_fraction").c_str())
                                    : settings.valid_fraction;
  const double mask_rate =
      c.resume && extra.count("mask_rate") ? std::atof(extra.at("mask_rate").c_str()) : settings.mask_rate;
  if (!(mask_rate > 0 && mask_rate <= 1)) throw InvalidArgument("--mask-rate must be more than 0 and at most 1");
  const std::string task = c.resume ? task_of(trainer->config()) : c.task;
  // classify: labelled lines, held out line by line (every k-th: a file sorted by label still
  // leaves every label in both parts); the others: text, held out at its end.
  std::vector<LabelledLine> train_lines, valid_lines;
  if (task == "classify") {
    for (const auto& d : train_docs) {
      auto lines = parse_labelled_lines(d.text, d.name, true);
      train_lines.insert(train_lines.end(), lines.begin(), lines.end());
    }
    for (const auto& d : valid_docs) {
      auto lines = parse_labelled_lines(d.text, d.name, true);
      valid_lines.insert(valid_lines.end(), lines.begin(), lines.end());
    }
    if (valid_docs.empty() && valid_fraction > 0) {         // per label: the k-th, 2k-th, ... line of each
      std::map<std::string, std::pair<int, double>> seen;   // label -> (lines, lines held out)
      std::vector<LabelledLine> kept;
      for (auto& line : train_lines) {
        auto& [n, held] = seen[line.label];
        ++n;
        const bool hold = std::floor(n * valid_fraction) > held;
        held += hold;
        (hold ? valid_lines : kept).push_back(std::move(line));
      }
      train_lines = std::move(kept);
    }
    train_docs.clear();   // the tokenizer learns from the texts alone, not the labels
    std::string texts;
    for (const auto& l : train_lines) texts += l.text + "\n";
    train_docs.push_back({"(the texts of the labelled lines)", texts});
  }

  // 2. The held-out text, the tokenizer (the run's own, reused, or learned from the training
  // text) and the texts as ids: set_up_training, as train() in JavaScript sets its runs up.
  TrainingInputs inputs;
  inputs.train = std::move(train_docs);
  inputs.valid = std::move(valid_docs);
  if (c.resume || reused) {
    const fs::path dir = c.resume ? out : fs::path(tokenizer_dir);
    inputs.tokenizer.emplace();
    inputs.tokenizer->vocab_json = read_text(dir / "vocab.json");
    inputs.tokenizer->merges_txt = read_text(dir / "merges.txt");
  }
  if (c.resume) {
    inputs.config = trainer->config();
    inputs.options = trainer->options();
  }
  if (task == "mlm") inputs.special_tokens.push_back(std::string(kMaskToken));   // the [MASK] of the inputs
  inputs.encode = task != "classify";   // a classifier encodes its lines one by one
  inputs.checked = [&](const ModelConfig& config, const TrainingOptions& options) {
    check_training_memory(config, options, c.max_memory_mb);
  };
  inputs.learning = [&](std::size_t bytes) {
    std::fprintf(stderr, "glassbox: learning a vocabulary of %d tokens from %zu bytes\n", settings.vocab_size, bytes);
  };
  TrainingSettings run_settings = settings;
  run_settings.valid_fraction = task == "classify" ? 0 : valid_fraction;   // a classifier's lines are held out above
  TrainingSetup setup = set_up_training(std::move(inputs), run_settings);
  const Tokenizer& tok = setup.tokenizer;

  // 3. The task's data, checked before anything is written.
  const int seq_len = setup.options.seq_len;
  const std::vector<std::string> labels = task == "classify"
                                              ? (c.resume ? trainer->config().labels : label_names(train_lines))
                                              : std::vector<std::string>{};
  // mlm's [MASK]: <|mask|> where the tokenizer has one (those it learns for --task mlm do), else <|endoftext|>
  const auto mask_id = c.resume                        ? std::optional(trainer->config().mask_token_id)
                       : tok.special_token(kMaskToken) ? tok.special_token(kMaskToken)
                                                       : tok.special_token("<|endoftext|>");
  if (task == "mlm" && !mask_id)
    throw Error("--task mlm needs a tokenizer with <|mask|> or <|endoftext|> to mask tokens with");
  std::unique_ptr<TrainingTask> data;
  if (task == "classify")
    data = classify_task(tok, train_lines, valid_lines, labels, seq_len);
  else if (task == "mlm")
    data =
        masked_lm_task(std::move(setup.train), std::move(setup.valid), seq_len, *mask_id, tok.vocab_size(), mask_rate);
  else
    data = language_model_task(tok, std::move(setup.train), std::move(setup.valid), seq_len);
  const std::string data_id = data->data_id();
  double elapsed_before = 0;   // training seconds of earlier sessions of this run
  if (c.resume) {
    if (extra.count("data") && extra.at("data") != data_id)
      throw Error("the text differs from the text " + checkpoint.string() +
                  " was trained on; resume with the same files");
    if (extra.count("elapsed")) elapsed_before = std::atof(extra.at("elapsed").c_str());
  } else {
    ModelConfig config = setup.config;
    config.labels = labels;
    if (task == "mlm") {
      config.bidirectional = true;
      config.mask_token_id = *mask_id;
    }
    trainer.emplace(config, setup.options);
    if (!c.init_from.empty()) start_from(*trainer, c.init_from);
    fs::create_directories(out);
    save_tokenizer(setup.tokenizer_files, out);
  }
  const TrainingOptions& o = trainer->options();
  const ModelConfig& cfg = trainer->config();
  std::fprintf(stderr, "glassbox: %s, %d layers, %d wide, %d heads, context %d, vocabulary %d: %.2fM parameters\n",
               std::string(cfg.architecture_name()).c_str(), cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.n_positions,
               cfg.vocab_size, trainer->parameter_count() / 1e6);
  std::fprintf(stderr, "glassbox: task %s: %s; %d steps of %d x %s%d tokens%s\n", task.c_str(),
               data->describe().c_str(), o.steps, o.batch_size, task == "classify" ? "up to " : "", o.seq_len,
               c.resume ? (", resuming at step " + std::to_string(trainer->step())).c_str() : "");
  if (task == "classify") {
    std::string names;
    for (const auto& l : labels) names += (names.empty() ? "" : ", ") + l;
    std::fprintf(stderr, "glassbox: %zu labels: %s\n", labels.size(), names.c_str());
  }

  // 4. The loop.
  Log log(out / "training_log.jsonl", trainer->step());
  const bool tty = isatty(fileno(stderr));
  std::signal(SIGINT, on_interrupt);
  const auto start = Clock::now();
  const int first_step = trainer->step();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto save = [&] {
    trainer->save_model(out, save_dtype);
    trainer->save_checkpoint(checkpoint, {{"data", data_id},
                                          {"elapsed", std::to_string(elapsed_before + seconds())},
                                          {"save_dtype", dtype_name},
                                          {"valid_fraction", std::to_string(valid_fraction)},
                                          {"mask_rate", std::to_string(mask_rate)}});
  };
  auto evaluate = [&](long limit) {
    const Validation v = data->validate(*trainer, limit);
    nlohmann::json j = {{"step", trainer->step()}};
    j.update(v.to_json());
    j["elapsed"] = elapsed_before + seconds();
    log.write(j);
    return v;
  };
  double tokens_seen = 0;   // in this session, for tokens/s
  double smooth_loss = NAN, last_val = NAN;
  double last_line = -1e9;
  auto paused = [&] {
    return (c.pause_at > 0 && trainer->step() >= c.pause_at) || (c.time_limit > 0 && seconds() >= 60 * c.time_limit);
  };
  while (trainer->step() < o.steps && !g_interrupted && !paused()) {
    const int s = trainer->step();
    const TrainingBatch batch = data->batch(o, s);
    const StepResult r = trainer->train_step(batch);
    tokens_seen += double(batch.B) * batch.T;
    if (!std::isfinite(r.loss))
      throw Error("the loss became " + std::to_string(r.loss) + " at step " + std::to_string(s) + "; try a lower --lr");
    smooth_loss = std::isnan(smooth_loss) ? r.loss : 0.95 * smooth_loss + 0.05 * r.loss;
    const double t = seconds();
    const double tok_per_s = tokens_seen / t;
    log.write({{"step", s + 1},
               {"loss", r.loss},
               {"lr", r.learning_rate},
               {"grad_norm", r.grad_norm},
               {"tokens", double(s + 1) * o.batch_size * o.seq_len},
               {"elapsed", elapsed_before + t}});
    const bool eval_now =
        data->has_validation() && settings.eval_every > 0 && (s + 1) % settings.eval_every == 0 && s + 1 < o.steps;
    if (eval_now) last_val = evaluate(settings.eval_tokens).loss;
    if ((s + 1) % c.checkpoint_every == 0) save();
    const double eta = double(o.steps - s - 1) * t / double(trainer->step() - first_step);
    char val[32] = "";
    if (!std::isnan(last_val)) std::snprintf(val, sizeof val, "  val %.3f", last_val);
    if (tty) {   // one line, redrawn (10 times a second at most)
      if (t - last_line < 0.1 && s + 1 < o.steps) continue;
      last_line = t;
      const int width = 24, filled = int(double(s + 1) / o.steps * width);
      std::fprintf(stderr, "\r\033[Kstep %d/%d [%s%s] loss %.3f%s  %.0f tok/s  ETA %s", s + 1, o.steps,
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), smooth_loss, val,
                   tok_per_s, duration(eta).c_str());
    } else if (t - last_line >= 10 || eval_now || s + 1 == o.steps || s == first_step) {   // plain lines
      last_line = t;
      std::fprintf(stderr, "step %d/%d loss %.4f%s lr %.3g %.0f tok/s elapsed %s ETA %s\n", s + 1, o.steps, smooth_loss,
                   val, r.learning_rate, tok_per_s, duration(elapsed_before + t).c_str(), duration(eta).c_str());
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  save();
  if (g_interrupted) {
    std::fprintf(stderr, "glassbox: interrupted; step %d saved to %s. Continue with --resume.\n", trainer->step(),
                 checkpoint.string().c_str());
    return 130;
  }
  if (trainer->step() < o.steps) {
    std::fprintf(stderr, "glassbox: paused at step %d of %d (saved to %s). Continue with --resume.\n", trainer->step(),
                 o.steps, checkpoint.string().c_str());
    return 0;
  }
  if (data->has_validation()) {
    const Validation v = data->validate(*trainer, 0);
    nlohmann::json j = {{"final", true}, {"step", trainer->step()}};
    j.update(v.to_json());
    j["elapsed"] = elapsed_before + seconds();
    log.write(j);
    std::fprintf(stderr, "glassbox: %s\n", v.describe().c_str());
  }
  std::fprintf(stderr, "glassbox: trained %d steps in %s; model in %s\n", trainer->step(),
               duration(elapsed_before + seconds()).c_str(), out.string().c_str());
  return 0;
}
