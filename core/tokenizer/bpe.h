// Byte-pair encoding of one piece: start from its bytes, and repeatedly merge the adjacent pair
// with the best (lowest) merge rank, leftmost first, until no pair has a rank. This is what
// GPT-2's encoder.py and tiktoken compute.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace glassbox {

class MergeTable {
 public:
  struct Merge {
    std::int32_t rank;     // line in merges.txt: lower merges first
    std::int32_t result;   // id of the merged token
  };
  // Adds the merge of (left, right) unless the pair has one already (the first, best, stays).
  void add_first(std::int32_t left, std::int32_t right, Merge merge) { merges_.try_emplace(key(left, right), merge); }
  // Adds the merge of (left, right), replacing one it has: the last rank stays, as the tokenizers
  // library's merge map (models/bpe/model.rs collects the merges into a HashMap).
  void add_last(std::int32_t left, std::int32_t right, Merge merge) {
    merges_.insert_or_assign(key(left, right), merge);
  }
  void reserve(std::size_t n) { merges_.reserve(n); }
  const Merge* find(std::int32_t left, std::int32_t right) const {
    auto it = merges_.find(key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return merges_.size(); }

 private:
  static std::uint64_t key(std::int32_t l, std::int32_t r) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) | static_cast<std::uint32_t>(r);
  }
  std::unordered_map<std::uint64_t, Merge> merges_;
};

// Appends the ids of `symbols` (initially one id per byte) after merging, to `out`.
// Pieces shorter than kLongPiece use a linear scan per merge (O(n^2), but cache-friendly and
// fastest for the short pieces that make up almost all text, as tiktoken notes); longer ones use a
// heap over a linked list (O(n log n)), so that 100k identical letters do not take quadratic time.
// Both give identical results: tests compare them.
constexpr std::size_t kLongPiece = 128;
void bpe_merge_scan(std::vector<std::int32_t>& symbols, const MergeTable& merges);
void bpe_merge_heap(std::vector<std::int32_t>& symbols, const MergeTable& merges);

}   // namespace glassbox
