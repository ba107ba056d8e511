//===- ProcessGroup.cpp - the default process group and its collectives ---===//
//
// One process group per process (PyTorch's default group) over a gloo TCP
// context, rendezvous through c10d::TCPStore (env://) or gloo's FileStore
// (file://). Collectives run, in call order, on one worker thread of the
// group (as ProcessGroupGloo's); the calling thread prepares them: it
// evaluates pending tensors and takes raw pointers (data_ptr() settles the
// storage, docs/design.md "Raw pointers"), packing a strided view into a
// contiguous temporary with the DSL's own contiguous(), and after the
// collective copies the result back with copy_() (a recorded write, seen by
// the version counter). Before the data, every rank's (op, dtype, shape,
// root) is all-gathered and compared, so a mismatch is an error on every
// rank rather than a hang or corrupted data. gloo's exceptions (a peer
// closed its connection, a timeout) become located strata::Errors; after
// one, the group is broken and every later call says why.
//
//===----------------------------------------------------------------------===//
#include "StoreAdapter.h"
#include "Unchecked.h"

#include "strata/distributed.h"
#include "strata/strata.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

namespace strata {
namespace distributed {

//===--- Work -------------------------------------------------------------===//

namespace {
/// Runs queued work of `group` (a Group) on this thread until `w` is done,
/// when the worker is not already running some (see Group::help).
void help(void *group, Work::State *w);
} // namespace

struct Work::State {
  /// The group whose queue holds it (null once done or for completed
  /// handles).
  void *group = nullptr;
  /// The collective's name, for messages.
  std::string what;
  /// The user's call.
  SourceLoc loc;
  /// On the worker: the gloo calls on raw pointers (may throw).
  std::function<void()> run;
  /// On the waiting thread, after success: copy-backs into strided views.
  std::function<void()> finish;
  /// The tag of the signature check (0: none).
  uint32_t checkTag = 0;
  /// Temporaries the raw pointers point into.
  std::vector<Tensor> keep;

  std::mutex m;
  std::condition_variable cv;
  bool done = false, finished = false;
  std::string error, hint;
};

Work::Work() : state_(std::make_shared<State>()) {
  state_->done = state_->finished = true;
}

Work::Work(std::shared_ptr<State> state) : state_(std::move(state)) {}

void Work::wait(SourceLoc loc) {
  (void)loc; // errors point at the collective's call, not at wait()
  void *group;
  {
    std::lock_guard<std::mutex> lock(state_->m);
    group = state_->done ? nullptr : state_->group;
  }
  if (group)
    help(group, state_.get());
  std::unique_lock<std::mutex> lock(state_->m);
  state_->cv.wait(lock, [&] { return state_->done; });
  if (state_->finished)
    return;
  state_->finished = true;
  std::string error = state_->error;
  lock.unlock();
  if (!error.empty()) {
    state_->keep.clear();
    throw Error(error, state_->hint, state_->loc);
  }
  if (state_->finish)
    state_->finish();
  state_->keep.clear();
  state_->finish = nullptr;
}

bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(state_->m);
  return state_->done;
}

bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(state_->m);
  return state_->done && state_->error.empty();
}

std::string toString(ReduceOp op) {
  switch (op) {
  case ReduceOp::SUM:
    return "sum";
  case ReduceOp::AVG:
    return "avg";
  case ReduceOp::PRODUCT:
    return "product";
  case ReduceOp::MIN:
    return "min";
  case ReduceOp::MAX:
    return "max";
  }
  return "?";
}

