#include "chat_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "glassbox/chat.h"
#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "text_files.h"

namespace {

using namespace glassbox;
using json = nlohmann::ordered_json;

void write_text(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The messages file: a JSON array of objects with a string "role" (the template decides which
// roles it accepts and what else a message may carry).
json read_messages(const std::string& file) {
  const std::string text = read_text(file);
  json messages;
  try {
    messages = json::parse(text);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number such as 1e999
    throw InvalidArgument(file + ": not valid JSON: " + e.what());
  }
  const char* shape = "must be a JSON array of messages like [{\"role\": \"user\", \"content\": \"Hi\"}]";
  if (!messages.is_array()) throw InvalidArgument(file + ": " + shape);
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (!messages[i].is_object() || !messages[i].contains("role") || !messages[i]["role"].is_string())
      throw InvalidArgument(file + ": message " + std::to_string(i) + " has no \"role\" string; the file " + shape);
  return messages;
}

// One model reply to the conversation so far, streamed to stdout; returns its text.
class Replier {
 public:
  Replier(const std::string& model_dir, const LoadOptions& load, const ChatRequest& request)
      : tokenizer_(Tokenizer::load(model_dir)) {
    generate_options(model_dir, request.sampling, 0);   // the settings, checked before the slow load
    model_.emplace(Model::load(model_dir, load));
    options_ = generate_options(model_dir, request.sampling, std::random_device{}(), model_->config().eos_token_ids);
    options_.tokenizer_size = tokenizer_.vocab_size();
  }

  std::string reply(const std::string& prompt) {
    // The template writes the special tokens (and the BOS where it wants one) as text, so they
    // are matched as tokens and nothing is added: apply_chat_template(tokenize=True) calls
    // tokenizer(text, add_special_tokens=False).
    const auto ids = tokenizer_.encode(prompt, /*allow_special=*/true, /*add_special=*/false);
    StreamingDecoder decoder(tokenizer_);
    std::string text;
    int produced = 0;
    const auto start = std::chrono::steady_clock::now();
    const StopReason reason = generate(*model_, ids, options_, [&](const GeneratedToken& t) {
      const std::string piece = decoder.push(t.id);
      write_text(piece);
      text += piece;
      ++produced;
      std::fflush(stdout);
      return true;
    });
    const std::string rest = decoder.finish();
    write_text(rest + "\n");
    std::fflush(stdout);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "glassbox: %zu prompt tokens, %d tokens in %.3f s (%.1f tokens/s), seed %llu, stopped: %s\n",
                 ids.size(), produced, seconds, produced / (seconds > 0 ? seconds : 1e-9),
                 static_cast<unsigned long long>(options_.sampling.seed),
                 std::string(stop_reason_name(reason)).c_str());
    ++options_.sampling.seed;   // the next turn draws other numbers, reproducibly from the same --seed
    return text + rest;
  }

 private:
  Tokenizer tokenizer_;
  std::optional<Model> model_;
  GenerateOptions options_;
};

// Text typed or given on the command line becomes a JSON string: it must be UTF-8.
std::string checked_utf8(const std::string& text, const std::string& what) {
  if (const auto bad = first_invalid_utf8(text))
    throw InvalidArgument(what + " is not valid UTF-8 at byte " + std::to_string(*bad));
  return text;
}

}   // namespace

std::string template_variables_json(const std::vector<std::string>& pairs) {
  json variables = json::object();
  for (const std::string& pair : pairs) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidArgument("--template-var needs NAME=VALUE, like enable_thinking=false, got " + quote_text(pair));
    const std::string name = checked_utf8(pair.substr(0, eq), "--template-var");
    const std::string value = checked_utf8(pair.substr(eq + 1), "--template-var " + name);
    if (variables.contains(name)) throw InvalidArgument("--template-var " + quote_text(name) + " is given twice");
    // JSON where it parses (false, 3, [..], "quoted"), else the text itself.
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    variables[name] = parsed.is_discarded() ? json(value) : std::move(parsed);
  }
  return variables.dump();
}

CLI::App* add_chat_command(CLI::App& app, ChatRequest& request) {
  auto* chat = app.add_subcommand(
      "chat", "talk to an instruct model through its chat template (interactive without --messages)");
  chat->add_option("--messages", request.messages_file,
                   "JSON file: the conversation, an array of {\"role\": ..., \"content\": ...}; without it, each line "
                   "of stdin is a user turn");
  chat->add_flag("--print-prompt", request.print_prompt,
                 "print the rendered conversation (exactly the template's bytes) instead of replying");
  chat->add_flag("--no-generation-prompt", request.no_generation_prompt,
                 "render without the assistant's header at the end (add_generation_prompt false)");
  chat->add_option("--date", request.date, "the day strftime_now gives the template, YYYY-MM-DD (default: today)");
  chat->add_option("--template-var", request.template_vars,
                   "a template variable NAME=VALUE, VALUE as JSON where it is (enable_thinking=false), else text; "
                   "repeatable");
  chat->add_option("--system", request.system, "a system message, put before the conversation");
  add_sampling_options(chat, request.sampling, 512);
  return chat;
}

int run_chat(const std::string& model_dir, const LoadOptions& load, const ChatRequest& request) {
  ChatRenderOptions render;
  render.add_generation_prompt = !request.no_generation_prompt;
  render.date = request.date;
  render.variables_json = template_variables_json(request.template_vars);
  if (request.print_prompt && request.messages_file.empty())
    throw InvalidArgument("--print-prompt prints a conversation: give it with --messages FILE");
  const auto chat = ChatTemplateFile::load(model_dir);
  if (!chat)
    throw Error(model_dir +
                " has no chat template: neither chat_template.jinja nor a \"chat_template\" in tokenizer_config.json");
  json messages = json::array();
  if (!request.system.empty())
    messages.push_back({{"role", "system"}, {"content", checked_utf8(request.system, "--system")}});
  if (!request.messages_file.empty())
    for (auto& m : read_messages(request.messages_file)) messages.push_back(std::move(m));

  if (request.print_prompt) {
    write_text(chat->render(messages.dump(), render));
    return 0;
  }
  if (!request.messages_file.empty()) {
    const std::string prompt = chat->render(messages.dump(), render);   // a refusal comes before the load
    Replier(model_dir, load, request).reply(prompt);
    return 0;
  }
  // Interactive: each line of stdin is the user's turn; the reply joins the conversation.
  std::optional<Replier> replier;
  std::string line;
  for (int turn = 1; std::getline(std::cin, line); ++turn) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    messages.push_back({{"role", "user"}, {"content", checked_utf8(line, "line " + std::to_string(turn))}});
    const std::string prompt = chat->render(messages.dump(), render);
    if (!replier) replier.emplace(model_dir, load, request);
    messages.push_back({{"role", "assistant"}, {"content", replier->reply(prompt)}});
  }
  return 0;
}
