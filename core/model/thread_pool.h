// The pool behind glassbox/threads.h: a fixed set of worker threads that run one job at a time,
// split into contiguous chunks that the threads, the calling one included, take in turn until
// none is left.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace glassbox {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);   // threads in all, the caller's included (>= 1)
  // Joins the threads. In WebAssembly a thread starts only once the thread that made it has returned
  // to its event loop: destroy a pool only after that (set_num_threads before the first forward
  // pass, as the JS API does), never right after making it on the same turn.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // fn(begin, end) over [0, n) split into at most kChunksPerThread * size() chunks, each a
  // multiple of `grain` long except the last; returns when every chunk is done. Runs fn(0, n) on
  // the calling thread when one chunk is enough or another thread's job holds the pool. fn must
  // not throw (the forward pass's jobs are kernels, which do not).
  void run(int n, int grain, const std::function<void(int, int)>& fn);

  // Chunks are taken, not assigned: a thread that lost its core for a while (another program, or
  // a web page's own threads beside the engine's) leaves its share to the others instead of
  // holding up the job. Several chunks per thread make that share small; each costs an atomic
  // step and a call of fn.
  static constexpr int kChunksPerThread = 4;
  static constexpr int kMaxChunks = 0xffff;   // next_'s chunk fields are 16 bits

 private:
  void work();
  void take_chunks(std::uint32_t job);

  std::vector<std::thread> workers_;
  std::mutex busy_;   // held by the thread whose job the pool runs
  std::mutex m_;
  std::condition_variable wake_, done_;
  // The current job, written before it is published in next_ and left alone until it is done.
  const std::function<void(int, int)>* fn_ = nullptr;
  int n_ = 0, grain_ = 1, grains_ = 0;
  std::atomic<std::uint32_t> job_ = 0;   // bumped for every job: workers wait for a new one
  // The job's number (high 32 bits), its chunk count (16 bits) and the next chunk to take (low 16):
  // one word, so a thread late for a job can never take a chunk of the next one.
  std::atomic<std::uint64_t> next_ = 0;
  std::atomic<int> finished_ = 0;   // chunks of the current job done
  std::atomic<bool> stop_ = false;
};

// The process-wide pool (glassbox/threads.h), made on first use.
std::shared_ptr<ThreadPool> forward_pool();

// fn(begin, end) over [0, n) on the process-wide pool; see ThreadPool::run. `work` is the cost of
// the whole job in multiply-adds: a job below kParallelWork runs on the calling thread, since
// handing out ranges costs microseconds (a decoded token of a small model has dozens of short
// jobs, and splitting them made its decoding slower: docs/performance.md, Threads).
constexpr double kParallelWork = 1 << 19;
// WebAssembly built without threads has one thread: every job runs inline, and the module holds
// no pool code (a page downloads it).
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kHasThreads = false;
#else
constexpr bool kHasThreads = true;
#endif
template <typename F>
void parallel_for(int n, int grain, double work, F&& fn) {
  if (!kHasThreads || work < kParallelWork) {   // inline, without wrapping fn in a std::function
    if (n > 0) fn(0, n);
    return;
  }
  if constexpr (kHasThreads) forward_pool()->run(n, grain, std::function<void(int, int)>(std::ref(fn)));
}

}   // namespace glassbox
