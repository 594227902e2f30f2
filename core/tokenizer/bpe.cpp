#include "tokenizer/bpe.h"

#include <limits>
#include <queue>

namespace glassbox {

void bpe_merge_scan(std::vector<std::int32_t>& s, const MergeTable& merges) {
  while (s.size() > 1) {
    std::size_t best = 0;
    const MergeTable::Merge* best_merge = nullptr;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const auto* m = merges.find(s[i], s[i + 1]);
      if (m && (!best_merge || m->rank < best_merge->rank)) {
        best = i;
        best_merge = m;
      }
    }
    if (!best_merge) return;
    s[best] = best_merge->result;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

void bpe_merge_heap(std::vector<std::int32_t>& s, const MergeTable& merges) {
  // Symbols form a doubly linked list over their original slots; a merged-away slot is dead.
  const int n = static_cast<int>(s.size());
  std::vector<int> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  // Candidate merges (rank, left slot, left id, right id), best rank then leftmost first. Entries
  // go stale when a neighbour merges; they are checked against the list when popped.
  struct Candidate {
    std::int32_t rank;
    int left;
    std::int32_t left_id, right_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    if (const auto* m = merges.find(s[left], s[next[left]])) heap.push({m->rank, left, s[left], s[next[left]]});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int right = next[c.left];
    if (!alive[c.left] || right < 0 || s[c.left] != c.left_id || s[right] != c.right_id) continue;   // stale
    s[c.left] = merges.find(c.left_id, c.right_id)->result;
    alive[right] = false;
    next[c.left] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.left;
    push(prev[c.left]);
    push(c.left);
  }
  std::size_t out = 0;
  for (int i = 0; i >= 0 && i < n; i = next[i]) s[out++] = s[i];
  s.resize(out);
}

}   // namespace glassbox
