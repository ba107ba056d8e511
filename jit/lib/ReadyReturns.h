//===- ReadyReturns.h - report each returned value once it is final -*- C++
//-*-===//
//
// RunOptions::onReturnReady for a runner: which returned values each step
// of a plan completes, and the calls. A slot is made by one step, and a
// returned slot is never written in place later (Plan::markDeadWrites:
// the return uses it), so a returned value is final after its step.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_READYRETURNS_H
#define STRATA_JIT_LIB_READYRETURNS_H

#include "Plan.h"

namespace strata::jit::detail {

/// Returned value `r` of a run's slot `values`.
JitValue returnedValue(const Step::Returned &r,
                       const std::vector<JitValue> &values);

/// The onReturnReady calls of one run of `plan` (none without a callback).
class ReadyReturns {
public:
  using Callback = std::function<bool(size_t, const JitValue &)>;
  ReadyReturns(const Plan &plan, const Callback &callback);
  /// Reports the returned values made by step `at - 1` (at 0: the returned
  /// arguments); false and `error` when the callback stops the run.
  bool report(size_t at, const std::vector<JitValue> &values,
              std::string &error) const;

private:
  const Plan &plan;
  const Callback &callback;
  /// Per step + 1, the indices of the returned values it completes.
  std::vector<std::vector<size_t>> ready;
};

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_READYRETURNS_H
