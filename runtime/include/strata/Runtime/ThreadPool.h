//===- ThreadPool.h - the CPU kernels' worker threads -----------*- C++ -*-===//
#ifndef STRATA_RUNTIME_THREADPOOL_H
#define STRATA_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <functional>
#include <memory>

namespace strata::runtime {

/// A fixed set of worker threads running one parallel loop at a time.
class ThreadPool {
public:
  /// `numThreads` including the caller (at least 1).
  explicit ThreadPool(unsigned numThreads);
  /// Stops and joins the workers.
  ~ThreadPool();
  /// Not copyable.
  ThreadPool(const ThreadPool &) = delete;
  /// Not copyable.
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// The process-wide pool: STRATA_NUM_THREADS threads, default all cores.
  static ThreadPool &global();

  /// Number of threads, the caller included.
  unsigned size() const;
  /// Splits [0, n) into at most size() contiguous chunks and runs
  /// fn(begin, end) on each, the caller taking one; returns when all ran.
  /// Calls from several threads are serialized.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace strata::runtime

#endif // STRATA_RUNTIME_THREADPOOL_H
