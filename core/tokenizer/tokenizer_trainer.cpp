#include "glassbox/tokenizer_trainer.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>

#include "glassbox/atomic_file.h"
#include "tokenizer/byte_unicode.h"
#include "glassbox/error.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

using Pair = std::uint64_t;   // (left id << 32) | right id
Pair make_pair(std::int32_t l, std::int32_t r) { return (Pair(std::uint32_t(l)) << 32) | std::uint32_t(r); }
std::int32_t left_of(Pair p) { return std::int32_t(p >> 32); }
std::int32_t right_of(Pair p) { return std::int32_t(p & 0xffffffffu); }

// A distinct piece of the text and how often it occurs.
struct Word {
  std::vector<std::int32_t> symbols;
  std::int64_t count;
};

class Trainer {
 public:
  explicit Trainer(std::string_view text) {
    std::unordered_map<std::string_view, std::int64_t> counts;
    pretokenize(text, [&](std::string_view piece) { ++counts[piece]; });
    // Sorted, so that word order (and with it every tie) does not depend on hashing.
    std::vector<std::pair<std::string_view, std::int64_t>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end());
    // Initial ids: the 256 bytes in the order of their printable characters, as GPT-2's vocabulary.
    std::vector<int> order(256);
    for (int b = 0; b < 256; ++b) order[b] = b;
    std::sort(order.begin(), order.end(), [](int a, int b) { return byte_to_unicode(a) < byte_to_unicode(b); });
    for (int id = 0; id < 256; ++id) {
      tokens_.push_back(std::string(1, char(order[id])));
      byte_id_[order[id]] = id;
    }
    for (auto& [piece, count] : sorted) {
      Word w{{}, count};
      for (unsigned char b : piece) w.symbols.push_back(byte_id_[b]);
      words_.push_back(std::move(w));
    }
    for (std::size_t i = 0; i < words_.size(); ++i) add_pairs(i, +1);
  }

  // One merge of the most frequent pair; false when no pair is left.
  bool merge_best() {
    while (!heap_.empty()) {
      const auto [count, neg_pair] = heap_.top();
      heap_.pop();
      const Pair pair = ~neg_pair;
      auto it = pair_count_.find(pair);
      if (it == pair_count_.end() || it->second != count || count <= 0) continue;   // stale entry
      apply(pair);
      return true;
    }
    return false;
  }

  int vocab_size() const { return static_cast<int>(tokens_.size()); }

  TokenizerFiles files(const std::vector<std::string>& specials) const {
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (std::size_t id = 0; id < tokens_.size(); ++id) vocab[bytes_to_unicode(tokens_[id])] = id;
    for (const auto& s : specials) vocab[s] = vocab.size();
    TokenizerFiles f;
    f.vocab_json = vocab.dump();
    f.merges_txt = "#version: 0.2\n";
    for (const auto& [l, r] : merges_)
      f.merges_txt += bytes_to_unicode(tokens_[l]) + " " + bytes_to_unicode(tokens_[r]) + "\n";
    f.merges = static_cast<int>(merges_.size());
    return f;
  }

 private:
  // Adds (sign +1) or removes (-1) the pairs of word i from the counts.
  void add_pairs(std::size_t i, int sign) {
    const Word& w = words_[i];
    for (std::size_t k = 0; k + 1 < w.symbols.size(); ++k) {
      const Pair p = make_pair(w.symbols[k], w.symbols[k + 1]);
      std::int64_t& c = pair_count_[p];
      c += sign * w.count;
      if (sign > 0) {
        where_[p].push_back(static_cast<std::int32_t>(i));
        heap_.push({c, ~p});   // ~p: among equal counts the smaller pair wins
      } else if (c > 0) {
        heap_.push({c, ~p});
      }
    }
  }

  void apply(Pair pair) {
    const std::int32_t l = left_of(pair), r = right_of(pair);
    const std::string merged = tokens_[l] + tokens_[r];
    // Two different merges can spell the same bytes ("ab"+"c", "a"+"bc"): one token for both.
    std::int32_t id;
    if (auto it = id_of_.find(merged); it != id_of_.end()) {
      id = it->second;
    } else {
      id = static_cast<std::int32_t>(tokens_.size());
      tokens_.push_back(merged);
      id_of_.emplace(merged, id);
    }
    merges_.emplace_back(l, r);
    auto words = std::move(where_[pair]);
    where_.erase(pair);
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    for (std::int32_t i : words) {
      auto& s = words_[i].symbols;
      bool found = false;
      for (std::size_t k = 0; k + 1 < s.size(); ++k) found |= (s[k] == l && s[k + 1] == r);
      if (!found) continue;   // stale: the word no longer has the pair
      add_pairs(i, -1);
      std::vector<std::int32_t> out;
      for (std::size_t k = 0; k < s.size(); ++k) {
        if (k + 1 < s.size() && s[k] == l && s[k + 1] == r) {
          out.push_back(id);
          ++k;
        } else {
          out.push_back(s[k]);
        }
      }
      s = std::move(out);
      add_pairs(i, +1);
    }
  }

  std::vector<Word> words_;
  std::vector<std::string> tokens_;   // id -> bytes
  std::unordered_map<std::string, std::int32_t> id_of_;
  std::int32_t byte_id_[256];
  std::vector<std::pair<std::int32_t, std::int32_t>> merges_;
  std::unordered_map<Pair, std::int64_t> pair_count_;
  std::unordered_map<Pair, std::vector<std::int32_t>> where_;   // pair -> words that had it
  std::priority_queue<std::pair<std::int64_t, Pair>> heap_;     // (count, ~pair), stale entries skipped
};

}   // namespace

TokenizerFiles train_tokenizer(std::string_view text, const TokenizerTrainingOptions& options) {
  if (const std::size_t bad = unicode::valid_utf8_prefix(text); bad != text.size())
    throw InvalidArgument("training text is not valid UTF-8 at byte " + std::to_string(bad));
  for (const auto& s : options.special_tokens)
    if (s.size() <= 4 || !s.starts_with("<|") || !s.ends_with("|>"))
      throw InvalidArgument("special token \"" + s + "\" must look like <|name|>");
  const int specials = static_cast<int>(options.special_tokens.size());
  if (options.vocab_size < 256 + specials)
    throw InvalidArgument("vocabulary size " + std::to_string(options.vocab_size) + " is below the minimum " +
                          std::to_string(256 + specials) + " (256 bytes + special tokens)");
  Trainer trainer(text);
  const int target = options.vocab_size - specials;
  const int total = target - 256;
  int done = 0;
  while (trainer.vocab_size() < target && trainer.merge_best()) {
    ++done;
    if (options.on_progress && (done % 64 == 0 || trainer.vocab_size() == target)) options.on_progress(done, total);
  }
  return trainer.files(options.special_tokens);
}

void save_tokenizer(const TokenizerFiles& files, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "vocab.json", files.vocab_json);
  write_file_atomically(dir / "merges.txt", files.merges_txt);
}

}   // namespace glassbox
