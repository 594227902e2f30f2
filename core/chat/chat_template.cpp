// The variables transformers hands a chat template (transformers/utils/chat_template_utils.py):
// messages, tools=None, documents=None, add_generation_prompt, the special tokens, the caller's
// extra variables, and the globals raise_exception, strftime_now, and Jinja2's namespace and range.
#include "chat/chat_template.h"

#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "chat/jinja_eval.h"
#include "chat/jinja_parser.h"

namespace glassbox {
namespace {

// The time strftime_now formats: the given day at midnight, or now in local time.
std::tm moment(const std::string& date) {
  std::tm tm{};
  if (date.empty()) {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &tm);
    return tm;
  }
  int year = 0, month = 0, day = 0;
  char rest = 0;
  if (std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &year, &month, &day, &rest) != 3 || month < 1 || month > 12 ||
      day < 1 || day > 31)
    throw InvalidArgument("the date '" + date + "' is not YYYY-MM-DD");
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);   // fills in the weekday and the day of the year
  localtime_r(&t, &tm);
  return tm;
}

jinja::Dict globals(const ChatTemplateOptions& options) {
  using jinja::CallArgs;
  using jinja::Value;
  jinja::Dict vars;
  vars.emplace_back("raise_exception", Value::function("raise_exception", [](const CallArgs& a) -> Value {
                      throw std::invalid_argument(a.positional.empty() ? std::string("raise_exception() was called")
                                                                       : a.positional[0].str());
                    }));
  const std::tm tm = moment(options.date);
  vars.emplace_back("strftime_now", Value::function("strftime_now", [tm](const CallArgs& a) -> Value {
                      if (a.positional.size() != 1 || !a.positional[0].is_string())
                        throw std::invalid_argument("strftime_now takes one format string");
                      char buf[256];
                      const size_t n = std::strftime(buf, sizeof buf, a.positional[0].as_string().c_str(), &tm);
                      return Value::string(std::string(buf, n));
                    }));
  vars.emplace_back("range", Value::function("range", [](const CallArgs& a) -> Value {
                      // Jinja2's sandbox refuses ranges over 100,000 items (MAX_RANGE); so does this.
                      std::vector<int64_t> n;
                      for (const Value& p : a.positional) {
                        if (p.kind() != Value::Kind::Int) throw std::invalid_argument("range() takes integers");
                        n.push_back(p.as_int());
                      }
                      if (n.empty() || n.size() > 3 || !a.keyword.empty())
                        throw std::invalid_argument("range() takes 1 to 3 integers");
                      const int64_t start = n.size() > 1 ? n[0] : 0, stop = n.size() > 1 ? n[1] : n[0];
                      const int64_t step = n.size() > 2 ? n[2] : 1;
                      if (step == 0) throw std::invalid_argument("range() arg 3 must not be zero");
                      jinja::List items;
                      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                        if (items.size() >= 100000)
                          throw std::invalid_argument("range too big, maximum size is 100000");
                        items.push_back(Value::integer(i));
                      }
                      return Value::list(std::move(items));
                    }));
  vars.emplace_back("namespace", Value::function("namespace", [](const CallArgs& a) -> Value {
                      jinja::Dict attributes;
                      for (const Value& p : a.positional) {
                        if (!p.is_mapping())
                          throw std::invalid_argument("namespace() takes a dict or name=value pairs");
                        for (const auto& kv : p.as_dict()) attributes.push_back(kv);
                      }
                      for (const auto& kv : a.keyword) attributes.push_back(kv);
                      return Value::namespace_(std::move(attributes));
                    }));
  return vars;
}

void set(jinja::Dict& vars, const std::string& name, jinja::Value value) {
  for (auto& [k, v] : vars)
    if (k == name) {
      v = std::move(value);
      return;
    }
  vars.emplace_back(name, std::move(value));
}

}   // namespace

ChatTemplate::ChatTemplate(const std::string& source) : body_(jinja::parse(source)) {}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const ChatTemplateOptions& options) const {
  if (!messages.is_array()) throw InvalidArgument("the messages must be a JSON array");
  if (!options.variables.is_object()) throw InvalidArgument("the template variables must be a JSON object");
  jinja::Dict vars = globals(options);
  const auto value = [](const nlohmann::ordered_json& j, const std::string& what) {
    try {
      return jinja::Value::from_json(j);
    } catch (const std::invalid_argument& e) {
      throw InvalidArgument(what + ": " + e.what());
    }
  };
  set(vars, "messages", value(messages, "the messages"));
  set(vars, "tools", jinja::Value::none());
  set(vars, "documents", jinja::Value::none());
  set(vars, "add_generation_prompt", jinja::Value::boolean(options.add_generation_prompt));
  if (options.bos_token) set(vars, "bos_token", jinja::Value::string(*options.bos_token));
  if (options.eos_token) set(vars, "eos_token", jinja::Value::string(*options.eos_token));
  for (const auto& [key, v] : options.variables.items()) set(vars, key, value(v, "the template variable " + key));
  return jinja::render(body_, vars, options.max_steps);
}

std::string render_chat_template(const std::string& source, const nlohmann::ordered_json& messages,
                                 const ChatTemplateOptions& options) {
  return ChatTemplate(source).render(messages, options);
}

}   // namespace glassbox
