//===- ThreadPool.cpp - the CPU kernels' worker threads -------------------===//
#include "strata/Runtime/ThreadPool.h"
#include "strata/Runtime/Settings.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using strata::runtime::ThreadPool;

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex callMutex; // one parallelFor at a time
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t, int64_t)> *fn = nullptr;
  int64_t n = 0, chunks = 0;
  uint64_t generation = 0;
  int64_t nextChunk = 0, finished = 0;
  bool stop = false;

  void runChunks() {
    for (;;) {
      int64_t c;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (nextChunk >= chunks)
          return;
        c = nextChunk++;
      }
      int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      if (begin < end)
        (*fn)(begin, end);
      std::lock_guard<std::mutex> lock(mutex);
      if (++finished == chunks)
        done.notify_all();
    }
  }

  void workerLoop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || generation != seen; });
        if (stop)
          return;
        seen = generation;
      }
      runChunks();
    }
  }
};

ThreadPool::ThreadPool(unsigned numThreads) : impl(new Impl) {
  for (unsigned i = 1; i < numThreads; ++i)
    impl->workers.emplace_back([this] { impl->workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->stop = true;
  }
  impl->wake.notify_all();
  for (auto &w : impl->workers)
    w.join();
}

ThreadPool &ThreadPool::global() {
  static ThreadPool pool(strata::runtime::settings::numThreads());
  return pool;
}

unsigned ThreadPool::size() const { return impl->workers.size() + 1; }

void ThreadPool::parallelFor(int64_t n,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  int64_t chunks = std::min<int64_t>(n, size());
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(impl->callMutex);
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->fn = &fn;
    impl->n = n;
    impl->chunks = chunks;
    impl->nextChunk = 0;
    impl->finished = 0;
    ++impl->generation;
  }
  impl->wake.notify_all();
  impl->runChunks();
  std::unique_lock<std::mutex> lock(impl->mutex);
  impl->done.wait(lock, [&] { return impl->finished == impl->chunks; });
}
