//===- TraceLock.h - the one lock over the DSL's trace state ---*- C++ -*-===//
//
// Every read or change of trace state (recording an op, evaluating,
// backward(), reading elements) holds it; compiling a program, the slow
// part, runs with it released (docs/design.md "Threads"; Core.cpp defines
// it).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_TRACELOCK_H
#define STRATA_DSL_LIB_TRACELOCK_H

namespace strata::detail {

/// The trace lock (docs/design.md "Threads"): one recursive mutex over all
/// trace state (nodes, storage roots, autograd metadata). Taken by every
/// entry point that records, evaluates or reads; nested holds on a thread
/// are free. `unlocked` lets the outermost hold release it around work that
/// touches no trace state (compiling a program).
class TraceLock {
public:
  TraceLock();
  ~TraceLock();
  TraceLock(const TraceLock &) = delete;
  TraceLock &operator=(const TraceLock &) = delete;
  /// Whether this is the thread's only hold of the lock.
  bool outermost() const;
  /// Runs `f` with the lock released if this is the thread's only hold, or
  /// under it otherwise; the lock is held again when it returns or throws.
  template <typename F> decltype(auto) unlocked(F &&f) {
    if (!outermost())
      return f();
    struct Relock {
      TraceLock &lock;
      ~Relock() { lock.acquire(); }
    } relock{*this};
    release();
    return f();
  }

private:
  void acquire();
  void release();
};

} // namespace strata::detail

#endif // STRATA_DSL_LIB_TRACELOCK_H
