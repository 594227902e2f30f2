// glassbox chat, tokenize --add-special and generation_config.json, run as a user would: the
// rendered prompt against python3-jinja2's bytes (tests/fixtures/chat/), the reply against
// generate over the same ids, generation_config.json's defaults under the flags.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::fixture_dir;
using test::run_cli;
using test::TempDir;

nlohmann::ordered_json chat_fixture(const std::string& name) {
  return nlohmann::ordered_json::parse(test::read_file(fixture_dir("chat/" + name + ".json")));
}

// A chat model: llama-llama3-bf16's weights with the token embedding (tied to the output) repeated
// to the vocabulary of bytelevel-template-tiny's tokenizer.json, plus Llama 3's header tokens as
// special added tokens, and tokenizer_config.json with a fixture's template and tokens.
class ChatModel {
 public:
  static constexpr int kVocab = 665;   // 663 of the tiny tokenizer + <|start_header_id|>, <|end_header_id|>

  explicit ChatModel(const std::string& template_name = "llama3") {
    const fs::path from = fixture_dir("llama-llama3-bf16");
    auto tensors = test::read_tensors(from / "model.safetensors");
    for (auto& t : tensors) {
      if (t.name != "model.embed_tokens.weight") continue;
      const std::size_t row = t.bytes.size() / std::size_t(t.shape[0]);
      std::string rows;
      for (int i = 0; i < kVocab; ++i) rows += t.bytes.substr(std::size_t(i % t.shape[0]) * row, row);
      t.bytes = rows;
      t.shape[0] = kVocab;
    }
    test::write_file(path() / "model.safetensors", test::make_safetensors(tensors));
    auto config = test::read_json(from / "config.json");
    config["vocab_size"] = kVocab;
    config["bos_token_id"] = 659;
    config["eos_token_id"] = 660;   // <|eot_id|>
    test::write_file(path() / "config.json", config.dump(2));
    auto tokenizer = test::read_json(fixture_dir("tokenizer-json/bytelevel-template-tiny") / "tokenizer.json");
    for (const auto& [id, content] : {std::pair{663, "<|start_header_id|>"}, {664, "<|end_header_id|>"}})
      tokenizer["added_tokens"].push_back({{"id", id},
                                           {"content", content},
                                           {"single_word", false},
                                           {"lstrip", false},
                                           {"rstrip", false},
                                           {"normalized", false},
                                           {"special", true}});
    test::write_file(path() / "tokenizer.json", tokenizer.dump());
    const auto fixture = chat_fixture(template_name);
    nlohmann::ordered_json tokenizer_config = {{"chat_template", fixture["template"]}};
    if (!fixture["bos_token"].is_null()) tokenizer_config["bos_token"] = fixture["bos_token"];
    if (!fixture["eos_token"].is_null()) tokenizer_config["eos_token"] = fixture["eos_token"];
    test::write_file(path() / "tokenizer_config.json", tokenizer_config.dump(2));
  }
  const fs::path& path() const { return dir_.path(); }
  std::string str() const { return dir_.path().string(); }
  void generation_config(const nlohmann::json& j) const {
    test::write_file(path() / "generation_config.json", j.dump());
  }

 private:
  TempDir dir_;
};