namespace {

//===--- The group
//----------------------------------------------------------===//

/// What a rank says about a collective before running it; every rank's
/// record must equal rank 0's.
struct Signature {
  static constexpr int kMaxDims = 8;
  int64_t op = 0, dtype = -1, reduce = -1, root = -1, count = 0, numel = 0,
          ndim = 0;
  int64_t sizes[kMaxDims] = {};
  static constexpr size_t kWords = 7 + kMaxDims;
};

std::string describe(const int64_t *w) {
  static const char *ops[] = {"?",          "all_reduce",     "broadcast",
                              "all_gather", "reduce_scatter", "barrier"};
  std::ostringstream os;
  os << (w[0] >= 0 && w[0] <= 5 ? ops[w[0]] : "?");
  if (w[0] == 5)
    return os.str();
  os << " of a tensor of shape [";
  int64_t nd = w[6];
  for (int64_t d = 0; d < std::min<int64_t>(nd, Signature::kMaxDims); ++d)
    os << (d ? ", " : "") << w[7 + d];
  if (nd > Signature::kMaxDims)
    os << ", ...";
  os << "] and dtype "
     << (w[1] >= 0 ? toString(static_cast<DType>(w[1])) : "none");
  if (w[2] >= 0)
    os << ", op " << toString(static_cast<ReduceOp>(w[2]));
  if (w[3] >= 0)
    os << ", src " << w[3];
  if (w[0] == 3 || w[0] == 4)
    os << ", a list of " << w[4] << " tensors";
  return os.str();
}

/// STRATA_DEBUG (docs/environment.md): >= 1 prints a line per packed view.
int debugLevel() {
  static int level = [] {
    const char *v = std::getenv("STRATA_DEBUG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

bool checkFromEnvironment() {
  const char *v = std::getenv("STRATA_DISTRIBUTED_CHECK");
  return !(v && std::string(v) == "0");
}

struct Group {
  int rank = 0, size = 1;
  std::chrono::milliseconds timeout{};
  std::unique_ptr<gloo::rendezvous::Store> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  uint32_t nextTag = 1;
  bool check = checkFromEnvironment();

  std::mutex m;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Work::State>> queue;
  bool running = false; // a work item runs (on the worker or inline)
  bool stop = false;
  std::string broken; // the first failure, once one happened
  std::thread worker;

  /// The worker: runs queued work in order, never while a synchronous
  /// collective runs inline on its caller's thread.
  void loop() {
    for (;;) {
      std::shared_ptr<Work::State> w;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] {
          return (!queue.empty() && !running) || (stop && queue.empty());
        });
        if (queue.empty())
          return;
        w = std::move(queue.front());
        queue.pop_front();
        running = true;
      }
      execute(*w);
      {
        std::lock_guard<std::mutex> lock(m);
        running = false;
      }
      cv.notify_all();
    }
  }

  /// Runs one work item (without holding m) and publishes its outcome.
  void execute(Work::State &item) {
    Work::State *w = &item;
    {
      std::string error, hint;
      {
        std::lock_guard<std::mutex> lock(m);
        if (!broken.empty()) {
          error =
              w->what + ": the process group failed earlier (" + broken + ")";
          hint = "a failed collective leaves the group unusable; end the "
                 "process and restart every rank";
        }
      }
      if (error.empty()) {
        try {
          w->run();
        } catch (const Error &e) {
          error = e.message();
          hint = e.hint();
        } catch (const std::exception &e) {
          std::string what = e.what();
          bool timedOut = what.find("Timed out") != std::string::npos ||
                          what.find("timed out") != std::string::npos;
          std::ostringstream os;
          os << w->what << ": ";
          if (timedOut)
            os << "rank " << rank << " timed out after " << timeout.count()
               << " ms waiting for the other ranks";
          else
            os << "rank " << rank
               << " lost its connection to another rank (did a rank exit "
                  "or crash?)";
          os << " [gloo: " << what << "]";
          error = os.str();
          hint = timedOut ? "every rank must call the same collectives in the "
                            "same order; a longer timeout "
                            "(init_process_group's timeout) if a rank is slow"
                          : "look at the other ranks' output for the first "
                            "failure";
          std::lock_guard<std::mutex> lock(m);
          broken = error;
        }
      }
      {
        std::lock_guard<std::mutex> lock(w->m);
        w->error = error;
        w->hint = hint;
        w->done = true;
        w->run = nullptr;
      }
      w->cv.notify_all();
    }
  }

  /// Until `w` is done: runs the queue's front on this thread whenever no
  /// item runs, else waits for one to finish. A thread waiting for its
  /// collective so does the work itself instead of waking the worker and
  /// sleeping (each hand-off a scheduler tick on a loaded machine), and
  /// the order stays the queue's.
  void help(Work::State *w) {
    auto isDone = [w] {
      std::lock_guard<std::mutex> l(w->m);
      return w->done;
    };
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      cv.wait(lock, [&] { return isDone() || (!running && !queue.empty()); });
      if (isDone())
        return;
      std::shared_ptr<Work::State> item = std::move(queue.front());
      queue.pop_front();
      running = true;
      lock.unlock();
      execute(*item);
      lock.lock();
      running = false;
      cv.notify_all();
    }
  }

  ~Group() { shutdown(); }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_all();
    if (worker.joinable())
      worker.join();
  }
};

std::mutex gGroupMutex;
std::unique_ptr<Group> gGroup;
thread_local bool tUnchecked = false;

void help(void *group, Work::State *w) { static_cast<Group *>(group)->help(w); }

[[noreturn]] void fail(const std::string &message, const std::string &hint,
                       const SourceLoc &loc) {
  throw Error(message, hint, loc);
}

