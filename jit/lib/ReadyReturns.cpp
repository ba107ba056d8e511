//===- ReadyReturns.cpp - report each returned value once it is final -----===//
//
// ReadyReturns.h: autograd's "this leaf's gradient is ready" while the
// rest of a gradient program runs (docs/design.md, "Hooks after
// accumulation").
//
//===----------------------------------------------------------------------===//
#include "ReadyReturns.h"

using namespace strata::jit;
using namespace strata::jit::detail;

JitValue
strata::jit::detail::returnedValue(const Step::Returned &r,
                                   const std::vector<JitValue> &values) {
  JitValue out;
  out.dtype = values[r.slot].dtype;
  out.buffer = values[r.slot].buffer;
  out.isStorage = r.isStorage;
  if (r.isStorage) {
    out.sizes = {out.storageElements()};
    out.strides = {1};
    out.offset = 0;
  } else {
    out.sizes = r.sizes;
    out.strides = r.strides;
    out.offset = r.offset;
  }
  return out;
}

ReadyReturns::ReadyReturns(const Plan &plan, const Callback &callback)
    : plan(plan), callback(callback) {
  if (!callback || plan.steps.empty() || !plan.steps.back().isReturn)
    return;
  std::vector<size_t> madeBy(plan.numSlots, 0);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (const ResultSpec &spec : plan.steps[i].results)
      madeBy[spec.slot] = i + 1;
  ready.resize(plan.steps.size() + 1);
  const auto &returned = plan.steps.back().returned;
  for (size_t k = 0; k < returned.size(); ++k)
    ready[madeBy[returned[k].slot]].push_back(k);
}

bool ReadyReturns::report(size_t at, const std::vector<JitValue> &values,
                          std::string &error) const {
  if (at >= ready.size())
    return true;
  for (size_t k : ready[at])
    if (!callback(k, returnedValue(plan.steps.back().returned[k], values))) {
      error = "stopped by onReturnReady";
      return false;
    }
  return true;
}