std::string ok(const test::CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::vector<std::int32_t> ids_of(const std::string& json_ids) {
  return nlohmann::json::parse(json_ids).get<std::vector<std::int32_t>>();
}

std::string joined(const std::vector<std::int32_t>& ids, const char* sep = ",") {
  std::string s;
  for (auto id : ids) s += (s.empty() ? "" : sep) + std::to_string(id);
  return s;
}

// The one-line error the CLI gives (exit code 1), holding `fragment`.
void expect_error(const std::vector<std::string>& args, const std::string& fragment, const std::string& in = "") {
  const auto r = run_cli(args, in);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("glassbox: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

// --print-prompt prints python3-jinja2's bytes for every case of every chat fixture (templates
// that raise: the template's message on the error line).
TEST(CliChat, PrintPromptIsJinja2sRendering) {
  int checked = 0;
  for (const char* name :
       {"smollm2", "qwen2.5", "qwen3", "llama3", "llama3.2", "mistral-7b-instruct-v0.1", "mistral-nemo", "zephyr"}) {
    const auto fixture = chat_fixture(name);
    TempDir dir;
    nlohmann::ordered_json config = {{"chat_template", fixture["template"]}};
    if (!fixture["bos_token"].is_null()) config["bos_token"] = fixture["bos_token"];
    if (!fixture["eos_token"].is_null()) config["eos_token"] = fixture["eos_token"];
    test::write_file(dir.path() / "tokenizer_config.json", config.dump());
    for (const auto& c : fixture["cases"]) {
      SCOPED_TRACE(std::string(name) + ": " + c["name"].get<std::string>());
      test::write_file(dir.path() / "messages.json", c["messages"].dump());
      std::vector<std::string> args = {"chat",
                                       "-m",
                                       dir.path().string(),
                                       "--messages",
                                       (dir.path() / "messages.json").string(),
                                       "--print-prompt",
                                       "--date",
                                       fixture["date"].get<std::string>()};
      if (!c["add_generation_prompt"].get<bool>()) args.push_back("--no-generation-prompt");
      for (const auto& [k, v] : c["vars"].items()) args.insert(args.end(), {"--template-var", k + "=" + v.dump()});
      const auto r = run_cli(args);
      if (c.contains("error")) {
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("tokenizer_config.json: chat_template, line "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(": " + c["error"].get<std::string>() + "\n"), std::string::npos) << r.err;
      } else {
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, c["expected"].get<std::string>());
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 120);
}

TEST(CliChat, ChatTemplateJinjaAndTemplateVariables) {
  TempDir dir;
  test::write_file(dir.path() / "chat_template.jinja",
                   "{{ messages[0].content }}|{{ flag }}|{{ n + 1 }}|{{ text }}|{{ list|length }}|"
                   "{{ strftime_now('%A %d %B %Y') }}{% if add_generation_prompt %}|prompt{% endif %}\n");
  test::write_file(dir.path() / "m.json", R"([{"role": "user", "content": "Hi"}])");
  const std::string m = (dir.path() / "m.json").string();
  EXPECT_EQ(ok(run_cli({"chat", "-m", dir.path().string(), "--messages", m, "--print-prompt", "--date", "2025-02-03",
                        "--template-var", "flag=false", "--template-var", "n=41", "--template-var", "text=plain words",
                        "--template-var", "list=[1,2,3]"})),
            "Hi|False|42|plain words|3|Monday 03 February 2025|prompt");
  // --system comes first; --no-generation-prompt drops the assistant's header.
  EXPECT_EQ(ok(run_cli({"chat", "-m", dir.path().string(), "--messages", m, "--print-prompt", "--date", "2025-02-03",
                        "--template-var", "flag=1", "--template-var", "n=0", "--template-var", "text=\"quoted\"",
                        "--template-var", "list={}", "--system", "Be brief.", "--no-generation-prompt"})),
            "Be brief.|1|1|quoted|0|Monday 03 February 2025");
}

TEST(CliChat, TokenizeAddSpecialAddsThePostProcessorsBos) {
  const std::string dir = fixture_dir("tokenizer-json/bytelevel-template-tiny").string();
  const auto plain = ids_of(ok(run_cli({"tokenize", "-m", dir}, "Hello<|eot_id|>")));
  const auto special = ids_of(ok(run_cli({"tokenize", "-m", dir, "--allow-special"}, "Hello<|eot_id|>")));
  const auto both = ids_of(ok(run_cli({"tokenize", "-m", dir, "--allow-special", "--add-special"}, "Hello<|eot_id|>")));
  const auto bos_only = ids_of(ok(run_cli({"tokenize", "-m", dir, "--add-special"}, "Hello<|eot_id|>")));
  EXPECT_EQ(special.back(), 660);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 660), 0);
  std::vector<std::int32_t> want = {659};   // <|begin_of_text|>, then the text's ids
  want.insert(want.end(), special.begin(), special.end());
  EXPECT_EQ(both, want);
  want = {659};
  want.insert(want.end(), plain.begin(), plain.end());
  EXPECT_EQ(bos_only, want);
}

// The ids of the rendered prompt: chat --print-prompt, then tokenize --allow-special, against
// @huggingface/tokenizers over python3-jinja2's text (tests/fixtures/chat/ids/, written by
// scripts/make_chat_ids_fixtures.mjs) with the real Qwen3 and Llama 3 tokenizer files.
TEST(CliChat, RenderedPromptTokenizesAsTheTokenizersLibrary) {
  for (const char* name : {"qwen3", "llama3"}) {
    const auto ids = test::read_json(fixture_dir(std::string("chat/ids/") + name + ".json"));
    const auto fixture = chat_fixture(name);
    const fs::path files =
        fs::path(GLASSBOX_FIXTURES_DIR).parent_path().parent_path() / ids["tokenizer_json"]["path"].get<std::string>();
    ASSERT_TRUE(fs::exists(files)) << files << " is missing: run npm ci (or scripts/setup)";
    TempDir dir;
    fs::copy_file(files, dir.path() / "tokenizer.json");
    fs::copy_file(files.parent_path() / "tokenizer_config.json", dir.path() / "tokenizer_config.json");
    ASSERT_EQ(ids["cases"].size(), fixture["cases"].size());
    int checked = 0;
    for (std::size_t i = 0; i < fixture["cases"].size() && checked < 3; ++i) {
      // Three cases per tokenizer here (each run loads the tokenizer); all of them: ChatIds.
      const auto& c = fixture["cases"][i];
      if (c.contains("error")) continue;
      ASSERT_EQ(ids["cases"][i]["name"], c["name"]);
      const auto& want = ids["cases"][i]["ids"];
      test::write_file(dir.path() / "m.json", c["messages"].dump());
      std::vector<std::string> args = {"chat",
                                       "-m",
                                       dir.path().string(),
                                       "--messages",
                                       (dir.path() / "m.json").string(),
                                       "--print-prompt",
                                       "--date",
                                       fixture["date"].get<std::string>()};
      if (!c["add_generation_prompt"].get<bool>()) args.push_back("--no-generation-prompt");
      for (const auto& [k, v] : c["vars"].items()) args.insert(args.end(), {"--template-var", k + "=" + v.dump()});
      const std::string prompt = ok(run_cli(args));
      EXPECT_EQ(ids_of(ok(run_cli({"tokenize", "-m", dir.path().string(), "--allow-special"}, prompt))),
                want.get<std::vector<std::int32_t>>())
          << name << ": " << c["name"];
      ++checked;
    }
    EXPECT_EQ(checked, 3);
  }
}

// The reply: generate's greedy tokens over the chat's prompt ids, stopped at
// generation_config.json's eos id, which do_sample false makes greedy (with the file's repetition
// penalty: this tiny model's greedy text repeats one token without it).
TEST(CliChat, ReplyIsGenerateOverThePromptUpToGenerationConfigsEos) {
  const ChatModel model;
  TempDir tmp;
  test::write_file(tmp.path() / "m.json", R"([{"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Say the jury said."}])");
  const std::string m = (tmp.path() / "m.json").string();
  const std::string prompt = ok(run_cli({"chat", "-m", model.str(), "--messages", m, "--print-prompt"}));
  EXPECT_NE(prompt.find("<|start_header_id|>assistant<|end_header_id|>\n\n"), std::string::npos) << prompt;
  const auto prompt_ids = ids_of(ok(run_cli({"tokenize", "-m", model.str(), "--allow-special"}, prompt)));
  EXPECT_EQ(prompt_ids[0], 659);   // the template's <|begin_of_text|>, once: nothing is added
  EXPECT_EQ(std::count(prompt_ids.begin(), prompt_ids.end(), 659), 1);
  EXPECT_EQ(std::count(prompt_ids.begin(), prompt_ids.end(), 663), 3);   // <|start_header_id|> as a token
  std::vector<std::int32_t> greedy;
  for (const auto& id : nlohmann::json::parse("[" + [&] {
         std::string out = ok(run_cli({"generate", "-m", model.str(), "--tokens", joined(prompt_ids), "-n", "12",
                                       "--temperature", "0", "--repetition-penalty", "4"}));
         std::replace(out.begin(), out.end(), ' ', ',');
         return out;
       }() + "]"))
    greedy.push_back(id.get<std::int32_t>());
  ASSERT_EQ(greedy.size(), 12u);
  std::size_t stop = 1;   // the first token that differs from all before it: the file's eos
  while (stop < greedy.size() && std::count(greedy.begin(), greedy.begin() + stop, greedy[stop])) ++stop;
  ASSERT_LT(stop, greedy.size()) << joined(greedy);
  model.generation_config(
      {{"do_sample", false}, {"temperature", 0.6}, {"repetition_penalty", 4}, {"eos_token_id", {9999, greedy[stop]}}});
  const auto r = run_cli({"chat", "-m", model.str(), "--messages", m, "-n", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::int32_t> head(greedy.begin(), greedy.begin() + stop);
  EXPECT_EQ(r.out, ok(run_cli({"detokenize", "-m", model.str()}, "[" + joined(head) + "]")) + "\n");
  EXPECT_NE(r.err.find(std::to_string(stop) + " tokens in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped: end_of_text"), std::string::npos) << r.err;
  // generate reads the same file: greedy, stopped at the same id.
  const auto g = run_cli({"generate", "-m", model.str(), "--tokens", joined(prompt_ids), "-n", "12"});
  EXPECT_EQ(g.out, joined(head, " ") + "\n");
  EXPECT_NE(g.err.find("stopped: end_of_text"), std::string::npos) << g.err;
  // Without the eos it runs to -n.
  model.generation_config({{"do_sample", false}, {"repetition_penalty", 4}});
  const auto full = run_cli({"generate", "-m", model.str(), "--tokens", joined(prompt_ids), "-n", "12"});
  EXPECT_EQ(full.out, joined(greedy, " ") + "\n");
}

TEST(CliChat, RepetitionPenaltyFromTheFileOrTheFlag) {
  const ChatModel model;
  const std::vector<std::string> gen = {"generate", "-m", model.str(),     "--tokens", "659,5,6,7,5,6,7",
                                        "-n",       "16", "--temperature", "0"};
  const std::string plain = ok(run_cli(gen));
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = gen;
    args.insert(args.end(), extra.begin(), extra.end());
    return ok(run_cli(args));
  };
  const std::string penalised = with({"--repetition-penalty", "3"});
  EXPECT_NE(penalised, plain);
  EXPECT_EQ(with({"--repetition-penalty", "1"}), plain);
  model.generation_config({{"repetition_penalty", 3}});
  EXPECT_EQ(ok(run_cli(gen)), penalised);                  // the file's default
  EXPECT_EQ(with({"--repetition-penalty", "1"}), plain);   // the flag beats it
}

// Interactive: each stdin line is a user turn; each reply is what chat --messages gives for the
// conversation so far (the earlier replies in it).
TEST(CliChat, InteractiveKeepsTheConversation) {
  const ChatModel model;
  model.generation_config({{"do_sample", false}});
  const auto r = run_cli({"chat", "-m", model.str(), "-n", "6", "--system", "Be brief."}, "Hello\nAnd then?\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto newline = r.out.find('\n');
  ASSERT_NE(newline, std::string::npos);
  const std::string first = r.out.substr(0, newline), second = r.out.substr(newline + 1);
  TempDir tmp;
  nlohmann::json messages = {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hello"}}};
  test::write_file(tmp.path() / "m.json", messages.dump());
  EXPECT_EQ(ok(run_cli({"chat", "-m", model.str(), "-n", "6", "--messages", (tmp.path() / "m.json").string()})),
            first + "\n");
  messages.push_back({{"role", "assistant"}, {"content", first}});
  messages.push_back({{"role", "user"}, {"content", "And then?"}});
  test::write_file(tmp.path() / "m.json", messages.dump());
  EXPECT_EQ(ok(run_cli({"chat", "-m", model.str(), "-n", "6", "--messages", (tmp.path() / "m.json").string()})),
            second);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;   // one line of figures per reply
  EXPECT_EQ(ok(run_cli({"chat", "-m", model.str()}, "")), "");           // EOF at once: no turn
}

TEST(CliChat, UsageErrors) {
  const ChatModel model;
  expect_error({"chat", "-m", model.str(), "--print-prompt"},
               "--print-prompt prints a conversation: give it with --messages FILE");
  expect_error({"chat", "-m", model.str(), "--messages", "/no/such/file.json", "--print-prompt"}, "/no/such/file.json");
  expect_error({"chat", "-m", model.str(), "--system", "a\xff"}, "--system is not valid UTF-8 at byte 1");
  expect_error({"chat", "-m", model.str()}, "line 1 is not valid UTF-8 at byte 1", "a\xff\nfine\n");
  expect_error({"chat", "-m", model.str(), "--template-var", "a=1", "--template-var", "a=2", "--print-prompt",
                "--messages", "x"},
               "--template-var \"a\" is given twice");
  TempDir tmp;
  test::write_file(tmp.path() / "m.json", R"([{"role": "user", "content": 1e999}])");
  expect_error({"chat", "-m", model.str(), "--messages", (tmp.path() / "m.json").string(), "--print-prompt"},
               "m.json: not valid JSON");
  test::write_file(tmp.path() / "m.json", R"([{"content": "no role"}])");
  expect_error({"chat", "-m", model.str(), "--messages", (tmp.path() / "m.json").string(), "--print-prompt"},
               "message 0 has no \"role\" string");
}

}   // namespace
}   // namespace glassbox