Group &group(const char *what, const SourceLoc &loc) {
  std::lock_guard<std::mutex> lock(gGroupMutex);
  if (!gGroup)
    fail(std::string(what) +
             ": Default process group has not been initialized, please "
             "make sure to call init_process_group.",
         "call strata::distributed::init_process_group() first on every "
         "rank",
         loc);
  return *gGroup;
}

int64_t envInt(const char *name, const std::string &what,
               const SourceLoc &loc) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    fail(what + ": environment variable " + name + " expected, but not set",
         "start the ranks with strata-launch (or torchrun), or set RANK, "
         "WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
         loc);
  char *end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (*end != '\0')
    fail(what + ": environment variable " + name +
             " must be an integer, but got '" + v + "'",
         "set it to a decimal number", loc);
  return x;
}

/// gloo's FileStore with the group's timeout on every wait.
class TimedFileStore : public gloo::rendezvous::Store {
public:
  TimedFileStore(const std::string &path, std::chrono::milliseconds timeout)
      : store_(path), timeout_(timeout) {}
  void set(const std::string &key, const std::vector<char> &data) override {
    store_.set(key, data);
  }
  std::vector<char> get(const std::string &key) override {
    return store_.get(key);
  }
  void wait(const std::vector<std::string> &keys) override {
    store_.wait(keys, timeout_);
  }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    store_.wait(keys, timeout);
  }

private:
  gloo::rendezvous::FileStore store_;
  std::chrono::milliseconds timeout_;
};

//===--- Preparing tensors ----------------------------------------------===//

enum OpCode : int64_t {
  kAllReduce = 1,
  kBroadcast = 2,
  kAllGather = 3,
  kReduceScatter = 4,
  kBarrier = 5
};

void checkTensor(const char *what, const Tensor &t, const SourceLoc &loc) {
  if (!t.defined())
    fail(std::string(what) + ": expected a defined tensor, but got an "
                             "undefined one",
         "pass a tensor made by a factory or an op", loc);
  if (t.device(loc).type() != Device::Type::CPU)
    fail(std::string(what) +
             ": the gloo backend takes CPU tensors, but got "
             "a tensor on " +
             t.device(loc).str() +
             "; collectives on CUDA tensors need the nccl backend, which "
             "strata does not implement yet",
         "move the tensor with .to(kCPU) before the collective", loc);
}

/// A raw pointer to `t`'s elements in row-major order: `t`'s own when it
/// is contiguous, else a packed copy kept in `w` (made with the DSL's
/// contiguous(), so it is explained and evaluated like any other copy);
/// `writeBack` then copies the temporary back into `t` when the work is
/// waited for.
void *pointerTo(const Tensor &t, Work::State &w, bool writeBack,
                const SourceLoc &loc) {
  if (t.numel(loc) == 0)
    return nullptr;
  if (t.is_contiguous(loc))
    return t.data_ptr(loc);
  if (debugLevel() >= 1) {
    std::ostringstream os;
    auto list = [&os](const Shape &v) {
      os << "[";
      for (size_t i = 0; i < v.size(); ++i)
        os << (i ? ", " : "") << v[i];
      os << "]";
    };
    os << "[strata] " << w.what << " at " << loc.file_name() << ":"
       << loc.line() << ": a strided view (sizes ";
    list(t.sizes(loc));
    os << ", strides ";
    list(t.strides(loc));
    os << ", offset " << t.storage_offset(loc) << ") is packed into a "
       << "contiguous copy of " << t.numel(loc) * t.element_size(loc)
       << " bytes" << (writeBack ? ", the result copied back" : "") << "\n";
    std::fputs(os.str().c_str(), stderr);
  }
  Tensor packed = t.contiguous(loc);
  void *p = packed.data_ptr(loc);
  w.keep.push_back(packed);
  if (writeBack) {
    Tensor target = t;
    auto previous = std::move(w.finish);
    w.finish = [previous, target, packed, loc]() mutable {
      if (previous)
        previous();
      NoGradGuard noGrad;
      target.copy_(packed, loc);
    };
  }
  return p;
}

Signature signatureOf(OpCode op, const Tensor *t, int64_t reduce, int64_t root,
                      int64_t count, const SourceLoc &loc) {
  Signature s;
  s.op = op;
  s.reduce = reduce;
  s.root = root;
  s.count = count;
  if (t) {
    s.dtype = static_cast<int64_t>(t->dtype(loc));
    s.numel = t->numel(loc);
    s.ndim = t->dim(loc);
    const Shape &sizes = t->sizes(loc);
    for (int64_t d = 0; d < std::min<int64_t>(s.ndim, Signature::kMaxDims); ++d)
      s.sizes[d] = sizes[d];
  }
  return s;
}

