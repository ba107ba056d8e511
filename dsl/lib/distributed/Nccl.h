//===- Nccl.h - the nccl backend: NCCL for CUDA tensors (internal) -*- C++
//-*-===//
//
// As PyTorch's "cpu:gloo,cuda:nccl": a group made with backend "nccl" keeps
// its gloo context (rendezvous, signature checks, barrier, CPU tensors) and
// adds an NCCL communicator for CUDA tensors. NCCL is loaded at run time,
// like the CUDA driver (Nccl.cpp). Internal to strata_distributed.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_NCCL_H
#define STRATA_DISTRIBUTED_NCCL_H

#include "Group.h"

#include <functional>
#include <memory>
#include <string>

namespace strata {
namespace distributed {
namespace detail {

/// Loads NCCL (the library STRATA_NCCL_LIBRARY names) and the CUDA driver;
/// throws a located strata::Error naming what is missing and what to
/// install.
std::shared_ptr<NcclComm> loadNccl(const std::string &what,
                                   const SourceLoc &loc);

/// Makes `g.nccl`'s communicator: rank 0's ncclUniqueId reaches the other
/// ranks through `g.store`. Throws a located strata::Error.
void connectNccl(Group &g, const std::string &what, const SourceLoc &loc);

/// The NCCL collectives strata calls.
enum class NcclOp { AllReduce, Broadcast, AllGather, ReduceScatter };

/// The work of one collective on device memory: `op` queued on strata's CUDA
/// stream (`count` elements per rank: all_gather's input, reduce_scatter's
/// output), then waited for with the group's timeout as deadline. On an
/// NCCL error or the deadline it aborts the communicator, breaks the group
/// and throws a strata::Error. `send` and `recv` are device addresses.
std::function<void()> ncclWork(Group *g, NcclOp op, const void *send,
                               void *recv, size_t count, DType dtype,
                               ReduceOp reduce, int root,
                               const std::string &what);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_NCCL_H
