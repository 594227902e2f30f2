// `glassbox train`: text in, a trained model directory (Hugging Face layout) out.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/training_setup.h"

struct TrainCommand {
  CLI::App* command = nullptr;       // the subcommand, to tell which options were given
  std::vector<std::string> inputs;   // text files or folders of them
  std::vector<std::string> valid;    // held-out text; default: the end of the training text
  std::string output;
  bool resume = false;
  std::string task = "lm";   // lm, mlm or classify (train_tasks.h)
  // tokenizer: reuse one, or learn one of settings.vocab_size tokens from the training text
  std::string tokenizer_dir;
  // start from another run's parameters (its output directory) instead of a random initialisation
  std::string init_from;
  // the shape, the optimisation, the held-out part and its evaluation, with their defaults
  glassbox::TrainingSettings settings;
  // bookkeeping
  int checkpoint_every = 100;
  std::string save_dtype;   // f32, f16, bf16; empty: f32, or the resumed run's
  // stopping early (checkpointed; continue with --resume)
  int pause_at = 0;        // stop after this step (0: never)
  double time_limit = 0;   // minutes of training in this session (0: no limit)
  // the most memory the run may take, in MB (0: what the system has available); checked first
  std::uint64_t max_memory_mb = 0;
};

void add_train_command(CLI::App& app, TrainCommand& cmd);
int run_train(const TrainCommand& cmd);
