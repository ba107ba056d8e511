//===- Unchecked.h - collectives without the per-call signature check -*- C++
//-*-===//
//
// For callers that verified the ranks agree once, up front:
// DistributedDataParallel checks its parameters' shapes and dtypes across
// ranks at construction (as PyTorch's DDP does), so its bucket all_reduces,
// the same every step, skip the all_gather of signatures that precedes a
// CUDA tensor's NCCL call (one round trip each); gloo's tagged check, which
// costs nothing, stays. Internal to strata_distributed.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_UNCHECKED_H
#define STRATA_DISTRIBUTED_UNCHECKED_H

namespace strata {
namespace distributed {
namespace detail {

/// While alive, collectives started on this thread skip the eager
/// signature check (NCCL's).
class UncheckedGuard {
public:
  UncheckedGuard();
  ~UncheckedGuard();
  UncheckedGuard(const UncheckedGuard &) = delete;
  UncheckedGuard &operator=(const UncheckedGuard &) = delete;

private:
  bool previous_;
};

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_UNCHECKED_H