/// The all_gather of signatures: throws a strata::Error naming the ranks
/// that differ from rank 0 (on every rank: each sees all records).
void checkSignature(Group &g, const Signature &s, const std::string &what,
                    uint32_t tag) {
  std::vector<int64_t> mine(Signature::kWords), all(Signature::kWords * g.size);
  mine[0] = s.op;
  mine[1] = s.dtype;
  mine[2] = s.reduce;
  mine[3] = s.root;
  mine[4] = s.count;
  mine[5] = s.numel;
  mine[6] = s.ndim;
  std::copy_n(s.sizes, Signature::kMaxDims, mine.begin() + 7);
  gloo::AllgatherOptions opts(g.context);
  opts.setInput(mine.data(), mine.size());
  opts.setOutput(all.data(), all.size());
  opts.setTag(tag);
  gloo::allgather(opts);
  std::ostringstream os;
  const int64_t *first = all.data();
  for (int r = 1; r < g.size; ++r) {
    const int64_t *other = all.data() + r * Signature::kWords;
    if (!std::equal(first, first + Signature::kWords, other)) {
      os << what << ": the ranks disagree: rank 0 called " << describe(first)
         << ", rank " << r << " called " << describe(other);
      throw Error(os.str(),
                  "every rank must call the same collectives in the same "
                  "order with tensors of the same shape and dtype",
                  std::source_location::current());
    }
  }
}

using RawReduce = void (*)(void *, const void *, const void *, size_t);

template <typename T> gloo::AllreduceOptions::Func reduceFn(ReduceOp op) {
  switch (op) {
  case ReduceOp::SUM:
  case ReduceOp::AVG:
    if constexpr (std::is_same_v<T, uint8_t>)
      return static_cast<RawReduce>(&gloo::max<T>); // bool: logical or
    else
      return static_cast<RawReduce>(&gloo::sum<T>);
  case ReduceOp::PRODUCT:
    if constexpr (std::is_same_v<T, uint8_t>)
      return static_cast<RawReduce>(&gloo::min<T>); // bool: logical and
    else
      return static_cast<RawReduce>(&gloo::product<T>);
  case ReduceOp::MIN:
    return static_cast<RawReduce>(&gloo::min<T>);
  case ReduceOp::MAX:
    return static_cast<RawReduce>(&gloo::max<T>);
  }
  return static_cast<RawReduce>(&gloo::sum<T>);
}

/// Calls f.template operator()<T>() with T the C++ type of `t`'s elements
/// (bool as uint8_t: one byte).
template <typename F> void dispatch(DType t, F &&f) {
  switch (t) {
  case DType::F32:
    f.template operator()<float>();
    return;
  case DType::F64:
    f.template operator()<double>();
    return;
  case DType::I32:
    f.template operator()<int32_t>();
    return;
  case DType::I64:
    f.template operator()<int64_t>();
    return;
  case DType::Bool:
    f.template operator()<uint8_t>();
    return;
  }
}

template <typename T> void divideBy(void *p, size_t n, int size) {
  T *x = static_cast<T *>(p);
  for (size_t i = 0; i < n; ++i)
    x[i] /= static_cast<T>(size);
}

/// Queues `w` on the group's worker (after its signature check) and, unless
/// `async`, waits for it.
Work submit(Group &g, std::shared_ptr<Work::State> w, const Signature &sig,
            bool async) {
  uint32_t checkTag = w->checkTag;
  if (checkTag) {
    auto run = std::move(w->run);
    Group *gp = &g;
    std::string what = w->what;
    w->run = [gp, sig, what, checkTag, run]() {
      checkSignature(*gp, sig, what, checkTag);
      run();
    };
  }
  Work work(w);
  {
    std::unique_lock<std::mutex> lock(g.m);
    if (!async && g.queue.empty() && !g.running) {
      // Nothing queued or running: run here, sparing two thread hand-offs
      // (each a scheduler tick on a loaded machine).
      g.running = true;
      lock.unlock();
      g.execute(*w);
      lock.lock();
      g.running = false;
      lock.unlock();
      g.cv.notify_all();
      work.wait(w->loc);
      return work;
    }
    w->group = &g;
    g.queue.push_back(w);
  }
  g.cv.notify_all();
  if (!async)
    work.wait(w->loc);
  return work;
}

uint32_t takeTag(Group &g) {
  std::lock_guard<std::mutex> lock(g.m);
  return g.nextTag++;
}

