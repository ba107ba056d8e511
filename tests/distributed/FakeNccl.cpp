//===- FakeNccl.cpp - a test double of libnccl.so.2 on the CUDA simulator -===//
//
// libstrata-fake-nccl.so implements the NCCL entry points strata calls, for
// the tests of the nccl backend without a GPU (STRATA_NCCL_LIBRARY points
// at it, STRATA_CUDA_DRIVER at the simulator). Device memory is the
// simulator's: a collective copies its input to the host with the driver's
// cuMemcpyDtoHAsync_v2 (the library STRATA_CUDA_DRIVER names, already
// loaded), runs the collective with gloo on the host (TCP on loopback;
// the rendezvous is a gloo FileStore in a directory ncclGetUniqueId makes
// and writes into the id's bytes) and copies the result back with
// cuMemcpyHtoDAsync_v2. As NCCL's, a collective returns once queued: it
// runs on the communicator's own thread, and ncclCommGetAsyncError says
// ncclInProgress until it has finished (the simulator's stream is
// synchronous, so only that tells strata the collective still runs), then
// ncclSuccess or the failure. ncclCommAbort leaves a collective blocked on
// a peer that never comes behind; its thread ends at gloo's timeout
// (STRATA_FAKE_NCCL_TIMEOUT_MS, 60 s by default).
//
// ncclGetVersion says 2.18.5 (STRATA_FAKE_NCCL_VERSION overrides it), and
// ncclCommInitRankConfig with blocking = 0 returns at once, the join
// running on the communicator's thread (ncclCommGetAsyncError says
// ncclInProgress until it is done). STRATA_FAKE_NCCL_HANG_INIT=1 makes this
// process's init hang until ncclCommAbort (a rank that never joins).
//
// It proves strata's side: which calls, with which pointers, counts, types,
// reductions and roots, on which stream, the waits and the error paths. It
// does not prove NCCL's behaviour or anything of a GPU (tests/gpu/run.sh).
//
//===----------------------------------------------------------------------===//
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Result = int;
enum : Result {
  kSuccess = 0,
  kCudaError = 1,
  kSystemError = 2,
  kInvalidArgument = 4,
  kRemoteError = 6,
  kInProgress = 7
};
enum : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
enum : int { kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat32 = 7, kFloat64 = 8 };

struct UniqueId {
  char internal[128];
};

/// The simulator's copies, resolved from the loaded driver.
struct Driver {
  int (*dtoh)(void *, uint64_t, size_t, void *) = nullptr;
  int (*htod)(uint64_t, const void *, size_t, void *) = nullptr;
  int (*sync)(void *) = nullptr;
};

const Driver *driver() {
  static Driver d = [] {
    Driver r;
    const char *path = std::getenv("STRATA_CUDA_DRIVER");
    std::string name = path && *path ? path : "libcuda.so.1";
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      lib = dlopen(name.c_str(), RTLD_NOW);
    if (!lib)
      return r;
    r.dtoh =
        reinterpret_cast<decltype(r.dtoh)>(dlsym(lib, "cuMemcpyDtoHAsync_v2"));
    r.htod =
        reinterpret_cast<decltype(r.htod)>(dlsym(lib, "cuMemcpyHtoDAsync_v2"));
    r.sync =
        reinterpret_cast<decltype(r.sync)>(dlsym(lib, "cuStreamSynchronize"));
    return r;
  }();
  return d.dtoh && d.htod && d.sync ? &d : nullptr;
}

size_t sizeOf(int type) {
  switch (type) {
  case kUint8:
    return 1;
  case kInt32:
    return 4;
  case kInt64:
  case kFloat64:
    return 8;
  case kFloat32:
    return 4;
  }
  return 0;
}

/// One communicator: its gloo context and the thread that runs its work.
struct Comm {
  int rank = 0, size = 1;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  uint32_t tag = 1;
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  int pending = 0;
  Result error = kSuccess;
  bool stop = false, running = false;
  /// A non-blocking init still joining (the worker thread does it first).
  bool initializing = false;
  std::thread worker;

  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty())
          return;
        job = std::move(queue.front());
        queue.pop_front();
        running = true;
      }
      Result r = kSuccess;
      try {
        job();
      } catch (const std::exception &e) {
        std::string what = e.what();
        std::fprintf(stderr, "[fake nccl] rank %d: %s\n", rank,
                     what.substr(0, what.find('\n')).c_str());
        r = what.find("imed out") != std::string::npos ? kSystemError
                                                       : kRemoteError;
      } catch (Result cuda) {
        r = cuda;
      }
      std::lock_guard<std::mutex> lock(m);
      running = false;
      --pending;
      if (r != kSuccess && error == kSuccess)
        error = r;
      cv.notify_all();
    }
  }

  Result enqueue(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(m);
    if (error != kSuccess)
      return error;
    ++pending;
    queue.push_back(std::move(job));
    cv.notify_all();
    return kSuccess;
  }
};

std::atomic<long> gCollectives{0};

void check(int cudaResult) {
  if (cudaResult != 0)
    throw Result(kCudaError);
}

