#include "model/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "glassbox/error.h"
#include "glassbox/threads.h"

namespace glassbox {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { work(); });
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

// next_'s fields: job number, chunk count, next chunk.
constexpr std::uint64_t pack(std::uint32_t job, int chunks, int next) {
  return std::uint64_t(job) << 32 | std::uint64_t(chunks) << 16 | std::uint64_t(next);
}

}   // namespace

void ThreadPool::run(int n, int grain, const std::function<void(int, int)>& fn) {
  grain = std::max(grain, 1);
  const int grains = (n + grain - 1) / grain;
  const int chunks = std::min({grains, kChunksPerThread * size(), kMaxChunks});
  std::unique_lock busy(busy_, std::try_to_lock);
  if (chunks <= 1 || size() == 1 || !busy.owns_lock()) {
    if (n > 0) fn(0, n);
    return;
  }
  std::uint32_t job;
  {
    std::lock_guard lock(m_);
    fn_ = &fn;
    n_ = n;
    grain_ = grain;
    grains_ = grains;
    finished_.store(0, std::memory_order_relaxed);
    job = job_.load(std::memory_order_relaxed) + 1;
    next_.store(pack(job, chunks, 0), std::memory_order_release);   // publishes the fields above
    job_.store(job, std::memory_order_release);
  }
  wake_.notify_all();
  take_chunks(job);
  for (int i = 0; i < kSpins && finished_.load(std::memory_order_acquire) != chunks; ++i) cpu_relax();
  std::unique_lock lock(m_);
  done_.wait(lock, [&] { return finished_.load(std::memory_order_acquire) == chunks; });
  fn_ = nullptr;
}

// Runs chunks of job `job` until none is left to take (or the pool has moved on to another job).
void ThreadPool::take_chunks(std::uint32_t job) {
  for (;;) {
    std::uint64_t seen = next_.load(std::memory_order_acquire);
    int chunk, chunks;
    do {
      chunks = int(seen >> 16 & 0xffff);
      chunk = int(seen & 0xffff);
      if (std::uint32_t(seen >> 32) != job || chunk >= chunks) return;
    } while (!next_.compare_exchange_weak(seen, seen + 1, std::memory_order_acq_rel, std::memory_order_acquire));
    // A chunk taken holds the job open, so its fields stay as run() wrote them until it is done.
    // Chunk c: grains [c * grains / chunks, (c + 1) * grains / chunks), as even as they can be.
    const int begin = int(std::int64_t(chunk) * grains_ / chunks) * grain_;
    const int end = std::min(n_, int(std::int64_t(chunk + 1) * grains_ / chunks) * grain_);
    (*fn_)(begin, end);
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
      std::lock_guard lock(m_);
      done_.notify_one();
    }
  }
}

void ThreadPool::work() {
  std::uint32_t seen = 0;
  for (;;) {
    for (int i = 0; i < kSpins && job_.load(std::memory_order_acquire) == seen && !stop_; ++i) cpu_relax();
    {
      std::unique_lock lock(m_);
      wake_.wait(lock, [&] { return stop_ || job_.load(std::memory_order_relaxed) != seen; });
      if (stop_) return;
      seen = job_.load(std::memory_order_relaxed);
    }
    take_chunks(seen);
  }
}

namespace {

std::mutex pool_mutex;
std::shared_ptr<ThreadPool> pool;   // replaced by set_num_threads; a running job keeps its pool alive
int wanted_threads = 0;             // 0: one per core

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

}   // namespace

void set_num_threads(int threads) {
  if (threads < 0 || threads > 256)
    throw InvalidArgument("threads must be 1..256 (0: one per core), got " + std::to_string(threads));
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

}   // namespace glassbox
