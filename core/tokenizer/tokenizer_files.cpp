// Making a Tokenizer from vocab.json and merges.txt: the files parsed and checked for what a
// byte-level BPE needs. Runs once per load; in WebAssembly it is compiled for size
// (core/CMakeLists.txt), the encoding in tokenizer.cpp for speed.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "io/mapped_file.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/tokenizer_impl.h"

namespace glassbox {
namespace {

// vocab.json's (token, id) pairs in file order, read as the JSON is parsed (nlohmann's SAX
// interface): building the document first, a map of tens of thousands of strings, and walking it
// cost more than all the rest of making a tokenizer. Any value that is not an integer id stops the
// parse with a message naming its token.
class VocabReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::pair<std::string, std::int64_t>> entries;
  std::string problem;   // why the parse stopped, if it did

  bool start_object(std::size_t) override { return depth_ == 0 ? (depth_ = 1, true) : refuse("an object"); }
  bool end_object() override { return --depth_, true; }
  bool key(string_t& key) override { return entries.emplace_back(std::move(key), 0), true; }
  bool number_integer(number_integer_t v) override { return id(v, std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    return id(v > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(v), std::to_string(v));
  }
  bool number_float(number_float_t, const string_t& text) override { return refuse(text); }
  bool string(string_t& v) override { return refuse(quote_text(v)); }
  bool boolean(bool v) override { return refuse(v ? "true" : "false"); }
  bool null() override { return refuse("null"); }
  bool binary(binary_t&) override { return refuse("binary"); }
  bool start_array(std::size_t) override { return refuse("an array"); }
  bool end_array() override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    problem = std::string("not valid JSON: ") + e.what();
    return false;
  }

 private:
  bool id(std::int64_t id, const std::string& text) {
    if (depth_ != 1) return refuse(text);
    if (id < 0) return refuse(text);
    entries.back().second = id;
    return true;
  }
  // A value where an id should be (or a document that is not an object at all).
  bool refuse(const std::string& what) {
    if (depth_ == 1 && !entries.empty())
      problem = "token " + quote_text(entries.back().first) + " has id " + what + "; ids must be integers 0, 1, ...";
    else
      problem = "must be a non-empty JSON object of token -> id";
    return false;
  }
  int depth_ = 0;
};

std::vector<std::pair<std::string, std::int64_t>> read_vocab(std::string_view json, const std::string& source) {
  VocabReader reader;
  if (!nlohmann::json::sax_parse(json.begin(), json.end(), &reader) || reader.entries.empty())
    throw ModelFormatError(source,
                           reader.problem.empty() ? "must be a non-empty JSON object of token -> id" : reader.problem);
  return std::move(reader.entries);
}

}   // namespace

namespace {

// BPE makes each of its tokens of more than one byte by merging two tokens of the vocabulary, and
// merges.txt records each merge (GPT-2's 50,000 merges make its 50,000 such tokens). A token that
// two vocabulary tokens would make but no merge does is a merge missing from the file: encode
// never produces it, and text the model learned as that token comes out as other ids. An empty
// merges.txt, one cut short, or one from another vocabulary gave wrong ids silently, so it is
// refused here. A vocabulary of only the 256 bytes and special tokens needs no merges, and a
// token that no two vocabulary tokens make (added whole, as a test model's does) is only decoded.
void check_every_token_made(const std::vector<std::string>& bytes_of, const TokenMap& ordinary,
                            const std::vector<bool>& made, int merges, const std::string& vocab_source,
                            const std::string& merges_source) {
  std::size_t missing = 0, first = 0, first_split = 0;
  for (std::size_t id = 0; id < bytes_of.size(); ++id) {
    const std::string_view token = bytes_of[id];
    if (made[id] || token.size() < 2 || is_special(token)) continue;
    const auto known = [&](std::string_view part) { return ordinary.find(part) != ordinary.end(); };
    std::size_t split = 1;
    while (split < token.size() && !(known(token.substr(0, split)) && known(token.substr(split)))) ++split;
    if (split == token.size()) continue;   // added whole: no two tokens make it
    if (missing++ == 0) {
      first = id;
      first_split = split;
    }
  }
  if (missing == 0) return;
  const std::string& token = bytes_of[first];
  const std::string example = quote_text(bytes_to_unicode(token)) + " (id " + std::to_string(first) + ", " +
                              quote_text(bytes_to_unicode(token.substr(0, first_split))) + " + " +
                              quote_text(bytes_to_unicode(token.substr(first_split))) + ")";
  if (merges == 0)
    throw ModelFormatError(merges_source, "has no merges, but " + vocab_source + " has " + std::to_string(missing) +
                                              " tokens that merges make, e.g. " + example +
                                              " (is merges.txt empty or from another model?)");
  throw ModelFormatError(merges_source, "no merge makes " + std::to_string(missing) + " tokens of " + vocab_source +
                                            ", e.g. " + example + " (its " + std::to_string(merges) +
                                            " merges: is merges.txt cut short or from another vocabulary?)");
}

}   // namespace

