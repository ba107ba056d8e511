//===- distributed.h - torch.distributed: process groups, collectives -*- C++
//-*-===//
//
// PyTorch's c10d API over Gloo (CPU tensors, TCP) and NCCL (CUDA tensors,
// loaded at run time): a process group made from the environment torchrun
// sets (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; rendezvous through
// PyTorch's own c10d::TCPStore) or from a shared
// directory ("file:///path"), and the collectives with PyTorch's names.
// Not part of strata::strata: link strata::distributed (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_H
#define STRATA_DISTRIBUTED_H

#include "strata/Tensor.h"
#include "strata/nn/Module.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata {
namespace distributed {

/// The reductions of all_reduce and reduce_scatter (c10d::ReduceOp).
enum class ReduceOp {
  SUM,     ///< the elementwise sum (bool: logical or)
  AVG,     ///< the sum divided by the world size (floating dtypes only)
  PRODUCT, ///< the elementwise product (bool: logical and)
  MIN,     ///< the elementwise minimum
  MAX,     ///< the elementwise maximum
};
/// "sum", "avg", "product", "min", "max".
std::string toString(ReduceOp op);

/// PyTorch's default: 30 minutes.
constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(30);

/// A handle to a collective started with async_op = true (c10d::Work); the
/// synchronous forms return one already completed.
class Work {
public:
  /// A completed handle.
  Work();
  /// Blocks until the collective has finished and its results are written
  /// (a strided view's result is copied back here); throws the collective's
  /// strata::Error (located at the collective's call) if it failed. Once
  /// waited, later calls return at once.
  void wait(SourceLoc loc = SourceLoc::current());
  /// True when the collective has finished (successfully or not).
  bool is_completed() const;
  /// True when it finished without an error.
  bool is_success() const;

