#include "glassbox/memory.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "glassbox/error.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#endif

namespace glassbox {
namespace {

constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

#ifndef __EMSCRIPTEN__   // WebAssembly: the heap is the limit (available_memory)
// The first number in a file (a cgroup's memory.max holds "max" when there is no limit).
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t n = 0;
  return in >> n ? n : kUnknown;
}

// MemAvailable from /proc/meminfo, in bytes ("MemAvailable:   12345678 kB").
std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kb = 0;
      if (fields >> kb) return kb * 1024;
    }
  return kUnknown;
}

// What a cgroup limit leaves: limit less usage, cgroup v2 (memory.max, memory.current) or v1
// (memory.limit_in_bytes, memory.usage_in_bytes; "no limit" is a huge number, which the min
// ignores), for this process's own cgroup (/proc/self/cgroup) and the mount's root (what a
// container sees as its own).
std::uint64_t cgroup_left() {
  std::uint64_t left = kUnknown;
  const auto take = [&](const std::string& dir, const char* limit_name, const char* usage_name) {
    const std::uint64_t limit = read_number((dir + limit_name).c_str());
    if (limit == kUnknown) return;
    const std::uint64_t usage = read_number((dir + usage_name).c_str()), used = usage == kUnknown ? 0 : usage;
    left = std::min(left, limit > used ? limit - used : 0);
  };
  const auto v2 = [&](const std::string& dir) { take(dir, "/memory.max", "/memory.current"); };
  const auto v1 = [&](const std::string& dir) { take(dir, "/memory.limit_in_bytes", "/memory.usage_in_bytes"); };
  v2("/sys/fs/cgroup");
  v1("/sys/fs/cgroup/memory");
  std::ifstream self("/proc/self/cgroup");   // lines "id:controllers:path"
  for (std::string line; std::getline(self, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (path == "/" || path.find("..") != std::string::npos) continue;
    if (controllers.empty()) v2("/sys/fs/cgroup" + path);
    if (("," + controllers + ",").find(",memory,") != std::string::npos) v1("/sys/fs/cgroup/memory" + path);
  }
  return left;
}

#endif

}   // namespace

std::uint64_t available_memory() {
#ifdef __EMSCRIPTEN__
  const std::uint64_t limit = emscripten_get_heap_max(), in_use = mallinfo().uordblks;
  return limit > in_use ? limit - in_use : 0;
#else
  return std::min(mem_available(), cgroup_left());
#endif
}

std::uint64_t megabytes_to_bytes(std::uint64_t mb) { return mb > (kUnknown >> 20) ? kUnknown : mb << 20; }

std::string megabytes(std::uint64_t n) {
  const std::string digits = std::to_string((n >> 20) + ((n & ((1u << 20) - 1)) != 0));   // no overflow near 2^64
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void check_memory(std::uint64_t needed, std::uint64_t max_memory, const std::string& what, const std::string& parts,
                  const std::string& advice) {
  const std::uint64_t limit = max_memory ? max_memory : available_memory();
  if (needed <= limit) return;
  const std::string from = max_memory ? "allowed (--max-memory)"
#ifdef __EMSCRIPTEN__
                                      : "this WebAssembly heap can still give";
#else
                                      : "of memory available (MemAvailable, or what a cgroup's limit leaves)";
#endif
  // The limit rounded down: "more than the 512 MB" must hold.
  std::string left = megabytes(limit >> 20 << 20);
  throw InvalidArgument(what + " needs about " + megabytes(needed) + " MB (" + parts + "), more than the " + left +
                        " MB " + from + ": " + advice);
}

}   // namespace glassbox
