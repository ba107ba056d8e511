//===- Nccl.cpp - NCCL through dlopen: the communicator and its waits -----===//
//
// strata never links NCCL: the library STRATA_NCCL_LIBRARY names
// (libnccl.so.2) is dlopen'ed by init_process_group("nccl"), as the CUDA
// driver is (no NCCL header: the types below are its ABI, nccl.h 2.10+).
// Rank 0 makes the ncclUniqueId and writes it to the group's store; every
// rank then joins the communicator, with NCCL 2.14+ through the
// non-blocking ncclCommInitRankConfig, polled until the group's timeout
// (then aborted: a rank that never joins hangs no one). A collective is queued
// on strata's CUDA stream, so it runs after the kernels that computed its
// inputs, and waited for with the group's timeout as deadline: the stream and
// ncclCommGetAsyncError are polled (an async error of ncclInProgress, as a
// nonblocking communicator says, is still running); on an error or at the
// deadline the communicator is aborted (ncclCommAbort ends its kernels) and
// the group broken, so no rank hangs on a peer that never comes.
//
//===----------------------------------------------------------------------===//
#include "Nccl.h"
#include "Rendezvous.h"

#include "strata/Runtime/CudaDriver.h"
#include "strata/Runtime/Settings.h"
#include "strata/strata.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <thread>

namespace strata {
namespace distributed {
namespace detail {

namespace {

using Result = int;    // ncclResult_t
using Comm = void *;   // ncclComm_t
using Stream = void *; // cudaStream_t (a CUstream)
constexpr Result kInProgress = 7;
/// ncclUniqueId: 128 opaque bytes, passed by value.
struct UniqueId {
  char internal[128];
};
/// ncclRedOp_t and ncclDataType_t.
enum : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
enum : int { kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat32 = 7, kFloat64 = 8 };
/// ncclConfig_t as NCCL 2.14 laid it out (later versions read `size`
/// bytes and default the fields added since): blocking = 0 makes
/// ncclCommInitRankConfig return at once, its progress then polled with
/// ncclCommGetAsyncError, so a rank that never joins cannot hang the others.
struct Config {
  size_t size = sizeof(Config);
  unsigned magic = 0xcafebeef;
  unsigned version = 21400; // NCCL_VERSION(2, 14, 0)
  int blocking = 0;
};
constexpr int kNonBlockingVersion = 21400;

/// The NCCL entry points strata calls.
struct Api {
  Result (*getUniqueId)(UniqueId *);
  Result (*commInitRank)(Comm *, int, UniqueId, int);
  /// NCCL 2.14+ only (null before): the non-blocking init.
  Result (*getVersion)(int *);
  Result (*commInitRankConfig)(Comm *, int, UniqueId, int, Config *);
  Result (*commDestroy)(Comm);
  Result (*commAbort)(Comm);
  Result (*commGetAsyncError)(Comm, Result *);
  const char *(*getErrorString)(Result);
  Result (*allReduce)(const void *, void *, size_t, int, int, Comm, Stream);
  Result (*broadcast)(const void *, void *, size_t, int, int, Comm, Stream);
  Result (*allGather)(const void *, void *, size_t, int, Comm, Stream);
  Result (*reduceScatter)(const void *, void *, size_t, int, int, Comm, Stream);
};

int ncclType(DType t) {
  switch (t) {
  case DType::F32:
    return kFloat32;
  case DType::F64:
    return kFloat64;
  case DType::I32:
    return kInt32;
  case DType::I64:
    return kInt64;
  case DType::Bool:
    return kUint8;
  }
  return kUint8;
}

/// bool: SUM is logical or (max of 0/1), PRODUCT logical and (min), as on
/// gloo.
int ncclReduce(DType t, ReduceOp op) {
  switch (op) {
  case ReduceOp::SUM:
    return t == DType::Bool ? kMax : kSum;
  case ReduceOp::AVG:
    return kAvg;
  case ReduceOp::PRODUCT:
    return t == DType::Bool ? kMin : kProd;
  case ReduceOp::MIN:
    return kMin;
  case ReduceOp::MAX:
    return kMax;
  }
  return kSum;
}

} // namespace

struct NcclComm {
  Api api{};
  std::string library;
  runtime::cuda::Driver *driver = nullptr;
  Comm comm = nullptr;
  bool aborted = false;

  std::string text(Result r) const {
    const char *s = api.getErrorString ? api.getErrorString(r) : nullptr;
    return std::string(s ? s : "unknown NCCL error") + " (" +
           std::to_string(r) + ")";
  }

