// The glassbox command line: run decoder-only transformers (GPT-2, Llama, Mistral, Qwen, GPT-NeoX,
// GPT-Neo) from a Hugging Face model directory.
//
//   glassbox generate   [-m DIR] (-p PROMPT | --tokens 1,2,3) [-n N] [--temperature T] [--top-k K]
//                       [--top-p P] [--repetition-penalty R] [--seed S] [--allow-special]
//                       [--context-full slide|stop] [--head-mask L:H,...] [--steer L:C:PLUS/MINUS]
//                       (sampling defaults and stop ids from generation_config.json where it exists)
//   glassbox chat       [-m DIR] [--messages FILE] [--print-prompt] [--no-generation-prompt]
//                       [--date YYYY-MM-DD] [--template-var NAME=VALUE]... [--system TEXT]
//                       [generate's sampling options]      (see chat_command.cpp)
//   glassbox forward    [-m DIR] (-p PROMPT | --tokens 1,2,3) [--attention] [--mask causal|bidirectional]
//                       [--hidden-states] [--lens K] [--head-mask L:H,...]
//                       [--saliency [--target TOK]] [--neurons K] [--neuron L:N]
//   glassbox forward    [-m DIR] --batch FILE          FILE: JSON array of id arrays, one pass
//   glassbox patch      [-m DIR] (--clean TEXT | --clean-tokens IDS) (--corrupted TEXT | --corrupted-tokens IDS)
//                       --answer TOK --wrong TOK [--what resid_pre,attn_out,mlp_out,head]   (JSON)
//   glassbox attribute  [-m DIR] (-p TEXT | --tokens IDS) --answer TOK [--wrong TOK]   (JSON)
//                       TOK: a token's text (" Mary") or #id (see experiment_commands.cpp)
//   glassbox classify   [-m DIR] (-p TEXT | --tokens IDS | --input FILE)   a classifier's label, as JSON
//   glassbox fill-mask  [-m DIR] -p "TEXT WITH <|mask|>" [--top K]     a masked LM's guesses, as JSON
//   glassbox tokenize   [-m DIR] [--allow-special] [--add-special]   text on stdin -> JSON ids on stdout
//   glassbox detokenize [-m DIR]                       JSON ids on stdin -> text on stdout
//   glassbox train-tokenizer --vocab-size N -o DIR FILE...
//   glassbox train -o DIR [options] FILE_OR_FOLDER...    (see train_command.cpp)
//   glassbox evaluate [-m DIR] FILE_OR_FOLDER...           -> JSON: loss, bits per byte
//   (generate, chat, forward, patch, attribute, classify, fill-mask, evaluate: [--quantize none|int8|int4]
//    [--arithmetic fused|portable] [--threads N] [--max-memory MB] [--context N])
//   GLASSBOX_ARITHMETIC=portable in the environment: --arithmetic's default
//
// Errors go to stderr as one line "glassbox: error: ..." with exit code 1 (2 for bad usage).
#include <CLI/CLI.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/generate.h"
#include "glassbox/memory.h"
#include "glassbox/model.h"
#include "glassbox/quoted.h"
#include "glassbox/threads.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "chat_command.h"
#include "classify_command.h"
#include "decimal_options.h"
#include "evaluate_command.h"
#include "experiment_commands.h"
#include "fill_mask_command.h"
#include "forward_command.h"
#include "output_dir.h"
#include "sampling_options.h"
#include "text_files.h"
#include "token_args.h"
#include "train_command.h"

#ifndef GLASSBOX_DEFAULT_MODEL_DIR
#define GLASSBOX_DEFAULT_MODEL_DIR "web/models/brown-small"
#endif

