// `glassbox train`: text in, a trained model directory (Hugging Face layout) out.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

struct TrainCommand {
  CLI::App* command = nullptr;       // the subcommand, to tell which options were given
  std::vector<std::string> inputs;   // text files or folders of them
  std::vector<std::string> valid;    // held-out text; default: the end of the training text
  double valid_fraction = 0.1;
  std::string output;
  bool resume = false;
  std::string task = "lm";   // lm, mlm or classify (train_tasks.h)
  double lm_weight = 0.5;    // classify: weight of the LM loss beside the label loss
  double mask_rate = 0.15;   // mlm: share of the tokens chosen to be predicted
  // tokenizer: reuse one, or learn one of this size from the training text
  std::string tokenizer_dir;
  int vocab_size = 4096;
  // start from another run's parameters (its output directory) instead of a random initialisation
  std::string init_from;
  // model shape
  std::string arch = "gpt2";
  std::string activation;   // empty: gpt2 gelu_new, openai-gpt gelu (both the tanh approximation)
  std::string positions = "learned";   // or sinusoidal (config.h: PositionEncoding)
  int n_layer = 4, n_embd = 256, n_head = 4, n_positions = 256;
  // optimisation (defaults: TrainingOptions)
  int steps = 2000, batch_size = 16, seq_len = 128, warmup = 100, threads = 2;
  double lr = 1e-3, min_lr = 1e-4, weight_decay = 0.1, grad_clip = 1.0, dropout = 0.0;
  std::uint64_t seed = 1;
  // bookkeeping
  int eval_every = 200;
  long eval_tokens = 0;   // 0: the whole validation text
  int checkpoint_every = 100;
  std::string save_dtype;     // f32, f16, bf16; empty: f32, or the resumed run's
  // stopping early (checkpointed; continue with --resume)
  int pause_at = 0;           // stop after this step (0: never)
  double time_limit = 0;      // minutes of training in this session (0: no limit)
};

void add_train_command(CLI::App& app, TrainCommand& cmd);
int run_train(const TrainCommand& cmd);