  ~NcclComm() {
    if (comm && !aborted)
      api.commDestroy(comm);
  }
};

std::shared_ptr<NcclComm> loadNccl(const std::string &what,
                                   const SourceLoc &loc) {
  auto c = std::make_shared<NcclComm>();
  c->library = runtime::settings::ncclLibrary();
  // Kept loaded once it is NCCL (the process's communicators need it).
  void *lib = dlopen(c->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    fail(what + ": the nccl backend needs " + c->library +
             ", which could not be loaded (" +
             std::string(why ? why : "not found") + ")",
         "install NCCL (Debian: libnccl2) on a machine with NVIDIA GPUs, "
         "or use backend \"gloo\" with CPU tensors",
         loc);
  }
  std::string missing;
  auto resolve = [&](auto &f, const char *name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(
        dlsym(lib, name));
    if (!f && missing.empty())
      missing = name;
  };
  Api &a = c->api;
  resolve(a.getUniqueId, "ncclGetUniqueId");
  resolve(a.commInitRank, "ncclCommInitRank");
  resolve(a.commDestroy, "ncclCommDestroy");
  resolve(a.commAbort, "ncclCommAbort");
  resolve(a.commGetAsyncError, "ncclCommGetAsyncError");
  resolve(a.getErrorString, "ncclGetErrorString");
  resolve(a.allReduce, "ncclAllReduce");
  resolve(a.broadcast, "ncclBroadcast");
  resolve(a.allGather, "ncclAllGather");
  resolve(a.reduceScatter, "ncclReduceScatter");
  // Optional: without them (NCCL < 2.14) the init blocks, unbounded.
  a.getVersion =
      reinterpret_cast<decltype(a.getVersion)>(dlsym(lib, "ncclGetVersion"));
  a.commInitRankConfig = reinterpret_cast<decltype(a.commInitRankConfig)>(
      dlsym(lib, "ncclCommInitRankConfig"));
  if (!missing.empty()) {
    dlclose(lib);
    fail(what + ": the nccl backend expected NCCL's entry point " + missing +
             " in " + c->library +
             ", but the library lacks it (not NCCL, "
             "or NCCL older than 2.10)",
         "install NCCL 2.10 or newer (Debian: libnccl2), or point "
         "STRATA_NCCL_LIBRARY at its libnccl.so.2",
         loc);
  }
  std::string why;
  c->driver = runtime::cuda::Driver::get(why);
  if (!c->driver)
    fail(what + ": the nccl backend needs a CUDA device (" + why + ")",
         "run on a machine with NVIDIA GPUs, or use backend \"gloo\" with "
         "CPU tensors",
         loc);
  return c;
}

namespace {

/// NCCL's non-blocking init: polls the communicator until it is ready, it
/// failed, or the group's timeout ends (then aborts it and names the ranks
/// that never called ncclCommInitRankConfig, as the store tells).
Result initWithin(Group &g, NcclComm &c, const UniqueId &id,
                  const std::string &what, const SourceLoc &loc) {
  using Clock = std::chrono::steady_clock;
  const std::string joining = g.keyPrefix + "nccl/joining/";
  try {
    g.store->set(joining + std::to_string(g.rank), {1});
  } catch (const std::exception &) {
  }
  Config config;
  Result rc = c.api.commInitRankConfig(&c.comm, g.size, id, g.rank, &config);
  if (rc != 0 && rc != kInProgress)
    return rc;
  const Clock::time_point deadline = Clock::now() + g.timeout;
  std::chrono::microseconds pause(100);
  for (;;) {
    Result state = 0;
    rc = c.api.commGetAsyncError(c.comm, &state);
    if (rc != 0 || state != kInProgress)
      return rc ? rc : state;
    if (Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
  c.api.commAbort(c.comm);
  c.comm = nullptr;
  std::vector<int> missing;
  try {
    for (int r = 0; r < g.size; ++r)
      if (!g.store->check({joining + std::to_string(r)}))
        missing.push_back(r);
  } catch (const std::exception &) {
  }
  fail(what + ": rank " + std::to_string(g.rank) +
           "'s ncclCommInitRankConfig did not complete within " +
           std::to_string(g.timeout.count()) + " ms (then ncclCommAbort): " +
           (missing.empty()
                ? "every rank called it, NCCL's own connection between them "
                  "did not complete"
                : rankList(missing) + (missing.size() == 1 ? " has" : " have") +
                      " not called it (stuck or gone after joining the gloo "
                      "group)"),
       "NCCL_DEBUG=INFO prints NCCL's progress; every rank needs its own "
       "GPU (CUDA_VISIBLE_DEVICES) and a network NCCL can use; a longer "
       "timeout (init_process_group's timeout) if the ranks are slow",
       loc);
}

} // namespace

void connectNccl(Group &g, const std::string &what, const SourceLoc &loc) {
  NcclComm &c = *g.nccl;
  UniqueId id{};
  std::string step = "ncclGetUniqueId";
  const std::string idKey = g.keyPrefix + "nccl/unique_id";
  Result rc = 0;
  try {
    if (g.rank == 0) {
      if ((rc = c.api.getUniqueId(&id)) == 0)
        g.store->set(idKey,
                     std::vector<char>(id.internal, id.internal + sizeof id));
    } else {
      step = "reading rank 0's ncclUniqueId from the store";
      g.store->wait({idKey});
      std::vector<char> bytes = g.store->get(idKey);
      std::memcpy(id.internal, bytes.data(),
                  std::min(bytes.size(), sizeof id.internal));
    }
  } catch (const std::exception &e) {
    std::string m = e.what();
    fail(what + ": rank " + std::to_string(g.rank) + " failed " + step + " [" +
             m.substr(0, m.find('\n')) + "]",
         "check that every rank runs with backend \"nccl\"", loc);
  }
  c.driver->stream(); // NCCL joins the current CUDA context (cuda:0)
  int version = 0;
  if (c.api.getVersion && c.api.getVersion(&version) != 0)
    version = 0;
  if (rc == 0 && c.api.commInitRankConfig && version >= kNonBlockingVersion) {
    step = "ncclCommInitRankConfig";
    rc = initWithin(g, c, id, what, loc);
  } else if (rc == 0) {
    step = "ncclCommInitRank"; // NCCL < 2.14: blocks until all have joined
    rc = c.api.commInitRank(&c.comm, g.size, id, g.rank);
  }
  if (rc != 0) {
    if (c.comm && step == "ncclCommInitRankConfig")
      c.api.commAbort(c.comm); // a failed non-blocking init is freed so
    c.comm = nullptr;
    fail(what + ": rank " + std::to_string(g.rank) + "'s " + step +
             " failed: " + c.text(rc),
         "NCCL_DEBUG=INFO prints NCCL's reasons; every rank needs its own "
         "GPU (CUDA_VISIBLE_DEVICES)",
         loc);
  }
}

namespace {

/// Aborts the communicator, breaks the group and throws `message`.
[[noreturn]] void abortWith(Group &g, NcclComm &c, const std::string &message,
                            const std::string &hint) {
  if (c.comm && !c.aborted)
    c.api.commAbort(c.comm);
  c.aborted = true;
  {
    std::lock_guard<std::mutex> lock(g.m);
    if (g.broken.empty())
      g.broken = message;
  }
  throw Error(message, hint, std::source_location::current());
}

/// Polls until the stream has run the collective, an error, or the deadline.
void waitFor(Group &g, NcclComm &c, const std::string &what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + g.timeout;
  std::chrono::microseconds pause(10);
  const std::string rank = "rank " + std::to_string(g.rank);
  for (;;) {
    // NCCL's state first: once it is no longer ncclInProgress (a
    // non-blocking communicator may still be enqueueing), the stream's
    // state covers the collective.
    Result async = 0;
    Result rc = c.api.commGetAsyncError(c.comm, &async);
    if (rc != 0 || (async != 0 && async != kInProgress))
      abortWith(g, c,
                what + ": " + rank +
                    "'s NCCL communicator failed (did a rank "
                    "exit or crash?) [nccl: " +
                    c.text(rc ? rc : async) + "]",
                "look at the other ranks' output for the first failure; "
                "NCCL_DEBUG=INFO prints NCCL's reasons");
    bool done = false;
    std::string e = c.driver->queryStream(done);
    if (!e.empty())
      abortWith(g, c,
                what + ": " + rank + "'s CUDA stream failed while NCCL ran [" +
                    e + "]",
                "look at the other ranks' output for the first failure");
    if (done && async != kInProgress)
      return;
    if (Clock::now() >= deadline)
      abortWith(g, c,
                what + ": " + rank + " timed out after " +
                    std::to_string(g.timeout.count()) +
                    " ms waiting for the other ranks [nccl: the communicator "
                    "was aborted]",
                "every rank must call the same collectives in the same "
                "order; a longer timeout (init_process_group's timeout) if a "
                "rank is slow");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

} // namespace

std::function<void()> ncclWork(Group *g, NcclOp op, const void *send,
                               void *recv, size_t count, DType dtype,
                               ReduceOp reduce, int root,
                               const std::string &what) {
  return [=]() {
    if (count == 0)
      return;
    NcclComm &c = *g->nccl;
    Stream s = c.driver->stream();
    int t = ncclType(dtype), r = ncclReduce(dtype, reduce);
    Result rc = 0;
    const char *call = "";
    switch (op) {
    case NcclOp::AllReduce:
      call = "ncclAllReduce";
      rc = c.api.allReduce(send, recv, count, t, r, c.comm, s);
      break;
    case NcclOp::Broadcast:
      call = "ncclBroadcast";
      rc = c.api.broadcast(send, recv, count, t, root, c.comm, s);
      break;
    case NcclOp::AllGather:
      call = "ncclAllGather";
      rc = c.api.allGather(send, recv, count, t, c.comm, s);
      break;
    case NcclOp::ReduceScatter:
      call = "ncclReduceScatter";
      rc = c.api.reduceScatter(send, recv, count, t, r, c.comm, s);
      break;
    }
    if (rc != 0 && rc != kInProgress) // in progress: a non-blocking comm
      abortWith(*g, c,
                what + ": rank " + std::to_string(g->rank) + "'s " + call +
                    " failed [nccl: " + c.text(rc) + "]",
                "NCCL_DEBUG=INFO prints NCCL's reasons");
    waitFor(*g, c, what);
  };
}

} // namespace detail
} // namespace distributed
} // namespace strata
