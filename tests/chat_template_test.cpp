// Chat templates against Python's jinja2 as transformers runs it: every case of
// tests/fixtures/chat/*.json (written by scripts/make_chat_fixtures.py) rendered byte for byte,
// and templates that are wrong, raise, or use what is undefined.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "test_util.h"

namespace glassbox {
namespace {

nlohmann::ordered_json read_fixture(const std::string& name) {
  std::ifstream in(test::fixture_dir("chat/" + name + ".json"));
  if (!in) throw std::runtime_error("cannot read the fixture chat/" + name + ".json");
  return nlohmann::ordered_json::parse(in);
}

std::optional<std::string> token(const nlohmann::ordered_json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<std::string>();
}

class ChatTemplateFixture : public testing::TestWithParam<const char*> {};

TEST_P(ChatTemplateFixture, RendersEveryCaseAsJinja2Does) {
  const nlohmann::ordered_json fixture = read_fixture(GetParam());
  const ChatTemplate chat_template(fixture["template"].get<std::string>());
  int checked = 0;
  for (const auto& c : fixture["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>() + (c["add_generation_prompt"].get<bool>() ? ", generation prompt" : ""));
    ChatTemplateOptions options;
    options.bos_token = token(fixture["bos_token"]);
    options.eos_token = token(fixture["eos_token"]);
    options.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    options.variables = c["vars"];
    options.date = fixture["date"].get<std::string>();
    if (c.contains("error")) {
      try {
        chat_template.render(c["messages"], options);
        ADD_FAILURE() << "expected the template to raise: " << c["error"].get<std::string>();
      } catch (const TemplateError& e) {
        EXPECT_EQ(e.problem(), c["error"].get<std::string>());
      }
    } else {
      EXPECT_EQ(chat_template.render(c["messages"], options), c["expected"].get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

INSTANTIATE_TEST_SUITE_P(ChatTemplate, ChatTemplateFixture,
                         testing::Values("smollm2", "qwen2.5", "qwen3", "llama3", "llama3.2",
                                         "mistral-7b-instruct-v0.1", "mistral-nemo", "zephyr"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The small templates of tests/fixtures/chat/features.json, one language feature each.
TEST(ChatTemplate, FeaturesRenderAsJinja2Does) {
  const nlohmann::ordered_json fixture = read_fixture("features");
  int checked = 0;
  for (const auto& c : fixture["cases"]) {
    const std::string source = c["template"].get<std::string>();
    SCOPED_TRACE(source);
    ChatTemplateOptions options;
    options.variables = c["vars"];
    options.date = fixture["date"].get<std::string>();
    const auto messages = nlohmann::ordered_json::array();
    if (c.contains("error")) {
      EXPECT_THROW(render_chat_template(source, messages, options), TemplateError);
    } else {
      EXPECT_EQ(render_chat_template(source, messages, options), c["expected"].get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

// The error a template gives, with its place.
TemplateError error_of(const std::string& source) {
  try {
    render_chat_template(source, nlohmann::ordered_json::array(), {});
  } catch (const TemplateError& e) {
    return e;
  }
  ADD_FAILURE() << "no error from " << source;
  return TemplateError(0, 0, "");
}

TEST(ChatTemplate, RaiseExceptionBecomesAnErrorCarryingItsMessage) {
  const TemplateError e = error_of("ok\n  {{ raise_exception('Roles must ' ~ 'alternate') }}");
  EXPECT_EQ(e.problem(), "Roles must alternate");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 6);
  EXPECT_STREQ(e.what(), "chat template, line 2, column 6: Roles must alternate");
}

TEST(ChatTemplate, SyntaxErrorNamesLineAndColumn) {
  const TemplateError e = error_of("{% if x %}\n{{ x + }}\n{% endif %}");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 8);
  EXPECT_NE(std::string(e.what()).find("line 2, column 8: expected an expression"), std::string::npos) << e.what();

  EXPECT_NE(error_of("{% for m in messages %}x").problem().find("expected 'endfor'"), std::string::npos);
  EXPECT_NE(error_of("{{ 'open }}").problem().find("never closed"), std::string::npos);
  EXPECT_NE(error_of("{% frobnicate %}").problem().find("unknown tag 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of("{% macro m() %}{% endmacro %}").problem().find("not supported"), std::string::npos);
  EXPECT_EQ(error_of("{{ x }").line(), 1);
  EXPECT_EQ(error_of("{{ 99999999999999999999 }}").problem(), "the number 99999999999999999999 is out of range");
  EXPECT_EQ(error_of("{{ d.99999999999999999999 }}").problem(), "the number 99999999999999999999 is out of range");
}

TEST(ChatTemplate, UnknownFilterOrTestIsAnErrorBeforeRendering) {
  // As in Jinja2, at compile time: the filter is never reached when rendering.
  try {
    ChatTemplate t("{% if false %}{{ x | frobnicate }}{% endif %}");
    FAIL() << "no error for an unknown filter";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.problem(), "no filter named 'frobnicate'");
    EXPECT_EQ(e.line(), 1);
  }
  EXPECT_EQ(error_of("{{ x is frobnicated }}").problem(), "no test named 'frobnicated'");
}

TEST(ChatTemplate, UndefinedBehavesAsJinja2Undefined) {
  const auto render = [](const std::string& source) {
    return render_chat_template(source, nlohmann::ordered_json::array(), {});
  };
  // Printing, testing, iterating, measuring and defaulting an undefined name are allowed ...
  EXPECT_EQ(render("[{{ nothing }}]"), "[]");
  EXPECT_EQ(render("{{ nothing is defined }} {{ nothing is undefined }}"), "False True");
  EXPECT_EQ(render("{% if nothing %}y{% else %}n{% endif %}"), "n");
  EXPECT_EQ(render("{% for x in nothing %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{{ nothing | length }} {{ nothing | default('d') }}"), "0 d");
  EXPECT_EQ(render("{{ messages[5] is defined }} {{ {'a': 1}.b is defined }}"), "False False");
  // ... using one is an error naming it.
  EXPECT_EQ(error_of("{{ nothing.attr }}").problem(), "'nothing' is undefined");
  EXPECT_EQ(error_of("{{ nothing + 'a' }}").problem(), "'nothing' is undefined");
  EXPECT_EQ(error_of("{{ {'a': 1}.b.c }}").problem(), "'dict object' has no attribute 'b'");
  EXPECT_EQ(error_of("{{ nothing() }}").problem(), "'nothing' is undefined");
}

TEST(ChatTemplate, HostileTemplatesEndWithAnErrorNotACrash) {
  // Nesting the evaluator would recurse through, in brackets and in operator chains.
  EXPECT_NE(
      error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").problem().find("nests deeper"),
      std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(error_of(chain + " }}").problem().find("nests deeper"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "{% if true %}";
  EXPECT_NE(error_of(blocks).problem().find("nests deeper"), std::string::npos);
  // Numbers past 64 bits, strings past the size bound, loops past the step bound.
  EXPECT_NE(error_of("{{ 2 ** 64 }}").problem().find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").problem().find("integer overflow"), std::string::npos);
  EXPECT_EQ(render_chat_template("{{ 2 ** 62 }} {{ -2 ** 63 }}", nlohmann::ordered_json::array(), {}),
            "4611686018427387904 -9223372036854775808");
  EXPECT_NE(error_of("{{ 'ab' * 9000000000000000000 }}").problem().find("longer than"), std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(s='ab') %}{% for i in '0123456789012345678901234567890123456789' %}"
                     "{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
                .problem()
                .find("longer than"),
            std::string::npos);
  EXPECT_NE(
      error_of("{{ ('x' * 1000000) | replace('x', '" + std::string(80, 'y') + "') }}").problem().find("longer than"),
      std::string::npos);
  EXPECT_NE(error_of("{{ 1e300 | int }}").problem().find("does not fit"), std::string::npos);
  EXPECT_NE(error_of("{{ [1] | tojson(indent=100000) }}").problem().find("at most 64"), std::string::npos);
  const std::string loops =
      "{% set s = 'x' * 1000 %}{% for a in s %}{% for b in s %}{% for c in s %}{% endfor %}"
      "{% endfor %}{% endfor %}";
  ChatTemplateOptions options;
  options.max_steps = 100000;
  try {
    render_chat_template(loops, nlohmann::ordered_json::array(), options);
    ADD_FAILURE() << "a billion loop rounds ran to the end";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.problem(), "the template runs too long (more than 100000 steps)");
  }
}

TEST(ChatTemplate, InvalidUtf8BytesPassThroughUnchanged) {
  // Python would never hold such bytes in a str; here they are kept as they are, never widened.
  const std::string bytes = "\xa0\xff\xc0\x80\xed\xb2\x80 x \xe2\x82";
  EXPECT_EQ(render_chat_template("{%- if true -%}" + bytes + "{%- endif -%}", nlohmann::ordered_json::array(), {}),
            bytes);
  ChatTemplateOptions options;
  options.variables = {{"s", " " + bytes + " "}};
  EXPECT_EQ(render_chat_template("{{ s | trim }}|{{ s[::-1][::-1] }}|{{ s | length }}", nlohmann::ordered_json::array(),
                                 options),
            bytes + "| " + bytes + " |14");   // each invalid byte counts as one character
}

TEST(ChatTemplate, BadMessagesAndOptionsAreInvalidArguments) {
  const ChatTemplate t("{{ messages | length }}");
  EXPECT_THROW(t.render(nlohmann::ordered_json::object(), {}), InvalidArgument);
  ChatTemplateOptions options;
  options.date = "03/02/2025";
  EXPECT_THROW(t.render(nlohmann::ordered_json::array(), options), InvalidArgument);
  options.date = "";
  options.variables = nlohmann::ordered_json::array();
  EXPECT_THROW(t.render(nlohmann::ordered_json::array(), options), InvalidArgument);
  options.variables = nlohmann::ordered_json::object();
  nlohmann::ordered_json deep = "x";
  for (int i = 0; i < 100; ++i) deep = nlohmann::ordered_json::array({deep});
  EXPECT_THROW(t.render(nlohmann::ordered_json::array({{{"role", "user"}, {"content", deep}}}), options),
               InvalidArgument);
}

}   // namespace
}   // namespace glassbox
