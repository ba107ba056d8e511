//===- ErrorCatalogueTest.cpp - docs/errors.md's D rows, one case each ----===//
//
// As tests/error/CatalogueTest.cpp, for strata::distributed's user errors
// that one process raises (check_catalogue.py reads both files); the faults
// that need several processes are run_fault.py's ctests.
//
//===----------------------------------------------------------------------===//
#include "../error/ErrorCase.h"
#include <strata/DLPack.h>
#include <strata/distributed.h>
#include <strata/strata.h>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
namespace fs = std::filesystem;

namespace {

using strata_test::Case;

/// Runs case `c` of this file.
void expectCase(const Case &c) {
  strata_test::expectCase(c, "ErrorCatalogueTest.cpp");
}

/// A one-rank group through a fresh file:// store.
std::string freshStore() {
  fs::path dir = fs::temp_directory_path() /
                 ("strata-dist-catalogue-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return "file://" + dir.string();
}

/// A file:// store in which an init_process_group of rank 0 (of 2) timed
/// out: its record stays, as after an interrupted run.
std::string storeOfFailedInit() {
  std::string store = freshStore();
  try {
    dist::init_process_group("gloo", store, std::chrono::milliseconds(100), 2,
                             0);
  } catch (const Error &) {
  }
  return store;
}

} // namespace

TEST(DistributedErrorCatalogue, Initialization) {
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("RANK");
  std::chrono::milliseconds t(2000);
  // clang-format off
  std::vector<Case> cases = {
    CASE("D01", "get_rank: Default process group has not been initialized", (void)dist::get_rank()),
    CASE("D02", "init_process_group: Invalid backend: 'mpi'", dist::init_process_group("mpi")),
    CASE("D03", "init_process_group: the nccl backend needs libnccl-absent.so.2, which could not be loaded (", ::setenv("STRATA_NCCL_LIBRARY", "libnccl-absent.so.2", 1); dist::init_process_group("nccl")),
    CASE("D04", "init_process_group: environment variable WORLD_SIZE expected, but not set", dist::init_process_group()),
    CASE("D05", "init_process_group: environment variable RANK must be an integer, but got 'one'", ::setenv("RANK", "one", 1); dist::init_process_group("gloo", "env://", t, 2)),
    CASE("D24", "init_process_group: environment variable WORLD_SIZE must be in [0, 1048576], but got '99999999999999999999'", ::setenv("WORLD_SIZE", "99999999999999999999", 1); dist::init_process_group("gloo", "env://", t); ::unsetenv("WORLD_SIZE")),
    CASE("D25", "init_process_group: init_method 'file:///nonexistent-strata-dir' names no directory ('/nonexistent-strata-dir' does not exist)", dist::init_process_group("gloo", "file:///nonexistent-strata-dir", t, 1, 0)),
    CASE("D26", "init_process_group: rank 0's rendezvous record is already in the file:// directory", dist::init_process_group("gloo", storeOfFailedInit(), t, 2, 0)),
    CASE("D06", "init_process_group: the rank must be in [0, world_size), but got rank 2 and world_size 2", dist::init_process_group("gloo", "env://", t, 2, 2)),
    CASE("D07", "init_process_group: MASTER_PORT must be in [1, 65535], but got 70000", ::setenv("MASTER_ADDR", "127.0.0.1", 1); ::setenv("MASTER_PORT", "70000", 1); dist::init_process_group("gloo", "env://", t, 1, 0)),
    CASE("D08", "init_process_group: unsupported init_method 'tcp://x'", dist::init_process_group("gloo", "tcp://x", t, 1, 0)),
    CASE("D09", "init_process_group: the timeout must be positive, but got 0 ms", dist::init_process_group("gloo", "env://", std::chrono::milliseconds(0), 1, 0)),
    CASE("D18", "DistributedDataParallel: Default process group has not been initialized", dist::DistributedDataParallel ddp(nn::Linear(2, 2))),
    CASE("D21", "init_process_group: the nccl backend expected NCCL's entry point ncclGetUniqueId in libm.so.6, but the library lacks it", ::setenv("STRATA_NCCL_LIBRARY", "libm.so.6", 1); dist::init_process_group("nccl")),
    // The fake NCCL loads; the CUDA driver (first loaded here) does not.
    CASE("D22", "init_process_group: the nccl backend needs a CUDA device (no CUDA device: ", ::setenv("STRATA_NCCL_LIBRARY", STRATA_FAKE_NCCL, 1); ::setenv("STRATA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1); dist::init_process_group("nccl")),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
  ::unsetenv("RANK");
  ::unsetenv("STRATA_NCCL_LIBRARY");
  ::unsetenv("STRATA_CUDA_DRIVER");
}

TEST(DistributedErrorCatalogue, Collectives) {
  dist::init_process_group("gloo", freshStore(), std::chrono::seconds(10), 1,
                           0);
  Tensor f = ones({2});
  Tensor i = ones({2}, dtype(kInt64));
  // A CUDA tensor over a made-up address: wrapping needs no driver, and the
  // collective refuses it before reading it.
  DLManagedTensor cuda{};
  int64_t shape[1] = {2};
  cuda.dl_tensor.data = reinterpret_cast<void *>(0x1000);
  cuda.dl_tensor.device = {kDLCUDA, 0};
  cuda.dl_tensor.ndim = 1;
  cuda.dl_tensor.dtype = {kDLFloat, 32, 1};
  cuda.dl_tensor.shape = shape;
  cuda.deleter = [](DLManagedTensor *) {};
  // clang-format off
  std::vector<Case> cases = {
    CASE("D10", "init_process_group: trying to initialize the default process group twice!", dist::init_process_group("gloo", "env://", std::chrono::seconds(1), 1, 0)),
    CASE("D11", "all_reduce: the gloo backend takes CPU tensors, but got a tensor on cuda:0; collectives on CUDA tensors need backend \"nccl\"", dist::all_reduce(from_dlpack(&cuda))),
    CASE("D12", "broadcast: expected a defined tensor, but got an undefined one", dist::broadcast(Tensor(), 0)),
    CASE("D13", "all_reduce: ReduceOp.AVG needs a floating-point tensor, but got torch.int64", dist::all_reduce(i, dist::ReduceOp::AVG)),
    CASE("D14", "broadcast: src must be a rank in [0, 1), but got 1", dist::broadcast(f, 1)),
    CASE("D15", "all_gather: tensor_list must have world size (1) tensors, but got 2", dist::all_gather({f, f}, f)),
    CASE("D16", "reduce_scatter: input_list[0] must have the shape and dtype of the tensor", dist::reduce_scatter(f, {i})),
    CASE("D17", "all_gather_into_tensor: output tensor size must be equal to world_size times input tensor size", dist::all_gather_into_tensor(ones({3}), f)),
    CASE("D23", "all_reduce: more than one element of the tensor that takes the result refers to a single memory location (sizes [4], strides [0]): no data was sent", dist::all_reduce(ones({1}).expand({4}))),
    CASE("D19", "DistributedDataParallel: bucket_cap_bytes must be positive, but got 0", dist::DistributedDataParallel ddp(nn::Linear(2, 2), {0})),
    CASE("D20", "DistributedDataParallel: expected a module, but got a null pointer", dist::DistributedDataParallel ddp{std::shared_ptr<nn::Module>()}),
  };
  // clang-format on
  for (const Case &c : cases)
    expectCase(c);
  // World size 1 runs every collective locally.
  dist::all_reduce(f, dist::ReduceOp::AVG);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 1}));
  dist::destroy_process_group();
  EXPECT_FALSE(dist::is_initialized());
}