/// A new work item; its signature check (when on) takes the next tag, so
/// the check's tag comes before the collective's.
std::shared_ptr<Work::State> newState(Group &g, const char *what,
                                      const SourceLoc &loc) {
  auto w = std::make_shared<Work::State>();
  w->what = what;
  w->loc = loc;
  std::lock_guard<std::mutex> lock(g.m);
  if (g.check && g.size > 1 && !tUnchecked)
    w->checkTag = g.nextTag++;
  return w;
}

void checkList(const char *what, const std::vector<Tensor> &list,
               const Tensor &like, int size, const char *listName,
               const SourceLoc &loc) {
  if (static_cast<int>(list.size()) != size)
    fail(std::string(what) + ": " + listName + " must have world size (" +
             std::to_string(size) + ") tensors, but got " +
             std::to_string(list.size()),
         "give one tensor per rank", loc);
  for (size_t k = 0; k < list.size(); ++k) {
    checkTensor(what, list[k], loc);
    if (list[k].sizes(loc) != like.sizes(loc) ||
        list[k].dtype(loc) != like.dtype(loc))
      fail(std::string(what) + ": " + listName + "[" + std::to_string(k) +
               "] must have the shape and dtype of the tensor (" +
               toString(like.dtype(loc)) + "), but got " +
               toString(list[k].dtype(loc)) + " of another shape or dtype",
           "make every tensor of the list like the single tensor", loc);
  }
}

} // namespace

detail::UncheckedGuard::UncheckedGuard() : previous_(tUnchecked) {
  tUnchecked = true;
}

detail::UncheckedGuard::~UncheckedGuard() { tUnchecked = previous_; }

//===--- Initialization
//-----------------------------------------------------===//

