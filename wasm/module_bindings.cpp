// What each of the two big modules answers besides its own classes (bindings.cpp: the engine's;
// training_bindings.cpp: the trainer's, a module of its own): the heap it holds, and the threads
// of its pool.
#include <emscripten/bind.h>
#include <malloc.h>

#include <cstddef>

#include "glassbox/threads.h"
#include "js_glue.h"

namespace {

using namespace glassbox;
using namespace glassbox::js;

// Bytes the allocator has handed out and not taken back: what a leak makes grow (tests watch it).
std::size_t heap_bytes_in_use() { return mallinfo().uordblks; }

// Threads of the pool (the forward pass, a training batch's shards): 1 in a single-threaded
// module; engine.mjs and training-core.mjs set a threaded module's count to its pool of Web
// Workers plus this thread.
void set_threads(int threads) {
  guarded([&] {
    set_num_threads(threads);
    return 0;
  });
}

}   // namespace

EMSCRIPTEN_BINDINGS(glassbox_module) {
  emscripten::function("heapBytesInUse", &heap_bytes_in_use);
  emscripten::function("setThreads", &set_threads);
  emscripten::function("threads", &num_threads);
}
