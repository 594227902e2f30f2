#include "model/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "glassbox/error.h"
#include "glassbox/threads.h"

namespace glassbox {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {

// Spin-waiting before sleeping: a forward pass starts its jobs back to back, tens of microseconds
// apart, and waking a thread blocked on a condition variable takes about as long as a job.
constexpr int kSpins = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void ThreadPool::run(int n, int grain, const std::function<void(int, int)>& fn) {
  grain = std::max(grain, 1);
  const int chunks = (n + grain - 1) / grain;
  const int parts = std::min(size(), chunks);
  std::unique_lock busy(busy_, std::try_to_lock);
  if (parts <= 1 || !busy.owns_lock()) {
    if (n > 0) fn(0, n);
    return;
  }
  std::pair<int, int> first;
  {
    std::lock_guard lock(m_);
    // Contiguous ranges of whole grains, as even as they can be. Only the thread holding busy_
    // writes them; workers read them under m_.
    ranges_.clear();
    for (int p = 0, begin = 0; p < parts; ++p) {
      const int end = std::min(n, begin + (chunks / parts + (p < chunks % parts ? 1 : 0)) * grain);
      ranges_.emplace_back(begin, end);
      begin = end;
    }
    first = ranges_[0];
    job_ = &fn;
    pending_ = parts - 1;
    ++generation_;
  }
  wake_.notify_all();
  fn(first.first, first.second);
  for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
  std::unique_lock lock(m_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::work(int index) {
  long seen = 0;
  for (;;) {
    std::pair<int, int> range;
    const std::function<void(int, int)>* job;
    for (int i = 0; i < kSpins && generation_.load(std::memory_order_acquire) == seen && !stop_; ++i) cpu_relax();
    {
      std::unique_lock lock(m_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index + 1 >= static_cast<int>(ranges_.size())) continue;   // this job has fewer parts
      range = ranges_[index + 1];
      job = job_;
    }
    (*job)(range.first, range.second);
    {
      std::lock_guard lock(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

namespace {

std::mutex pool_mutex;
std::shared_ptr<ThreadPool> pool;   // replaced by set_num_threads; a running job keeps its pool alive
int wanted_threads = 0;   // 0: one per core

int resolve(int threads) {
  if (threads > 0) return threads;
#ifdef __EMSCRIPTEN_PTHREADS__
  return std::max(1u, std::thread::hardware_concurrency());
#elif defined(__EMSCRIPTEN__)
  return 1;
#else
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#endif
}

}  // namespace

void set_num_threads(int threads) {
  if (threads < 0 || threads > 256) throw InvalidArgument("threads must be 1..256 (0: one per core), got " + std::to_string(threads));
  std::lock_guard lock(pool_mutex);
  wanted_threads = threads;
  if (pool && pool->size() != resolve(threads)) pool.reset();   // remade at the next use
}

int num_threads() {
  std::lock_guard lock(pool_mutex);
  return resolve(wanted_threads);
}

std::shared_ptr<ThreadPool> forward_pool() {
  std::lock_guard lock(pool_mutex);
  if (!pool) pool = std::make_shared<ThreadPool>(resolve(wanted_threads));
  return pool;
}


}  // namespace glassbox