void init_process_group(const std::string &backend,
                        const std::string &init_method,
                        std::chrono::milliseconds timeout, int64_t world_size,
                        int64_t rank, SourceLoc loc) {
  const std::string what = "init_process_group";
  if (backend == "nccl") {
    // Loaded at run time, like the CUDA driver: a build without NCCL runs
    // everywhere and says what is missing.
    const char *name = std::getenv("STRATA_NCCL_LIBRARY");
    std::string library = name && *name ? name : "libnccl.so.2";
    void *nccl = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!nccl) {
      const char *why = dlerror();
      fail(what + ": the nccl backend needs " + library +
               ", which could not be loaded (" +
               std::string(why ? why : "not found") + ")",
           "install NCCL (Debian: libnccl2) on a machine with NVIDIA GPUs, "
           "or use backend \"gloo\" with CPU tensors",
           loc);
    }
    dlclose(nccl);
    fail(what + ": the nccl backend is not implemented yet (" + library +
             " was found; strata's collectives run on gloo only)",
         "use backend \"gloo\" with CPU tensors (.to(kCPU))", loc);
  }
  if (backend != "gloo")
    fail(what + ": Invalid backend: '" + backend + "'",
         "use \"gloo\" (CPU tensors)", loc);
  if (timeout.count() <= 0)
    fail(what + ": the timeout must be positive, but got " +
             std::to_string(timeout.count()) + " ms",
         "give a timeout such as std::chrono::seconds(30)", loc);
  {
    std::lock_guard<std::mutex> lock(gGroupMutex);
    if (gGroup)
      fail(what + ": trying to initialize the default process group twice!",
           "call destroy_process_group() first", loc);
  }
  if (world_size < 0)
    world_size = envInt("WORLD_SIZE", what, loc);
  if (rank < 0)
    rank = envInt("RANK", what, loc);
  if (world_size < 1 || rank < 0 || rank >= world_size)
    fail(what + ": the rank must be in [0, world_size), but got rank " +
             std::to_string(rank) + " and world_size " +
             std::to_string(world_size),
         "check RANK and WORLD_SIZE (strata-launch sets them)", loc);

  auto g = std::make_unique<Group>();
  g->rank = static_cast<int>(rank);
  g->size = static_cast<int>(world_size);
  g->timeout = timeout;
  std::string host = "127.0.0.1";
  try {
    if (init_method.rfind("env://", 0) == 0) {
      const char *addr = std::getenv("MASTER_ADDR");
      if (!addr || !*addr)
        fail(what + ": environment variable MASTER_ADDR expected, but not "
                    "set",
             "set MASTER_ADDR and MASTER_PORT (strata-launch sets them)", loc);
      int64_t port = envInt("MASTER_PORT", what, loc);
      if (port <= 0 || port > 65535)
        fail(what + ": MASTER_PORT must be in [1, 65535], but got " +
                 std::to_string(port),
             "give a free TCP port", loc);
      std::string master = addr;
      // Under torchrun its agent serves the store at MASTER_PORT and says
      // so (PyTorch's env:// rendezvous reads the same variable).
      const char *agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
      bool agentStore = agent && std::string(agent) == "True";
      if (master != "127.0.0.1" && master != "localhost") {
        char name[256] = {};
        gethostname(name, sizeof name - 1);
        host = name;
      }
      try {
        g->store =
            detail::makeTcpStore(master, static_cast<uint16_t>(port),
                                 rank == 0 && !agentStore, g->size, timeout);
      } catch (const std::exception &e) {
        std::string m = e.what();
        m = m.substr(0, m.find('\n'));
        fail(what + ": rank " + std::to_string(rank) +
                 " could not reach the master's store at " + master + ":" +
                 std::to_string(port) + " within " +
                 std::to_string(timeout.count()) + " ms [c10d: " + m + "]",
             "check MASTER_ADDR and MASTER_PORT, and that rank 0 is "
             "running (it hosts the store)",
             loc);
      }
    } else if (init_method.rfind("file://", 0) == 0) {
      g->store =
          std::make_unique<TimedFileStore>(init_method.substr(7), timeout);
    } else {
      fail(what + ": unsupported init_method '" + init_method +
               "' (expected env:// or file:///DIR)",
           "use \"env://\" with strata-launch, or \"file:///DIR\" with a "
           "directory every rank sees",
           loc);
    }
    if (const char *h = std::getenv("STRATA_GLOO_HOSTNAME"))
      host = h;
    gloo::transport::tcp::attr attr;
    attr.hostname = host;
    if (const char *iface = std::getenv("GLOO_SOCKET_IFNAME")) {
      attr.hostname.clear();
      attr.iface = iface;
    }
    g->device = gloo::transport::tcp::CreateDevice(attr);
    g->context = std::make_shared<gloo::rendezvous::Context>(g->rank, g->size);
    g->context->setTimeout(timeout);
    g->context->connectFullMesh(*g->store, g->device);
    // Every rank has read the store once all are here: rank 0, which
    // serves it, may then exit whenever its program ends.
    gloo::BarrierOptions barrier(g->context);
    barrier.setTag(0);
    gloo::barrier(barrier);
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    std::string m = e.what();
    bool timedOut = m.find("imed out") != std::string::npos ||
                    m.find("imeout") != std::string::npos;
    fail(what + ": rank " + std::to_string(rank) + " of " +
             std::to_string(world_size) +
             (timedOut ? " timed out after " + std::to_string(timeout.count()) +
                             " ms waiting for the other ranks to join"
                       : " could not connect to the other ranks") +
             " [" + m.substr(0, m.find('\n')) + "]",
         "start WORLD_SIZE processes with ranks 0..WORLD_SIZE-1 (strata-"
         "launch --nproc-per-node N), all with the same MASTER_ADDR and "
         "MASTER_PORT (or file:// directory)",
         loc);
  }
  Group *gp = g.get();
  g->worker = std::thread([gp] { gp->loop(); });
  std::lock_guard<std::mutex> lock(gGroupMutex);
  gGroup = std::move(g);
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(gGroupMutex);
  return gGroup != nullptr;
}

void destroy_process_group(SourceLoc loc) {
  std::unique_ptr<Group> g;
  {
    std::lock_guard<std::mutex> lock(gGroupMutex);
    if (!gGroup)
      fail("destroy_process_group: Default process group has not been "
           "initialized, please make sure to call init_process_group.",
           "call init_process_group() first", loc);
    g = std::move(gGroup);
  }
  g->shutdown();
}

int64_t get_rank(SourceLoc loc) { return group("get_rank", loc).rank; }

int64_t get_world_size(SourceLoc loc) {
  return group("get_world_size", loc).size;
}

std::string get_backend(SourceLoc loc) {
  group("get_backend", loc);
  return "gloo";
}

void set_consistency_check(bool enabled) {
  std::lock_guard<std::mutex> lock(gGroupMutex);
  if (gGroup) {
    std::lock_guard<std::mutex> l(gGroup->m);
    gGroup->check = enabled;
  }
}

bool consistency_check() {
  std::lock_guard<std::mutex> lock(gGroupMutex);
  return gGroup ? gGroup->check : checkFromEnvironment();
}

//===--- Collectives ------------------------------------------------------===//

