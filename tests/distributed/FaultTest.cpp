//===- FaultTest.cpp - one rank's part in a fault case (run_fault.py) -----===//
//
//   strata-dist-fault MODE TIMEOUT_MS
//
// Joins the group from the environment (or file://$STRATA_TEST_STORE when
// set) with the given timeout, then plays MODE's part for this rank:
// exit-early, crash and hang (rank 1 leaves, aborts, or never calls the
// collective), shape and dtype (rank 1 gives another tensor), sizes (1,000
// floats against 1,200: with equal gloo tags gloo itself aborts the
// process), order (the ranks call all_reduce and broadcast in opposite
// orders), missing and
// no-master (run_fault.py starts fewer ranks or none at the master),
// port-in-use (run_fault.py holds the master port),
// ddp-shapes (rank 1 wraps a model of other shapes),
// file-store, file-store-reused and file-store-stale (a plain all_reduce;
// run_fault.py runs an earlier group in the directory first), world-size
// and check-env (run_fault.py gives rank 1 another WORLD_SIZE, or
// STRATA_DISTRIBUTED_CHECK=0), check-toggled (rank 1 turns the check off
// after init). Prints "OK" and exits 0, or prints
// "strata::Error: <what()>" and exits 1; any other exception exits 2.
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace strata;
namespace dist = strata::distributed;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODE TIMEOUT_MS\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  std::chrono::milliseconds timeout(std::atoll(argv[2]));
  const char *storeDir = std::getenv("STRATA_TEST_STORE");
  auto start = std::chrono::steady_clock::now();
  try {
    dist::init_process_group(
        "gloo", storeDir ? std::string("file://") + storeDir : "env://",
        timeout);
    int64_t rank = dist::get_rank();
    if (rank == 1) {
      if (mode == "exit-early")
        std::_Exit(0);
      if (mode == "crash")
        std::abort();
      if (mode == "hang")
        std::this_thread::sleep_for(std::chrono::minutes(5));
    }
    if (mode == "check-toggled" && rank == 1)
      dist::set_consistency_check(false);
    if (mode == "ddp-shapes") {
      nn::Linear model(rank == 1 ? 3 : 2, 2);
      dist::DistributedDataParallel ddp(model);
    }
    if (mode == "sizes") {
      Tensor big = ones({rank == 1 ? 1200 : 1000}, dtype(kFloat32));
      dist::all_reduce(big);
    }
    if (mode == "order") {
      Tensor a = ones({8}, dtype(kFloat32));
      if (rank == 0)
        dist::all_reduce(a);
      dist::broadcast(a, 0);
      if (rank == 1)
        dist::all_reduce(a);
    }
    Tensor t = ones({3}, dtype(kFloat32));
    if (rank == 1 && mode == "shape")
      t = ones({4}, dtype(kFloat32));
    if (rank == 1 && mode == "dtype")
      t = ones({3}, dtype(kFloat64));
    dist::all_reduce(t);
    double first = t.to(kFloat64).to_vector<double>()[0];
    if (first != static_cast<double>(dist::get_world_size())) {
      std::printf("WRONG %g\n", first);
      return 2;
    }
    // A second collective: the group still works after a clean one.
    dist::barrier();
    std::printf("OK\n");
    return 0;
  } catch (const Error &e) {
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("strata::Error after %.1f s: %s\n", s, e.what());
    return 1;
  } catch (const std::exception &e) {
    std::printf("OTHER: %s\n", e.what());
    return 2;
  }
}
