// Large arrays (arena.h): every array the arena hands out is aligned, writable and apart from the
// others, small or large; and where the build maps huge pages, a large block starts on a 2 MB
// boundary and its mapping carries the kernel's huge-page advice (the "hg" flag in smaps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/arena.h"

namespace glassbox {
namespace {

bool aligned_to(const void* p, std::size_t n) { return reinterpret_cast<std::uintptr_t>(p) % n == 0; }

TEST(Arena, ArraysAreAlignedWritableAndApart) {
  // Sizes in floats: empty, tiny, ragged, a bias, a matrix of a few MB, and one larger than a block.
  const std::vector<std::size_t> sizes = {0, 1, 3, 17, 768, 5000, 3 << 20, Arena::kBlockBytes / sizeof(float) + 5, 2};
  Arena arena;
  std::vector<std::pair<float*, std::size_t>> arrays;
  for (std::size_t n : sizes) {
    float* p = arena.allocate<float>(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned_to(p, 64)) << n << " floats";
    arrays.emplace_back(p, n);
  }
  // Each array filled with its own value, then all checked: overlapping arrays would overwrite.
  // (The large ones only at their ends and middle, to keep the test's memory small.)
  auto indices = [](std::size_t n) {
    if (n > 100000) return std::vector<std::size_t>{0, n / 2, n - 1};
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    return all;
  };
  for (std::size_t a = 0; a < arrays.size(); ++a)
    for (std::size_t i : indices(arrays[a].second)) arrays[a].first[i] = float(a);
  for (std::size_t a = 0; a < arrays.size(); ++a)
    for (std::size_t i : indices(arrays[a].second))
      ASSERT_EQ(arrays[a].first[i], float(a)) << "array " << a << " index " << i;
  // Every array is distinct, and no two share a byte (they are ordered by address, then compared).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
  for (auto [p, n] : arrays)
    ranges.emplace_back(reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p + n));
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) EXPECT_LT(ranges[i - 1].first, ranges[i].first);
  for (std::size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
}

TEST(Arena, ArraysOutliveAMove) {
  Arena arena;
  int* p = arena.allocate<int>(1000);
  for (int i = 0; i < 1000; ++i) p[i] = i;
  Arena moved = std::move(arena);
  int* q = moved.allocate<int>(1000);
  for (int i = 0; i < 1000; ++i) q[i] = -i;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], i);
}

// The flags ("VmFlags: rd wr ... hg") of the mapping that holds address p, from /proc/self/smaps.
std::string mapping_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo, hi;
    char dash;
    std::istringstream range(line);
    if (line.find(':') > line.find(' ') && (range >> std::hex >> lo >> dash >> hi) && dash == '-') {
      inside = lo <= addr && addr < hi;   // a mapping's header line: "lo-hi perms ..."
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "(no mapping holds the address)";
}

TEST(LargeBlock, LargeBlocksAskForHugePagesWhereTheBuildMapsThem) {
  const LargeBlock large(5 << 20), small(100 << 10);
  EXPECT_TRUE(aligned_to(large.data(), 64));
  EXPECT_TRUE(aligned_to(small.data(), 64));
  EXPECT_EQ(large.size(), std::size_t(5) << 20);
  EXPECT_FALSE(small.on_huge_pages());   // a huge page for 100 KB would zero 2 MB
  EXPECT_EQ(large.on_huge_pages(), kHugePages);
  if (kHugePages) {   // natively on Linux, without AddressSanitizer
    EXPECT_TRUE(aligned_to(large.data(), LargeBlock::kHugePageBytes));
    const std::string flags = mapping_flags(large.data());
    EXPECT_NE((flags + " ").find(" hg "), std::string::npos) << flags;
  }
  large.data()[0] = std::byte{1};
  large.data()[large.size() - 1] = std::byte{2};
}

TEST(LargeBlock, MovesHandOverTheMemory) {
  LargeBlock a(3 << 20);
  std::byte* data = a.data();
  LargeBlock b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);
  a = std::move(b);
  EXPECT_EQ(a.data(), data);
  EXPECT_EQ(a.size(), std::size_t(3) << 20);
}

}   // namespace
}   // namespace glassbox