Tokenizer Tokenizer::load(const std::filesystem::path& dir) {
  if (const auto json_path = dir / "tokenizer.json"; std::filesystem::exists(json_path))
    return from_tokenizer_json(read_file(json_path), json_path.string());
  const auto vocab_path = dir / "vocab.json", merges_path = dir / "merges.txt";
  const std::string vocab = read_file(vocab_path);   // first, so a missing pair names vocab.json
  const std::string merges = read_file(merges_path);
  return from_strings(vocab, merges, vocab_path.string(), merges_path.string());
}

Tokenizer Tokenizer::from_strings(std::string_view vocab_json, std::string_view merges_txt,
                                  const std::string& vocab_source, const std::string& merges_source) {
  auto impl = std::make_unique<Impl>();
  const auto vocab = read_vocab(vocab_json, vocab_source);

  // Ids must be exactly 0 .. n-1, each once.
  const std::size_t n = vocab.size();
  impl->bytes_of.resize(n);
  impl->ordinary.reserve(n);
  std::vector<bool> seen(n, false);
  std::string bytes;
  for (const auto& [token, id] : vocab) {
    if (id < 0 || static_cast<std::uint64_t>(id) >= n)
      throw ModelFormatError(vocab_source, "token " + quote_text(token) + " has id " + std::to_string(id) +
                                               "; ids must be 0.." + std::to_string(n - 1));
    if (seen[id]) throw ModelFormatError(vocab_source, "id " + std::to_string(id) + " is given to two tokens");
    seen[id] = true;
    if (is_special(token)) {
      impl->bytes_of[id] = token;
      impl->specials.emplace_back(token, static_cast<std::int32_t>(id));
      continue;
    }
    bytes.clear();
    if (!unicode_to_bytes(token, bytes))
      throw ModelFormatError(vocab_source,
                             "token " + quote_text(token) + " has a character outside GPT-2's byte alphabet");
    if (!impl->ordinary.emplace(bytes, static_cast<std::int32_t>(id)).second)
      throw ModelFormatError(vocab_source, "token " + quote_text(token) + " is given twice");
    impl->bytes_of[id] = bytes;
  }
  for (int b = 0; b < 256; ++b) {
    auto it = impl->ordinary.find(std::string_view(std::string(1, static_cast<char>(b))));
    if (it == impl->ordinary.end())
      throw ModelFormatError(
          vocab_source, "no token for the single byte " + std::to_string(b) + " (a byte-level vocabulary has all 256)");
    impl->byte_id[b] = it->second;
  }

  // merges.txt: "#version: 0.2" then one "left right" pair per line, best first. The strings are
  // reused from line to line: a file has tens of thousands of lines.
  impl->merges.reserve(static_cast<std::size_t>(std::count(merges_txt.begin(), merges_txt.end(), '\n')) + 1);
  std::int32_t rank = 0;
  std::size_t line_no = 0;
  std::string left, right, merged;
  std::vector<bool> made(n, false);   // the tokens some merge makes
  for (std::size_t pos = 0; pos < merges_txt.size();) {
    std::size_t end = merges_txt.find('\n', pos);
    if (end == std::string_view::npos) end = merges_txt.size();
    std::string_view line = merges_txt.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const auto where = [&] { return "line " + std::to_string(line_no) + " " + quote_text(line); };
    const std::size_t space = line.find(' ');
    left.clear();
    right.clear();
    if (space == 0 || space == std::string_view::npos || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
      throw ModelFormatError(merges_source, where() + ": expected two tokens separated by one space");
    if (!unicode_to_bytes(line.substr(0, space), left) || !unicode_to_bytes(line.substr(space + 1), right))
      throw ModelFormatError(merges_source, where() + ": a token has a character outside GPT-2's byte alphabet");
    merged.assign(left).append(right);
    auto l = impl->ordinary.find(left), r = impl->ordinary.find(right), m = impl->ordinary.find(merged);
    if (l == impl->ordinary.end() || r == impl->ordinary.end() || m == impl->ordinary.end())
      throw ModelFormatError(merges_source, where() + ": a token of this merge or its result is not in the vocabulary");
    impl->merges.add_first(l->second, r->second, {rank, m->second});
    made[m->second] = true;
    ++rank;
  }
  check_every_token_made(impl->bytes_of, impl->ordinary, made, rank, vocab_source, merges_source);
  return Tokenizer(std::move(impl));
}

}   // namespace glassbox
