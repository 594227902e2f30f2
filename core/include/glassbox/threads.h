// Threads for the forward pass. Matrix products (and attention, head by head) are split across a
// process-wide pool of threads, the calling thread being one of them; the pool is made on first
// use with one thread per core. There is one pool per process, so several models or caches never
// add up to more threads than cores: a forward pass that finds the pool busy (another thread's
// forward is in a parallel section) runs that section on its own thread instead of waiting.
//
// In WebAssembly without threads (the default build) everything runs on the calling thread.
#pragma once

namespace glassbox {

// Threads a forward pass uses, the caller included: 1..256, or 0 for one per core (the default).
// Takes effect at the next parallel section; throws InvalidArgument outside that range.
void set_num_threads(int threads);
int num_threads();

}   // namespace glassbox
