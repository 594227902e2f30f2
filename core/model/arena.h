// Memory for large arrays (a model's weights, KV caches), on huge pages where the system has them.
//
// Why: decoding one token of GPT-2 small streams its 500 MB of weights once. On 4 KB pages that
// is 120,000 TLB misses a token, and in a virtual machine each miss walks two levels of page
// tables. On 2 MB pages (Linux's transparent huge pages, asked for with madvise: the default
// setting gives them only to memory that asks) it is 250, and first touching the memory takes
// 1/512 of the page faults, each costly in a virtual machine. What it gains: docs/performance.md,
// Huge pages.
#pragma once

#include <cstddef>
#include <vector>

namespace glassbox {

// Whether LargeBlock maps huge pages: natively on Linux; not in WebAssembly (one linear memory),
// nor under AddressSanitizer (so that every array keeps its own bounds checks; clang 14 does not
// define __SANITIZE_ADDRESS__, hence __has_feature).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLASSBOX_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GLASSBOX_ASAN 1
#endif
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && !defined(GLASSBOX_ASAN)
#define GLASSBOX_HUGE_PAGES 1
#else
#define GLASSBOX_HUGE_PAGES 0
#endif
inline constexpr bool kHugePages = GLASSBOX_HUGE_PAGES;

// One allocation of `bytes` (uninitialised), aligned to 64 bytes, returned on destruction. Where
// huge pages exist (kHugePages) and it fills at least one (2 MB), it is its own mapping, aligned
// to 2 MB and advised to use them; smaller ones come from operator new, since a huge page for a
// small block (a KV cache of 16 positions, say) would zero 2 MB to use a few KB.
class LargeBlock {
 public:
  static constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

  LargeBlock() = default;   // empty
  explicit LargeBlock(std::size_t bytes);
  LargeBlock(LargeBlock&& other) noexcept;
  LargeBlock& operator=(LargeBlock&& other) noexcept;
  LargeBlock(const LargeBlock&) = delete;
  LargeBlock& operator=(const LargeBlock&) = delete;
  ~LargeBlock();

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool on_huge_pages() const { return mapped_ != 0; }   // asked for them, at least (madvise)

 private:
  void release();
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;     // as asked
  std::size_t mapped_ = 0;   // the mapping's length (0: allocated with operator new)
};

// Arrays that live as long as the arena, carved from large blocks so that small ones (biases,
// LayerNorm weights) share huge pages with the matrices instead of costing one each. Without
// huge pages every array is its own allocation: carving would gain nothing.
class Arena {
 public:
  // The least size of a block (virtual memory: a block's untouched tail costs no RAM).
  static constexpr std::size_t kBlockBytes = std::size_t(64) << 20;

  Arena() = default;
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;

  // n elements of T, uninitialised, aligned to 64 bytes.
  template <class T>
  T* allocate(std::size_t n) {
    return reinterpret_cast<T*>(allocate_bytes(n * sizeof(T)));
  }

  // Bytes handed out so far, each array's size rounded up to its alignment (not the blocks' size).
  std::size_t allocated() const { return allocated_; }

 private:
  std::byte* allocate_bytes(std::size_t bytes);
  std::vector<LargeBlock> blocks_;
  std::byte* cursor_ = nullptr;   // the free part of the block small arrays are carved from
  std::byte* end_ = nullptr;
  std::size_t allocated_ = 0;
};

}   // namespace glassbox