std::vector<char> toHost(const void *src, size_t bytes, void *stream) {
  std::vector<char> host(bytes);
  check(driver()->dtoh(host.data(), reinterpret_cast<uint64_t>(src), bytes,
                       stream));
  check(driver()->sync(stream));
  return host;
}

void toDevice(void *dst, const char *src, size_t bytes, void *stream) {
  check(driver()->htod(reinterpret_cast<uint64_t>(dst), src, bytes, stream));
  check(driver()->sync(stream));
}

template <typename T> void reduceAll(Comm *c, T *p, size_t n, int op) {
  using Fn = void (*)(void *, const void *, const void *, size_t);
  Fn fn = op == kProd  ? static_cast<Fn>(&gloo::product<T>)
          : op == kMax ? static_cast<Fn>(&gloo::max<T>)
          : op == kMin ? static_cast<Fn>(&gloo::min<T>)
                       : static_cast<Fn>(&gloo::sum<T>);
  if (c->size > 1) {
    gloo::AllreduceOptions opts(c->context);
    opts.setOutput(p, n);
    opts.setReduceFunction(fn);
    opts.setTag(c->tag++);
    gloo::allreduce(opts);
  }
  if (op == kAvg)
    for (size_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(p[i] / static_cast<T>(c->size));
}

void reduce(Comm *c, void *p, size_t n, int type, int op) {
  switch (type) {
  case kUint8:
    return reduceAll(c, static_cast<uint8_t *>(p), n, op);
  case kInt32:
    return reduceAll(c, static_cast<int32_t *>(p), n, op);
  case kInt64:
    return reduceAll(c, static_cast<int64_t *>(p), n, op);
  case kFloat32:
    return reduceAll(c, static_cast<float *>(p), n, op);
  case kFloat64:
    return reduceAll(c, static_cast<double *>(p), n, op);
  }
}

bool valid(Comm *c, int type, int op) {
  return c && driver() && sizeOf(type) && op >= kSum && op <= kAvg;
}

std::chrono::milliseconds timeout() {
  const char *t = std::getenv("STRATA_FAKE_NCCL_TIMEOUT_MS");
  return std::chrono::milliseconds(t && *t ? std::atol(t) : 60000);
}

} // namespace

extern "C" {

/// Collectives queued so far in this process (the tests' proof that a
/// collective ran here, on NCCL, and not on gloo's CPU path).
long strataFakeNcclCollectives() { return gCollectives.load(); }

const char *ncclGetErrorString(Result r) {
  switch (r) {
  case kSuccess:
    return "no error";
  case kCudaError:
    return "unhandled cuda error (fake nccl)";
  case kSystemError:
    return "unhandled system error (fake nccl: gloo timed out)";
  case kInvalidArgument:
    return "invalid argument (fake nccl)";
  case kRemoteError:
    return "remote process exited or there was a network error (fake nccl)";
  case kInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result (fake nccl)";
}

Result ncclGetUniqueId(UniqueId *id) {
  std::string dir =
      (std::filesystem::temp_directory_path() / "strata-fake-nccl-XXXXXX")
          .string();
  if (dir.size() >= sizeof id->internal || !mkdtemp(dir.data()))
    return kSystemError;
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, dir.data(), dir.size());
  return kSuccess;
}

int ncclGetVersion(int *version) {
  if (!version)
    return kInvalidArgument;
  const char *v = std::getenv("STRATA_FAKE_NCCL_VERSION");
  *version = v && *v ? std::atoi(v) : 21805;
  return kSuccess;
}

} // extern "C"

namespace {

/// Joins communicator `c` through the FileStore named by `id` (the
/// simulated bootstrap). With STRATA_FAKE_NCCL_HANG_INIT=1 it waits until
/// the communicator is aborted instead, and fails.
Result join(Comm *c, const UniqueId &id) {
  const char *hang = std::getenv("STRATA_FAKE_NCCL_HANG_INIT");
  if (hang && std::string(hang) == "1") {
    std::unique_lock<std::mutex> lock(c->m);
    c->cv.wait(lock, [c] { return c->stop; });
    return kSystemError;
  }
  std::string dir(id.internal, strnlen(id.internal, sizeof id.internal));
  try {
    gloo::rendezvous::FileStore store(dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    c->device = gloo::transport::tcp::CreateDevice(attr);
    c->context = std::make_shared<gloo::rendezvous::Context>(c->rank, c->size);
    c->context->setTimeout(timeout());
    c->context->connectFullMesh(store, c->device);
    gloo::BarrierOptions barrier(c->context);
    barrier.setTag(0);
    gloo::barrier(barrier); // every rank has read the store: remove it
    if (c->rank == 0)
      std::filesystem::remove_all(dir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "[fake nccl] rank %d: %s\n", c->rank, e.what());
    return kSystemError;
  }
  return kSuccess;
}

} // namespace

extern "C" {

Result ncclCommInitRank(Comm **comm, int nranks, UniqueId id, int rank) {
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks || !driver())
    return kInvalidArgument;
  auto c = std::make_unique<Comm>();
  c->rank = rank;
  c->size = nranks;
  if (Result r = join(c.get(), id))
    return r;
  Comm *p = c.release();
  p->worker = std::thread([p] { p->loop(); });
  *comm = p;
  return kSuccess;
}

/// NCCL 2.14's ncclConfig_t (the prefix every later version keeps).
struct Config {
  size_t size;
  unsigned magic, version;
  int blocking;
};

Result ncclCommInitRankConfig(Comm **comm, int nranks, UniqueId id, int rank,
                              Config *config) {
  if (!config || config->magic != 0xcafebeef || config->size < sizeof(Config))
    return kInvalidArgument;
  if (config->blocking != 0 || config->version < 21400)
    return ncclCommInitRank(comm, nranks, id, rank);
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks || !driver())
    return kInvalidArgument;
  Comm *p = new Comm;
  p->rank = rank;
  p->size = nranks;
  p->initializing = true;
  p->worker = std::thread([p, id] {
    Result r = join(p, id);
    {
      std::lock_guard<std::mutex> lock(p->m);
      p->initializing = false;
      if (r != kSuccess)
        p->error = r;
    }
    p->cv.notify_all();
    if (r == kSuccess)
      p->loop();
  });
  *comm = p;
  return kInProgress;
}