Work all_reduce(const Tensor &tensor, ReduceOp op, bool async_op,
                SourceLoc loc) {
  const char *what = "all_reduce";
  Group &g = group(what, loc);
  checkTensor(what, tensor, loc);
  DType dt = tensor.dtype(loc);
  if (op == ReduceOp::AVG && !isFloatingPoint(dt))
    fail(std::string(what) +
             ": ReduceOp.AVG needs a floating-point tensor, "
             "but got " +
             toString(dt),
         "use ReduceOp::SUM and divide, or convert with .to(kFloat32)", loc);
  auto w = newState(g, what, loc);
  void *p = pointerTo(tensor, *w, /*writeBack=*/true, loc);
  size_t n = static_cast<size_t>(tensor.numel(loc));
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  w->run = [gp, p, n, dt, op, tag]() {
    if (n == 0 || gp->size == 1)
      return;
    dispatch(dt, [&]<typename T>() {
      gloo::AllreduceOptions opts(gp->context);
      opts.setOutput(static_cast<T *>(p), n);
      opts.setReduceFunction(reduceFn<T>(op));
      opts.setTag(tag);
      gloo::allreduce(opts);
      if (op == ReduceOp::AVG) {
        if constexpr (std::is_floating_point_v<T>)
          divideBy<T>(p, n, gp->size);
      }
    });
  };
  return submit(
      g, w,
      signatureOf(kAllReduce, &tensor, static_cast<int64_t>(op), -1, 1, loc),
      async_op);
}

Work broadcast(const Tensor &tensor, int64_t src, bool async_op,
               SourceLoc loc) {
  const char *what = "broadcast";
  Group &g = group(what, loc);
  checkTensor(what, tensor, loc);
  if (src < 0 || src >= g.size)
    fail(std::string(what) + ": src must be a rank in [0, " +
             std::to_string(g.size) + "), but got " + std::to_string(src),
         "give the rank whose tensor is sent", loc);
  auto w = newState(g, what, loc);
  void *p = pointerTo(tensor, *w, /*writeBack=*/true, loc);
  size_t bytes =
      static_cast<size_t>(tensor.numel(loc) * tensor.element_size(loc));
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  int root = static_cast<int>(src);
  w->run = [gp, p, bytes, root, tag]() {
    if (bytes == 0 || gp->size == 1)
      return;
    gloo::BroadcastOptions opts(gp->context);
    // The root sends its output buffer (an input that is the same memory
    // would be memcpy'd onto itself while being sent).
    opts.setOutput(static_cast<uint8_t *>(p), bytes);
    opts.setRoot(root);
    opts.setTag(tag);
    gloo::broadcast(opts);
  };
  return submit(g, w, signatureOf(kBroadcast, &tensor, -1, src, 1, loc),
                async_op);
}

Work all_gather(const std::vector<Tensor> &tensor_list, const Tensor &tensor,
                bool async_op, SourceLoc loc) {
  const char *what = "all_gather";
  Group &g = group(what, loc);
  checkTensor(what, tensor, loc);
  checkList(what, tensor_list, tensor, g.size, "tensor_list", loc);
  auto w = newState(g, what, loc);
  size_t bytes =
      static_cast<size_t>(tensor.numel(loc) * tensor.element_size(loc));
  void *in = pointerTo(tensor, *w, /*writeBack=*/false, loc);
  // One contiguous output for gloo, then a copy into each list entry (the
  // entries are separate tensors).
  Tensor out = empty(Shape{static_cast<int64_t>(g.size) * tensor.numel(loc)},
                     dtype(tensor.dtype(loc)), loc);
  void *o = pointerTo(out, *w, false, loc);
  w->keep.push_back(out);
  std::vector<Tensor> list = tensor_list;
  Shape shape = tensor.sizes(loc);
  int64_t numel = tensor.numel(loc);
  w->finish = [list, out, shape, numel, loc]() {
    NoGradGuard noGrad;
    for (size_t k = 0; k < list.size(); ++k)
      Tensor(list[k]).copy_(
          out.narrow(0, static_cast<int64_t>(k) * numel, numel, loc)
              .view(shape, loc),
          loc);
  };
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  w->run = [gp, in, o, bytes, tag]() {
    if (bytes == 0)
      return;
    if (gp->size == 1) {
      std::memcpy(o, in, bytes);
      return;
    }
    gloo::AllgatherOptions opts(gp->context);
    opts.setInput(static_cast<uint8_t *>(in), bytes);
    opts.setOutput(static_cast<uint8_t *>(o), bytes * gp->size);
    opts.setTag(tag);
    gloo::allgather(opts);
  };
  return submit(g, w,
                signatureOf(kAllGather, &tensor, -1, -1,
                            static_cast<int64_t>(tensor_list.size()), loc),
                async_op);
}

