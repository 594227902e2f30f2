// Memory a run needs, checked before it allocates: a model or a training run too large for the
// machine is refused at once with its size, instead of growing until the system kills it.
#pragma once

#include <cstdint>
#include <string>

namespace glassbox {

// Bytes this process can still allocate, as far as the system says. Linux: MemAvailable
// (/proc/meminfo), or less where a cgroup memory limit leaves less (cgroup v2 memory.max less
// memory.current; v1 memory.limit_in_bytes less memory.usage_in_bytes). WebAssembly: what the heap
// can still grow to. UINT64_MAX where nothing says (then nothing is refused).
std::uint64_t available_memory();

// Throws InvalidArgument when `needed` bytes are more than `max_memory` (0: available_memory()):
// "WHAT needs about N MB (PARTS), more than the M MB allowed (--max-memory): ADVICE", or "... M MB
// of memory available (...)" for the system's limit.
void check_memory(std::uint64_t needed, std::uint64_t max_memory, const std::string& what, const std::string& parts,
                  const std::string& advice);

// A size given in MB (a command line's --max-memory) in bytes, UINT64_MAX when too large to say.
std::uint64_t megabytes_to_bytes(std::uint64_t mb);

// n bytes as whole MB, rounded up, with thousands separators: "132,689".
std::string megabytes(std::uint64_t n);

}   // namespace glassbox
