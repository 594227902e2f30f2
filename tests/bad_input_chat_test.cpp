// The bad-input table (docs/bad-input.md), the rows of chat templates, messages and
// generation_config.json (C1-C10): each bad input, through the C++ API and the CLI, fails with the
// fragment its row shows, as one line on the CLI.
#include <gtest/gtest.h>

#include <cmath>

#include "glassbox/chat.h"
#include "glassbox/error.h"
#include "glassbox/generation_config.h"
#include "glassbox/sampler.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::expect_cli;
using test::expect_cpp;
using test::TempDir;

// A model directory holding tokenizer_config.json with this chat_template (and a messages file).
struct TemplateDir {
  TempDir dir;
  explicit TemplateDir(const nlohmann::json& chat_template) {
    test::write_file(dir.path() / "tokenizer_config.json",
                     nlohmann::json{{"chat_template", chat_template}, {"bos_token", "<s>"}}.dump());
  }
  std::string path() const { return dir.path().string(); }
  // The CLI's arguments to print these messages' prompt.
  std::vector<std::string> print(const std::string& messages) const {
    test::write_file(dir.path() / "messages.json", messages);
    return {"chat", "-m", path(), "--messages", (dir.path() / "messages.json").string(), "--print-prompt"};
  }
};

std::string mistral_template() {
  return test::read_json(test::fixture_dir("chat/mistral-7b-instruct-v0.1.json"))["template"].get<std::string>();
}

using test::has_cli;

const char* kTwoUserTurns = R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])";
const char* kToolTurn = R"([{"role": "user", "content": "a"}, {"role": "tool", "content": "b"}])";

TEST(BadInputChat, C1_TemplateRaises) {
  const TemplateDir t(mistral_template());
  expect_cli("C1", t.print(kTwoUserTurns));
  expect_cpp<TemplateError>("C1", [&] { ChatTemplateFile::load(t.path())->render(kTwoUserTurns); });
  try {
    ChatTemplateFile::load(t.path())->render(kTwoUserTurns);
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.problem(), "Conversation roles must alternate user/assistant/user/assistant/...");
  }
}

TEST(BadInputChat, C2_TemplateSyntaxError) {
  const TemplateDir t("{% for m in messages %}\n{{ m.content + }}\n{% endfor %}");
  expect_cli("C2", t.print(kTwoUserTurns));
  expect_cpp<TemplateError>("C2", [&] { ChatTemplateFile::load(t.path()); });
}

TEST(BadInputChat, C3_RoleTheTemplateForbids) {
  const TemplateDir t(mistral_template());
  expect_cli("C3", t.print(kToolTurn));
  expect_cpp<TemplateError>("C3", [&] { ChatTemplateFile::load(t.path())->render(kToolTurn); });
}

TEST(BadInputChat, C4_MalformedMessages) {
  const TemplateDir t("{{ messages|length }}");
  for (const char* bad : {R"([{"role": "user", "content": "a")", R"({"role": "user"})", R"([{"content": "a"}])"}) {
    if (!has_cli()) break;
    const auto r = test::run_cli(t.print(bad));
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("messages.json: "), std::string::npos) << r.err;   // names the file
  }
  expect_cli("C4", t.print(R"([{"role": "user", "content": "a")"));
  expect_cpp<InvalidArgument>("C4", [&] { ChatTemplateFile::load(t.path())->render(R"([{"role": "user")"); });
  EXPECT_THROW(ChatTemplateFile::load(t.path())->render(R"({"role": "user"})"), InvalidArgument);
}

TEST(BadInputChat, C5_NoChatTemplate) {
  TempDir dir;
  test::write_file(dir.path() / "tokenizer_config.json", R"({"bos_token": "<s>"})");
  test::write_file(dir.path() / "m.json", kToolTurn);
  const std::string m = (dir.path() / "m.json").string();
  expect_cli("C5", {"chat", "-m", dir.path().string(), "--messages", m, "--print-prompt"});
  expect_cli("C5", {"chat", "-m", dir.path().string(), "--messages", m});   // before anything is loaded
  fs::remove(dir.path() / "tokenizer_config.json");
  expect_cli("C5", {"chat", "-m", dir.path().string()}, "Hi\n");
  EXPECT_FALSE(ChatTemplateFile::load(dir.path()));
}

TEST(BadInputChat, C6_BadGenerationConfig) {
  const test::BrokenModel model(
      [](const fs::path& dir) { test::write_file(dir / "generation_config.json", R"({"temperature": "hot"})"); });
  expect_cli("C6", {"generate", "-m", model.path(), "--tokens", "1,2"});
  expect_cpp<ModelFormatError>("C6", [&] { GenerationConfig::load(model.path()); });
  for (const char* bad : {R"({"top_p": 1.5})", R"({"eos_token_id": "</s>"})", R"({"do_sample": 1})"}) {
    if (!has_cli()) break;
    const test::BrokenModel other([&](const fs::path& dir) { test::write_file(dir / "generation_config.json", bad); });
    const auto r = test::run_cli({"generate", "-m", other.path(), "--tokens", "1,2"});
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("generation_config.json: "), std::string::npos) << r.err;
  }
}

TEST(BadInputChat, C7_BadTemplateVariables) {
  const TemplateDir t("{{ messages|length }}");
  auto args = t.print(kToolTurn);
  args.insert(args.end(), {"--template-var", "nonsense"});
  expect_cli("C7", args);
  if (has_cli()) {
    args.back() = "=value";   // no name
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--template-var needs NAME=VALUE, like enable_thinking=false, got \"=value\""),
              std::string::npos)
        << r.err;
  }
  ChatRenderOptions o;
  o.variables_json = "[1, 2]";
  expect_cpp<InvalidArgument>("C7", [&] { ChatTemplateFile::load(t.path())->render(kToolTurn, o); });
}

TEST(BadInputChat, C8_DateThatIsNoDay) {
  const TemplateDir t("{{ strftime_now('%d') }}");
  auto args = t.print(kToolTurn);
  args.insert(args.end(), {"--date", "2025-02-30"});
  expect_cli("C8", args);
  ChatRenderOptions o;
  o.date = "2025-02-30";
  expect_cpp<InvalidArgument>("C8", [&] { ChatTemplateFile::load(t.path())->render(kToolTurn, o); });
}

TEST(BadInputChat, C9_BadRepetitionPenalty) {
  const std::string m = test::fixture_dir("gpt2-f32").string();
  expect_cli("C9", {"generate", "-m", m, "--tokens", "1,2", "--repetition-penalty", "0"});
  SamplingSettings s;
  s.repetition_penalty = 0;
  expect_cpp<InvalidArgument>("C9", [&] { Sampler{s}; });
  for (const char* bad : {"-1", "nan", "inf"}) {
    if (!has_cli()) break;
    const auto r = test::run_cli({"generate", "-m", m, "--tokens", "1,2", "--repetition-penalty", bad});
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("repetition penalty must be a finite number > 0"), std::string::npos) << r.err;
  }
}

TEST(BadInputChat, C10_TemplateListWithoutDefault) {
  const TemplateDir t(nlohmann::json::array({{{"name", "tool_use"}, {"template", "x"}}}));
  expect_cli("C10", t.print(kToolTurn));
  expect_cpp<ModelFormatError>("C10", [&] { ChatTemplateFile::load(t.path()); });
}

}   // namespace
}   // namespace glassbox