Result ncclCommGetAsyncError(Comm *c, Result *error) {
  if (!c || !error)
    return kInvalidArgument;
  std::lock_guard<std::mutex> lock(c->m);
  *error = c->error != kSuccess                ? c->error
           : c->initializing || c->pending > 0 ? kInProgress
                                               : kSuccess;
  return kSuccess;
}

Result ncclCommDestroy(Comm *c) {
  if (!c)
    return kInvalidArgument;
  {
    std::lock_guard<std::mutex> lock(c->m);
    c->stop = true; // after the queued work, as NCCL's
  }
  c->cv.notify_all();
  c->worker.join();
  delete c;
  return kSuccess;
}

Result ncclCommAbort(Comm *c) {
  if (!c)
    return kInvalidArgument;
  bool blocked;
  {
    std::lock_guard<std::mutex> lock(c->m);
    c->stop = true;
    c->queue.clear();
    blocked = c->running || c->initializing;
  }
  c->cv.notify_all();
  if (blocked) {
    // A collective (or the join) waits in gloo for a peer: left behind,
    // with its communicator, until gloo's timeout ends it.
    c->worker.detach();
    return kSuccess;
  }
  c->worker.join();
  delete c;
  return kSuccess;
}

/// Reduces `send`'s `count` x size elements across ranks; `recv` gets
/// `keep` of them from element `from`.
Result reduceInto(const void *send, void *recv, size_t count, size_t from,
                  size_t keep, int type, int op, Comm *c, void *stream) {
  if (!valid(c, type, op))
    return kInvalidArgument;
  ++gCollectives;
  size_t e = sizeOf(type);
  return c->enqueue([=] {
    std::vector<char> host = toHost(send, count * e, stream);
    reduce(c, host.data(), count, type, op);
    toDevice(recv, host.data() + from * e, keep * e, stream);
  });
}

Result ncclAllReduce(const void *send, void *recv, size_t count, int type,
                     int op, Comm *c, void *stream) {
  return reduceInto(send, recv, count, 0, count, type, op, c, stream);
}

Result ncclBroadcast(const void *send, void *recv, size_t count, int type,
                     int root, Comm *c, void *stream) {
  if (!valid(c, type, kSum) || root < 0 || root >= c->size)
    return kInvalidArgument;
  ++gCollectives;
  size_t bytes = count * sizeOf(type);
  return c->enqueue([=] {
    std::vector<char> host(bytes);
    if (c->rank == root)
      host = toHost(send, bytes, stream);
    if (c->size > 1) {
      gloo::BroadcastOptions opts(c->context);
      opts.setOutput(host.data(), bytes);
      opts.setRoot(root);
      opts.setTag(c->tag++);
      gloo::broadcast(opts);
    }
    toDevice(recv, host.data(), bytes, stream);
  });
}

Result ncclAllGather(const void *send, void *recv, size_t count, int type,
                     Comm *c, void *stream) {
  if (!valid(c, type, kSum))
    return kInvalidArgument;
  ++gCollectives;
  size_t bytes = count * sizeOf(type);
  return c->enqueue([=] {
    std::vector<char> in = toHost(send, bytes, stream);
    std::vector<char> out(bytes * c->size);
    if (c->size > 1) {
      gloo::AllgatherOptions opts(c->context);
      opts.setInput(in.data(), bytes);
      opts.setOutput(out.data(), out.size());
      opts.setTag(c->tag++);
      gloo::allgather(opts);
    } else {
      out = in;
    }
    toDevice(recv, out.data(), out.size(), stream);
  });
}

Result ncclReduceScatter(const void *send, void *recv, size_t count, int type,
                         int op, Comm *c, void *stream) {
  if (!c)
    return kInvalidArgument;
  return reduceInto(send, recv, count * c->size, count * c->rank, count, type,
                    op, c, stream);
}

Result ncclGroupStart() { return kSuccess; }
Result ncclGroupEnd() { return kSuccess; }

} // extern "C"