namespace {

using namespace glassbox;

void write_text(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

void check_model_dir(const std::string& dir) {
  if (dir.empty()) throw InvalidArgument("-m needs a model directory, got an empty value");
  if (dir == GLASSBOX_DEFAULT_MODEL_DIR && !std::filesystem::exists(dir))
    throw Error("no model directory given and the default model " + dir + " does not exist; pass -m DIR");
}

// What the user gave as the prompt: text (-p) or ids (--tokens).
struct Prompt {
  std::optional<std::string> text;
  std::string ids;
  bool allow_special = false;

  // Text goes through the model directory's tokenizer.
  std::vector<std::int32_t> tokens(const std::optional<Tokenizer>& tokenizer) const {
    if (!text) return parse_ids(ids);
    return tokenizer->encode(*text, allow_special);
  }
};

int run_generate(const std::string& model_dir, const LoadOptions& load, const Prompt& prompt,
                 const SamplingOptions& sampling, const std::string& head_mask, const std::string& steer) {
  check_sampling_options(sampling);
  check_model_dir(model_dir);
  generate_options(model_dir, sampling, 0);   // with generation_config.json, before the (possibly slow) model load
  const std::optional<SteerArg> steering = steer.empty() ? std::nullopt : std::optional(parse_steer(steer));
  std::optional<Tokenizer> tokenizer;
  if (prompt.text || steering) tokenizer = Tokenizer::load(model_dir);
  const auto ids = prompt.tokens(tokenizer);
  Model model = Model::load(model_dir, load);
  GenerateOptions options = generate_options(model_dir, sampling, std::random_device{}(), model.config().eos_token_ids);
  options.head_mask = parse_head_mask(head_mask, model.config());
  if (steering) {   // v = C * (resid_pre_L(A)[last] - resid_pre_L(B)[last]), added at every position
    options.steer = steering_vector(model, steering->layer, steering->coefficient,
                                    tokenizer->encode(steering->plus, prompt.allow_special),
                                    tokenizer->encode(steering->minus, prompt.allow_special));
    options.steer_layer = steering->layer;
  }
  options.tokenizer_size = tokenizer ? tokenizer->vocab_size() : tokenizer_size_of(model_dir);

  std::optional<StreamingDecoder> decoder;
  if (tokenizer) decoder.emplace(*tokenizer);
  int produced = 0;
  const auto start = std::chrono::steady_clock::now();
  const StopReason reason = generate(model, ids, options, [&](const GeneratedToken& t) {
    if (decoder)
      write_text(decoder->push(t.id));   // text: whole characters only
    else
      std::printf(produced ? " %d" : "%d", t.id);   // ids
    ++produced;
    std::fflush(stdout);   // stream: show each token as soon as it exists
    return true;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (decoder) write_text(decoder->finish());
  std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr, "glassbox: %d tokens in %.3f s (%.1f tokens/s), seed %llu, stopped: %s\n", produced, seconds,
               produced / (seconds > 0 ? seconds : 1e-9), static_cast<unsigned long long>(options.sampling.seed),
               std::string(stop_reason_name(reason)).c_str());
  return 0;
}

int run_tokenize(const std::string& model_dir, bool allow_special, bool add_special) {
  check_model_dir(model_dir);
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  const auto ids = tokenizer.encode(read_stdin(), allow_special, add_special);
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  std::printf("%s]\n", out.c_str());
  return 0;
}

int run_detokenize(const std::string& model_dir) {
  check_model_dir(model_dir);
  const Tokenizer tokenizer = Tokenizer::load(model_dir);
  const std::string input = read_stdin();
  const auto json = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) throw InvalidArgument("detokenize reads a JSON array of token ids, like [464, 2068]");
  std::vector<std::int32_t> ids;
  for (const auto& v : json) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < INT32_MIN || v.get<std::int64_t>() > INT32_MAX)
      throw InvalidArgument("detokenize: " + v.dump() + " is not a token id");
    ids.push_back(v.get<std::int32_t>());
  }
  write_text(tokenizer.decode(ids));
  return 0;
}

