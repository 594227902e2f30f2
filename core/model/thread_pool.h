// The pool behind glassbox/threads.h: a fixed set of worker threads that run one job at a time,
// split into contiguous ranges, with the calling thread taking the first range.
#pragma once

#include <atomic>
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
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // fn(begin, end) over [0, n) split into at most size() ranges, each a multiple of `grain` long
  // except the last; returns when every range is done. Runs fn(0, n) on the calling thread when
  // one range is enough or another thread's job holds the pool. fn must not throw (the forward
  // pass's jobs are kernels, which do not).
  void run(int n, int grain, const std::function<void(int, int)>& fn);

 private:
  void work(int index);

  std::vector<std::thread> workers_;
  std::mutex busy_;            // held by the thread whose job the pool runs
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::vector<std::pair<int, int>> ranges_;   // ranges_[i + 1] is worker i's
  std::atomic<long> generation_ = 0;   // bumped for every job: workers wait for a new one
  std::atomic<int> pending_ = 0;       // workers still running the current job
  std::atomic<bool> stop_ = false;
};

// The process-wide pool (glassbox/threads.h), made on first use.
std::shared_ptr<ThreadPool> forward_pool();

// fn(begin, end) over [0, n) on the process-wide pool; see ThreadPool::run. `work` is the cost of
// the whole job in multiply-adds: a job below kParallelWork runs on the calling thread, since
// handing out ranges costs microseconds (a decoded token of a small model has dozens of short
// jobs, and splitting them made its decoding slower: docs/performance.md, Threads).
constexpr double kParallelWork = 1 << 19;
template <typename F>
void parallel_for(int n, int grain, double work, F&& fn) {
  if (work < kParallelWork) {   // inline, without wrapping fn in a std::function
    if (n > 0) fn(0, n);
    return;
  }
  forward_pool()->run(n, grain, std::function<void(int, int)>(std::ref(fn)));
}

}  // namespace glassbox