Work all_gather_into_tensor(const Tensor &output, const Tensor &input,
                            bool async_op, SourceLoc loc) {
  const char *what = "all_gather_into_tensor";
  Group &g = group(what, loc);
  checkTensor(what, input, loc);
  checkTensor(what, output, loc);
  if (output.dtype(loc) != input.dtype(loc) ||
      output.numel(loc) != g.size * input.numel(loc) || output.dim(loc) < 1 ||
      output.size(0, loc) != g.size * (input.dim(loc) ? input.size(0, loc) : 1))
    fail(std::string(what) +
             ": output tensor size must be equal to world_size times input "
             "tensor size, with the input's dtype (" +
             toString(input.dtype(loc)) + ")",
         "make output's first dim world_size times input's", loc);
  auto w = newState(g, what, loc);
  size_t bytes =
      static_cast<size_t>(input.numel(loc) * input.element_size(loc));
  void *in = pointerTo(input, *w, false, loc);
  void *o = pointerTo(output, *w, true, loc);
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  w->run = [gp, in, o, bytes, tag]() {
    if (bytes == 0)
      return;
    if (gp->size == 1) {
      std::memmove(o, in, bytes);
      return;
    }
    gloo::AllgatherOptions opts(gp->context);
    opts.setInput(static_cast<uint8_t *>(in), bytes);
    opts.setOutput(static_cast<uint8_t *>(o), bytes * gp->size);
    opts.setTag(tag);
    gloo::allgather(opts);
  };
  return submit(g, w, signatureOf(kAllGather, &input, -1, -1, 0, loc),
                async_op);
}

Work reduce_scatter(const Tensor &output, const std::vector<Tensor> &input_list,
                    ReduceOp op, bool async_op, SourceLoc loc) {
  const char *what = "reduce_scatter";
  Group &g = group(what, loc);
  checkTensor(what, output, loc);
  checkList(what, input_list, output, g.size, "input_list", loc);
  DType dt = output.dtype(loc);
  if (op == ReduceOp::AVG && !isFloatingPoint(dt))
    fail(std::string(what) +
             ": ReduceOp.AVG needs a floating-point tensor, "
             "but got " +
             toString(dt),
         "use ReduceOp::SUM and divide, or convert with .to(kFloat32)", loc);
  auto w = newState(g, what, loc);
  int64_t numel = output.numel(loc);
  // The inputs side by side in one buffer (cat of the flattened list, a
  // recorded copy), all-reduced by gloo; rank r keeps the part at r * numel.
  // (As PyTorch's gloo backend: gloo's ReduceScatterHalvingDoubling left
  // wrong parts on 3 and 4 ranks here; an allreduce moves (N-1)/N more
  // bytes than a ring reduce-scatter would.)
  std::vector<Tensor> flat;
  for (const Tensor &t : input_list)
    flat.push_back(t.reshape({numel}, loc));
  Tensor buffer = cat(flat, 0, loc);
  void *b = pointerTo(buffer, *w, false, loc);
  w->keep.push_back(buffer);
  int rank = g.rank;
  w->finish = [output, buffer, numel, rank, loc]() {
    NoGradGuard noGrad;
    Tensor(output).copy_(
        buffer.narrow(0, rank * numel, numel, loc).view(output.sizes(loc), loc),
        loc);
  };
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  size_t total = static_cast<size_t>(numel) * static_cast<size_t>(g.size);
  w->run = [gp, b, total, numel, dt, op, tag]() {
    if (numel == 0 || gp->size == 1)
      return;
    dispatch(dt, [&]<typename T>() {
      gloo::AllreduceOptions opts(gp->context);
      opts.setOutput(static_cast<T *>(b), total);
      opts.setReduceFunction(reduceFn<T>(op));
      opts.setTag(tag);
      gloo::allreduce(opts);
      if (op == ReduceOp::AVG) {
        if constexpr (std::is_floating_point_v<T>)
          divideBy<T>(static_cast<T *>(b) + gp->rank * numel,
                      static_cast<size_t>(numel), gp->size);
      }
    });
  };
  return submit(g, w,
                signatureOf(kReduceScatter, &output, static_cast<int64_t>(op),
                            -1, static_cast<int64_t>(input_list.size()), loc),
                async_op);
}

Work barrier(bool async_op, SourceLoc loc) {
  const char *what = "barrier";
  Group &g = group(what, loc);
  auto w = newState(g, what, loc);
  uint32_t tag = takeTag(g);
  Group *gp = &g;
  w->run = [gp, tag]() {
    if (gp->size == 1)
      return;
    gloo::BarrierOptions opts(gp->context);
    opts.setTag(tag);
    gloo::barrier(opts);
  };
  return submit(g, w, signatureOf(kBarrier, nullptr, -1, -1, 0, loc), async_op);
}

} // namespace distributed
} // namespace strata
