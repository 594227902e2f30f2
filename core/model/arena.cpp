#include "model/arena.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <utility>

#if GLASSBOX_HUGE_PAGES
#include <sys/mman.h>
#endif

namespace glassbox {
namespace {

constexpr std::size_t kAlign = 64;   // a cache line, and any SIMD load's alignment

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}   // namespace

LargeBlock::LargeBlock(std::size_t bytes) : size_(bytes) {
#if GLASSBOX_HUGE_PAGES
  if (bytes >= LargeBlock::kHugePageBytes) {
    // Map 2 MB more than needed, then unmap the ends so that what is left starts on a 2 MB
    // boundary (only whole, aligned 2 MB ranges can be huge pages).
    const std::size_t length = round_up(bytes, LargeBlock::kHugePageBytes);
    void* p =
        mmap(nullptr, length + LargeBlock::kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    auto* start = static_cast<std::byte*>(p);
    auto* aligned =
        reinterpret_cast<std::byte*>(round_up(reinterpret_cast<std::uintptr_t>(start), LargeBlock::kHugePageBytes));
    if (aligned > start) munmap(start, std::size_t(aligned - start));
    if (std::byte* end = start + length + LargeBlock::kHugePageBytes; end > aligned + length)
      munmap(aligned + length, std::size_t(end - aligned - length));
    // Advice, not a requirement: where huge pages are off or used up, the block is on small pages.
    madvise(aligned, length, MADV_HUGEPAGE);
    data_ = aligned;
    mapped_ = length;
    return;
  }
#endif
  data_ = static_cast<std::byte*>(::operator new(bytes ? bytes : 1, std::align_val_t(kAlign)));
}

LargeBlock::LargeBlock(LargeBlock&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

LargeBlock& LargeBlock::operator=(LargeBlock&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

LargeBlock::~LargeBlock() { release(); }

void LargeBlock::release() {
  if (!data_) return;
#if GLASSBOX_HUGE_PAGES
  if (mapped_) {
    munmap(data_, mapped_);
    data_ = nullptr;
    return;
  }
#endif
  ::operator delete(data_, std::align_val_t(kAlign));
  data_ = nullptr;
}

Arena::Arena(Arena&& other) noexcept
    : blocks_(std::move(other.blocks_)),
      cursor_(std::exchange(other.cursor_, nullptr)),
      end_(std::exchange(other.end_, nullptr)),
      allocated_(std::exchange(other.allocated_, 0)) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    blocks_ = std::move(other.blocks_);
    cursor_ = std::exchange(other.cursor_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
    allocated_ = std::exchange(other.allocated_, 0);
  }
  return *this;
}

std::byte* Arena::allocate_bytes(std::size_t bytes) {
  bytes = round_up(bytes ? bytes : 1, kAlign);
  allocated_ += bytes;
  // A block of its own: without huge pages every array (nothing to share), and with them an array
  // as large as a block (GPT-2's LM head), which leaves the current block to the small ones.
  if (!kHugePages || bytes >= kBlockBytes) return blocks_.emplace_back(bytes).data();
  if (std::size_t(end_ - cursor_) < bytes) {
    const LargeBlock& block = blocks_.emplace_back(kBlockBytes);
    cursor_ = block.data();
    end_ = cursor_ + kBlockBytes;
  }
  return std::exchange(cursor_, cursor_ + bytes);
}

}   // namespace glassbox