  /// The shared state (implementation).
  struct State;
  /// A handle to `state` (implementation).
  explicit Work(std::shared_ptr<State> state);

private:
  std::shared_ptr<State> state_;
};

/// Joins the default process group (torch.distributed.init_process_group):
/// `backend` "gloo" (CPU tensors) or "nccl" (PyTorch's "cpu:gloo,cuda:nccl":
/// CUDA tensors on NCCL, libnccl.so.2 loaded at run time, a strata::Error
/// saying what to install where it or a CUDA device is missing; CPU tensors
/// on gloo);
/// `init_method` "env://" (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the
/// environment; rank 0 hosts the store) or "file:///DIR" (a directory every
/// rank sees, empty at the start). `world_size` and `rank` override the
/// environment's (-1: read it). Every rank must call it; it returns when all
/// have joined, and throws a located strata::Error (D-codes, docs/errors.md)
/// when a rank does not join within `timeout`, the master cannot be reached, or
/// the arguments are invalid. `timeout` also bounds every later collective.
void init_process_group(const std::string &backend = "gloo",
                        const std::string &init_method = "env://",
                        std::chrono::milliseconds timeout = kDefaultTimeout,
                        int64_t world_size = -1, int64_t rank = -1,
                        SourceLoc loc = SourceLoc::current());
/// True after init_process_group and before destroy_process_group.
bool is_initialized();
/// Leaves the default group (waits for the collectives still running).
void destroy_process_group(SourceLoc loc = SourceLoc::current());
/// This process's rank in [0, world size).
int64_t get_rank(SourceLoc loc = SourceLoc::current());
/// The number of processes in the group.
int64_t get_world_size(SourceLoc loc = SourceLoc::current());
/// "gloo" or "nccl", as given to init_process_group.
std::string get_backend(SourceLoc loc = SourceLoc::current());

/// Reduces `tensor` across ranks with `op`; every rank gets the result in
/// place. Any strided CPU tensor, or CUDA tensor with backend "nccl" (AVG:
/// floating dtypes only); pending tensors are evaluated first; every rank
/// must give the same shape, dtype and device (checked: a strata::Error on
/// every rank otherwise).
Work all_reduce(const Tensor &tensor, ReduceOp op = ReduceOp::SUM,
                bool async_op = false, SourceLoc loc = SourceLoc::current());
/// Copies rank `src`'s `tensor` into every other rank's, in place.
Work broadcast(const Tensor &tensor, int64_t src, bool async_op = false,
               SourceLoc loc = SourceLoc::current());
/// Writes rank k's `tensor` into `tensor_list[k]` on every rank (the list
/// has world-size tensors of tensor's shape and dtype).
Work all_gather(const std::vector<Tensor> &tensor_list, const Tensor &tensor,
                bool async_op = false, SourceLoc loc = SourceLoc::current());
/// all_gather into one tensor whose first dim is world size x tensor's
/// (torch.distributed.all_gather_into_tensor).
Work all_gather_into_tensor(const Tensor &output, const Tensor &input,
                            bool async_op = false,
                            SourceLoc loc = SourceLoc::current());
/// Reduces `input_list[k]` across ranks with `op` into rank k's `output`
/// (the list has world-size tensors of output's shape and dtype).
Work reduce_scatter(const Tensor &output, const std::vector<Tensor> &input_list,
                    ReduceOp op = ReduceOp::SUM, bool async_op = false,
                    SourceLoc loc = SourceLoc::current());
/// Returns when every rank has entered it.
Work barrier(bool async_op = false, SourceLoc loc = SourceLoc::current());

/// Whether collectives check that every rank gives the same op, shape,
/// dtype and root (on by default; STRATA_DISTRIBUTED_CHECK=0 turns it off).
/// On gloo the check costs nothing: each call's tag carries a hash of these,
/// so calls that differ never exchange data and end at the group's timeout
/// with a strata::Error naming both sides (read through the store). A CUDA
/// tensor's NCCL call is checked first by one small gloo all_gather.
/// Applies to the current group; every rank must set the same at the same
/// point (the ranks compare STRATA_DISTRIBUTED_CHECK at init_process_group,
/// and a call that fails because one rank set it differently says so).
void set_consistency_check(bool enabled);
/// The current setting of set_consistency_check.
bool consistency_check();

/// Options of DistributedDataParallel.
struct DistributedDataParallelOptions {
  /// Bytes of gradients all-reduced together (PyTorch's bucket_cap_mb: 25).
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  /// Broadcast rank 0's parameters at construction (as PyTorch does).
  bool broadcast_parameters = true;
  /// Start each bucket's all_reduce during backward, once its gradients are
  /// ready (false: every bucket in sync_gradients(), for comparisons).
  bool start_buckets_in_backward = true;
  /// After the first sync_gradients(), regroup the buckets in the order
  /// rank 0's gradients became ready in that first iteration (PyTorch's
  /// bucket rebuild), so that each bucket's gradients come ready together
  /// and it starts as early as the engine allows.
  bool rebuild_buckets = true;
};

/// Data-parallel training of a module (torch.nn.parallel.
/// DistributedDataParallel): the ranks' parameter shapes and dtypes are
/// compared and rank 0's values broadcast at construction; every
/// parameter's gradient is then averaged across ranks, in buckets of about
/// bucket_cap_bytes (one all_reduce each), so an optimizer step keeps the
/// ranks' parameters identical. Each parameter gets a post-accumulate-grad
/// hook: once all of a bucket's gradients are ready during loss.backward(),
/// and the buckets before it have started, the bucket is packed and its
/// all_reduce started, so the communication overlaps the rest of backward
/// (buckets start in order on every rank, as PyTorch's). sync_gradients()
/// starts the buckets still waiting, waits for all and writes the averages
/// into the .grads (docs/distributed.md).
class DistributedDataParallel {
public:
  /// Wraps `module` (shared, not copied) in the default process group.
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                   DistributedDataParallelOptions options = {},
                                   SourceLoc loc = SourceLoc::current());
  /// Wraps the module a holder refers to.
  template <typename Impl>
  explicit DistributedDataParallel(const nn::ModuleHolder<Impl> &holder,
                                   DistributedDataParallelOptions options = {},
                                   SourceLoc loc = SourceLoc::current())
      : DistributedDataParallel(
            std::static_pointer_cast<nn::Module>(holder.ptr()), options, loc) {}
  /// Averages the gradients across ranks (call after backward(), before the
  /// optimizer's step): starts the buckets backward did not, waits for every
  /// bucket and writes the averages back. A parameter without a gradient on
  /// this rank takes part with zeros (its gradient becomes the average).
  /// Several backward() calls before it (gradient accumulation) average
  /// the summed gradients: a bucket started by an earlier backward is
  /// started again.
  void sync_gradients(SourceLoc loc = SourceLoc::current());
  /// The wrapped module.
  nn::Module &module() const { return *module_; }
  /// The parameters, grouped into buckets (indices into parameters()): in
  /// reverse order at first, then (rebuild_buckets) in the order rank 0's
  /// gradients became ready in the first iteration.
  const std::vector<std::vector<size_t>> &buckets() const { return buckets_; }
  /// Buckets whose all_reduce has started since the last sync_gradients()
  /// (during backward: those whose gradients were all ready).
  int64_t buckets_started() const;

  /// The buckets' state, shared with the parameters' hooks (implementation).
  struct Reducer;

private:
  /// Throws on every rank unless all ranks' parameters agree.
  void verifyShapes(const SourceLoc &loc) const;
  /// Groups the parameters of `order` that require grad into buckets.
  void makeBuckets(const std::vector<size_t> &order);
  /// Regroups the buckets in rank 0's first-iteration ready order.
  void rebuildBuckets(const SourceLoc &loc);

  std::shared_ptr<nn::Module> module_;
  std::vector<Tensor> params_;
  std::vector<std::vector<size_t>> buckets_;
  std::shared_ptr<Reducer> reducer_;
  DistributedDataParallelOptions options_;
};

} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_H
