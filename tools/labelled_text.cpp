#include "labelled_text.h"

#include "glassbox/error.h"

namespace glassbox {

std::vector<LabelledLine> parse_labelled_lines(std::string_view text, const std::string& file, bool require_labels) {
  std::vector<LabelledLine> out;
  std::size_t start = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") start = 3;   // a UTF-8 byte-order mark, as some editors write
  for (int line = 1; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(start, end - start);
    start = end + 1;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);   // files written on Windows
    if (row.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string where = file + ":" + std::to_string(line);
    if (auto bad = first_invalid_utf8(row))   // labels too: they end up in config.json
      throw Error(where + ": not valid UTF-8 at byte " + std::to_string(*bad) + " of the line");
    const std::size_t tab = row.find('\t');
    if (tab == std::string_view::npos) {
      if (require_labels) throw Error(where + ": expected a label, a tab, then the text (\"positive<TAB>What a day\")");
      out.push_back({"", std::string(row), where});
      continue;
    }
    LabelledLine l{std::string(row.substr(0, tab)), std::string(row.substr(tab + 1)), where};
    if (l.label.empty() || l.text.empty())
      throw Error(where + ": " + (l.label.empty() ? "the label" : "the text") + " before or after the tab is empty");
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<std::int32_t> classifier_ids(const Tokenizer& tokenizer, std::string_view text, int max_tokens,
                                         const std::string& where, bool* truncated) {
  if (auto bad = first_invalid_utf8(text)) throw Error(where + ": not valid UTF-8 at byte " + std::to_string(*bad));
  std::vector<std::int32_t> ids = tokenizer.encode_for_classifier(text, max_tokens);
  if (truncated)   // a second encoding, for a note: training data is encoded once
    *truncated = tokenizer.encode(text).size() + (tokenizer.special_token("<|endoftext|>") ? 1 : 0) >
                 static_cast<std::size_t>(max_tokens);
  return ids;
}

}   // namespace glassbox