int run_train_tokenizer(const std::vector<std::string>& inputs, int vocab_size, bool mask_token,
                        const std::string& out_dir, bool force) {
  // Before the text is read and the vocabulary learned: where the result goes.
  check_output_dir(out_dir, "-o");
  for (const char* name : {"vocab.json", "merges.txt"})
    if (const auto file = std::filesystem::path(out_dir) / name; std::filesystem::exists(file) && !force)
      throw Error(file.string() +
                  " exists: pass --force to replace it (and the other tokenizer file), or choose "
                  "another -o");
  std::string text;
  for (const auto& f : list_files(inputs)) {
    const std::string part = read_text(f);
    if (const auto bad = first_invalid_utf8(part))   // named here: the learner sees one text of all files
      throw Error(f.string() + ": not valid UTF-8 at byte " + std::to_string(*bad));
    text += part;
  }
  TokenizerTrainingOptions options;
  options.vocab_size = vocab_size;
  if (mask_token) options.special_tokens.push_back(std::string(kMaskToken));
  options.on_progress = [](int done, int total) { std::fprintf(stderr, "\rmerges %d/%d", done, total); };
  const TokenizerFiles result = train_tokenizer(text, options);
  save_tokenizer(result, out_dir);
  std::fprintf(stderr, "\nglassbox: %d merges learned from %zu bytes; wrote %s/vocab.json and merges.txt\n",
               result.merges, text.size(), out_dir.c_str());
  return 0;
}

}   // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "glassbox: run decoder-only transformers (GPT-2, Llama, Mistral, Qwen, GPT-NeoX, GPT-Neo) and look inside them"};
  app.require_subcommand(1);
  std::string model_dir = GLASSBOX_DEFAULT_MODEL_DIR;
  Prompt prompt;
  auto add_model = [&](CLI::App* cmd) {
    cmd->add_option("-m,--model", model_dir,
                    "model directory (config.json, model.safetensors, tokenizer.json or vocab.json + merges.txt)")
        ->capture_default_str();
  };
  std::string quantize = "none";
  std::string arithmetic = "fused";
  int threads = 0;
  std::uint64_t max_memory_mb = 0;
  int context = 0;
  auto add_quantize = [&](CLI::App* cmd) {   // and threads, memory, context: the options of commands that run the model
    cmd->add_option("--quantize", quantize,
                    "weights in memory: none (F32), int8 or int4 (blocks of 32, ~3.6x or ~6.4x fewer bytes)")
        ->capture_default_str();
    cmd->add_option("--arithmetic", arithmetic,
                    "F32 products: fused (one rounding per multiply-add, on CPUs with FMA: faster prompts) or portable "
                    "(the same bits as the WebAssembly build and every CPU)")
        ->envname("GLASSBOX_ARITHMETIC")
        ->capture_default_str();
    cmd->add_option("--threads", threads, "threads for the forward pass (0: one per core)")->capture_default_str();
    cmd->add_option("--max-memory", max_memory_mb,
                    "the most memory the model may take, in MB (0: what the system has available); a model that "
                    "needs more is refused before it is loaded")
        ->capture_default_str();
    cmd->add_option("--context", context,
                    "the most positions a sequence holds, its KV cache sized for them (0: the model's n_positions, at "
                    "most 4096)")
        ->capture_default_str();
  };
  auto add_prompt = [&](CLI::App* cmd) {
    auto* p =
        cmd->add_option("-p,--prompt", prompt.text, "prompt text (tokenized with the model's vocab.json/merges.txt)");
    auto* t = cmd->add_option("--tokens", prompt.ids, "prompt as comma-separated token ids, e.g. 464,2068");
    p->excludes(t);
    t->excludes(p);
    cmd->add_flag("--allow-special", prompt.allow_special, "read <|endoftext|> in the prompt as the special token");
  };

  auto* gen = app.add_subcommand("generate", "generate text after a prompt, streaming it");
  add_model(gen);
  add_quantize(gen);
  add_prompt(gen);
  SamplingOptions sampling;
  add_sampling_options(gen, sampling, 64);
  std::string head_mask;
  const char* head_mask_help =
      "switch heads off: layer:head pairs, e.g. 0:3,5:1 (Hugging Face's head_mask, 0 for those)";
  gen->add_option("--head-mask", head_mask, head_mask_help);
  std::string steer;
  gen->add_option("--steer", steer,
                  "steer by activation addition, LAYER:COEFFICIENT:PLUS/MINUS: COEFFICIENT times the difference of "
                  "the residual streams entering block LAYER at the last tokens of the prompts PLUS and MINUS, added "
                  "at every position (e.g. 6:4:Love/Hate)");

  auto* fwd = app.add_subcommand("forward", "print logits (and attention) for a prompt as JSON");
  add_model(fwd);
  add_quantize(fwd);
  add_prompt(fwd);
  ForwardRequest forward;
  auto* attention_flag =
      fwd->add_flag("--attention", forward.attention, "also print attention probabilities [layer][head][query][key]");
  auto* mask_option =
      fwd->add_option("--mask", forward.mask,
                      "causal (the GPT's) or bidirectional: every position sees every other, same weights")
          ->capture_default_str();
  auto* hidden_flag =
      fwd->add_flag("--hidden-states", forward.hidden_states,
                    "also print the residual stream [layer + 1][position][n_embd] (Hugging Face's hidden_states)");
  auto* lens_option = fwd->add_option(
      "--lens", forward.lens, "also print the logit lens: each layer's K most likely next tokens [layer][position]");
  auto* head_mask_option = fwd->add_option("--head-mask", forward.head_mask, head_mask_help);
  auto* saliency_flag = fwd->add_flag("--saliency", forward.saliency,
                                      "also print \"saliency\": [T], gradient x input of log p(target) at each "
                                      "position, and \"target\" (gpt2, openai-gpt)");
  fwd->add_option("--target", forward.target,
                  "saliency's target token: its text or #id (default: the last position's "
                  "most likely next token)")
      ->needs(saliency_flag);
  auto* neurons_option =
      fwd->add_option("--neurons", forward.neurons,
                      "also print \"neurons\": [layer][position] the K most active MLP neurons {index, value}");
  auto* neuron_option = fwd->add_option("--neuron", forward.neuron,
                                        "also print \"neuron\": [T], one MLP neuron LAYER:INDEX at each position");
  std::string batch_file;
  auto* batch_option =
      fwd->add_option("--batch", batch_file,
                      "JSON file: an array of token-id arrays, run as one batch -> logits [sequence][position][vocab]");
  batch_option->excludes("-p")->excludes("--tokens")->excludes(attention_flag)->excludes(mask_option);
  batch_option->excludes(hidden_flag)->excludes(lens_option)->excludes(head_mask_option);
  batch_option->excludes(saliency_flag)->excludes(neurons_option)->excludes(neuron_option);

  PatchRequest patch_request;
  auto* patch_cmd = add_patch_command(app, patch_request);
  add_model(patch_cmd);
  add_quantize(patch_cmd);
  AttributeRequest attribute_request;
  auto* attribute_cmd = add_attribute_command(app, attribute_request);
  add_model(attribute_cmd);
  add_quantize(attribute_cmd);

  auto* cls = app.add_subcommand("classify", "a classifier's label for a text, or for each line of a file (JSON)");
  add_model(cls);
  add_quantize(cls);
  add_prompt(cls);
  std::string classify_input;
  cls->add_option("--input", classify_input, "one text per line, or \"label<TAB>text\" lines (prints the accuracy)")
      ->excludes("-p")
      ->excludes("--tokens");
  cls->add_option("--head-mask", head_mask, head_mask_help);

  auto* fill = app.add_subcommand("fill-mask", "a masked LM's most likely tokens where the text has <|mask|> (JSON)");
  add_model(fill);
  add_quantize(fill);
  add_prompt(fill);
  int fill_top = 5;
  fill->add_option("--top", fill_top, "candidates per mask")->capture_default_str();

  auto* tok = app.add_subcommand("tokenize", "text on stdin -> JSON array of token ids");
  add_model(tok);
  tok->add_flag("--allow-special", prompt.allow_special,
                "match special tokens written in the text (<|endoftext|>, <|im_start|>, ...) to their ids");
  bool add_special = false;
  tok->add_flag("--add-special", add_special,
                "add the tokenizer's own tokens around the text (tokenizer.json's post-processor: BOS, ...); with "
                "--allow-special this is transformers' tokenizer(text)");
  ChatRequest chat;
  auto* chat_cmd = add_chat_command(app, chat);
  add_model(chat_cmd);
  add_quantize(chat_cmd);

  auto* detok = app.add_subcommand("detokenize", "JSON array of token ids on stdin -> text");
  add_model(detok);

  auto* train_tok = app.add_subcommand("train-tokenizer", "learn a byte-level BPE vocabulary from text files");
  std::vector<std::string> files;
  int vocab_size = glassbox::TokenizerTrainingOptions{}.vocab_size;
  std::string out_dir;
  train_tok->add_option("files", files, "UTF-8 text files, or folders of them")->required();
  train_tok->add_option("--vocab-size", vocab_size, "tokens in the vocabulary, with the 256 bytes and <|endoftext|>")
      ->capture_default_str();
  train_tok->add_option("-o,--output", out_dir, "directory to write vocab.json and merges.txt to")->required();
  bool force = false;
  train_tok->add_flag("--force", force, "replace the vocab.json and merges.txt already in the output directory");
  bool mask_token = false;
  train_tok->add_flag("--mask-token", mask_token,
                      "also <|mask|>, the mask of a masked LM (as train --task mlm learns its vocabulary)");

  TrainCommand train;
  add_train_command(app, train);

  auto* eval = app.add_subcommand("evaluate", "how well the model predicts text: nats per token, bits per byte (JSON)");
  add_model(eval);
  add_quantize(eval);
  std::vector<std::string> eval_files;
  eval->add_option("text", eval_files, "UTF-8 text files, or folders of them")->required();

  make_numbers_decimal(app);

  // CLI11 would only say "A subcommand is required"; name the word it did not know.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* cmd : app.get_subcommands([](const CLI::App*) { return true; }))
      known |= cmd->get_name() == argv[1];
    if (!known) {
      std::fprintf(
          stderr,
          "glassbox: error: unknown command '%s' (commands: generate, chat, forward, patch, attribute, classify, "
          "fill-mask, tokenize, detokenize, train-tokenizer, train, evaluate; see --help)\n",
          argv[1]);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);   // --help
    std::string message = e.what();
    // A decimal number (make_numbers_decimal) that CLI11 still cannot convert does not fit the
    // option's type: "Could not convert: --max-tokens = 99999999999".
    const std::string prefix = "Could not convert: ";
    if (dynamic_cast<const CLI::ConversionError*>(&e) && message.rfind(prefix, 0) == 0) {
      const std::size_t eq = message.find(" = ");
      if (eq != std::string::npos)
        message = message.substr(prefix.size(), eq - prefix.size()) + ": " + message.substr(eq + 3) +
                  " is out of range for this option";
    }
    std::fprintf(stderr, "glassbox: error: %s (see --help)\n", message.c_str());
    return 2;
  }
  try {
    if ((*gen || *fill || (*fwd && batch_file.empty()) || (*cls && classify_input.empty())) && !prompt.text &&
        prompt.ids.empty())
      throw InvalidArgument(*fwd   ? "give a prompt: -p TEXT, --tokens IDS or --batch FILE"
                            : *cls ? "give a text: -p TEXT, --tokens IDS or --input FILE"
                                   : "give a prompt: -p TEXT or --tokens IDS");
    const LoadOptions load{parse_quantization(quantize), megabytes_to_bytes(max_memory_mb), context,
                           parse_arithmetic(arithmetic)};
    set_num_threads(threads);
    if (*gen) return run_generate(model_dir, load, prompt, sampling, head_mask, steer);
    if (*patch_cmd || *attribute_cmd) {
      check_model_dir(model_dir);
      return *patch_cmd ? run_patch(model_dir, load, patch_request) : run_attribute(model_dir, load, attribute_request);
    }
    if (*chat_cmd) {
      check_sampling_options(chat.sampling);
      check_model_dir(model_dir);
      return run_chat(model_dir, load, chat);
    }
    if (*fwd) {
      check_model_dir(model_dir);
      if (!batch_file.empty()) return run_forward_batch(model_dir, load, batch_file);
      std::optional<Tokenizer> tokenizer;
      if (prompt.text || (forward.target && !is_token_id(*forward.target))) tokenizer = Tokenizer::load(model_dir);
      if (forward.target) forward.target_id = parse_token(*forward.target, "--target", tokenizer, prompt.allow_special);
      return run_forward(model_dir, load, prompt.tokens(tokenizer), forward);
    }
    if (*cls || *fill) {
      check_model_dir(model_dir);
      const std::optional<std::vector<std::int32_t>> ids =
          prompt.text || !classify_input.empty() ? std::nullopt : std::optional(parse_ids(prompt.ids));
      if (*cls) return run_classify(model_dir, load, prompt.text, ids, classify_input, head_mask);
      return run_fill_mask(model_dir, load, prompt.text, ids, fill_top);
    }
    if (*tok) return run_tokenize(model_dir, prompt.allow_special, add_special);
    if (*detok) return run_detokenize(model_dir);
    if (app.got_subcommand("train")) return run_train(train);
    if (*eval) return run_evaluate(model_dir, load, eval_files);
    return run_train_tokenizer(files, vocab_size, mask_token, out_dir, force);
  } catch (const glassbox::Error& e) {
    std::fprintf(stderr, "glassbox: error: %s\n", e.what());
  } catch (const std::filesystem::filesystem_error& e) {   // a file or folder that could not be made or written
    std::fprintf(stderr, "glassbox: error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "glassbox: error: out of memory (try a smaller model, batch or text)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: internal error: %s\n", e.what());
  }
  return 1;
}
