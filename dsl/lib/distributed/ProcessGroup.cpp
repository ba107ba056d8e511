//===- ProcessGroup.cpp - joining and leaving the default process group ---===//
//
// init_process_group: the rendezvous through c10d::TCPStore (env://, rank 0
// serving it unless torchrun's agent does) or gloo's FileStore (file://),
// the ranks' records compared (Rendezvous.h), gloo's TCP device and
// full-mesh context, a barrier (so rank 0, which serves the store, may exit
// once its program ends; each rank then removes its keys from a file://
// directory) and the worker thread;
// with backend "nccl", its NCCL communicator (Nccl.h); every failure on
// the way is a located strata::Error. Also Work's methods
// and the group's shared helpers (Group.h).
//
//===----------------------------------------------------------------------===//
#include "Group.h"
#include "Nccl.h"
#include "Rendezvous.h"
#include "StoreAdapter.h"
#include "Unchecked.h"

#include "strata/Runtime/Settings.h"
#include "strata/strata.h"

#include <gloo/barrier.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace strata {
namespace distributed {

using namespace detail;

//===--- Work -------------------------------------------------------------===//

Work::Work() : state_(std::make_shared<State>()) {
  state_->done = state_->finished = true;
}

Work::Work(std::shared_ptr<State> state) : state_(std::move(state)) {}

void detail::copyBack(Work::State &w) {
  void *group;
  {
    std::lock_guard<std::mutex> lock(w.m);
    group = w.done ? nullptr : w.group;
  }
  if (group)
    detail::help(group, &w);
  std::unique_lock<std::mutex> lock(w.m);
  w.cv.wait(lock, [&] { return w.done; });
  if (w.copied || !w.error.empty())
    return;
  w.copied = true;
  std::function<void()> finish = std::move(w.finish);
  w.finish = nullptr;
  lock.unlock();
  if (finish)
    finish();
  std::lock_guard<std::mutex> relock(w.m);
  w.keep.clear();
}

void Work::wait(SourceLoc loc) {
  (void)loc; // errors point at the collective's call, not at wait()
  detail::copyBack(*state_);
  std::unique_lock<std::mutex> lock(state_->m);
  if (state_->finished)
    return;
  state_->finished = true;
  std::string error = state_->error;
  if (!error.empty()) {
    state_->keep.clear();
    lock.unlock();
    throw Error(error, state_->hint, state_->loc);
  }
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

//===--- Shared helpers (Group.h)
//-------------------------------------------===//

namespace detail {

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
     << (w[1] >= 0 ? toString(static_cast<DType>(w[1])) : "none")
     << (w[7 + Signature::kMaxDims] ? " on cuda:0" : "");
  if (w[2] >= 0)
    os << ", op " << toString(static_cast<ReduceOp>(w[2]));
  if (w[3] >= 0)
    os << ", src " << w[3];
  if (w[0] == 3 || w[0] == 4)
    os << ", a list of " << w[4] << " tensors";
  return os.str();
}

bool checkFromEnvironment() { return runtime::settings::distributedCheck(); }

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

} // namespace detail

namespace {

// torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// TORCHELASTIC_USE_AGENT_STORE) and gloo's GLOO_SOCKET_IFNAME are other
// programs' settings, read here with getenv (not through runtime::settings,
// which reads strata's own) because their checks (D04, D05) are this file's;
// docs/environment.md lists them, scripts/check_environment_doc.py holds it
// to every getenv here.

/// The integer value `v` of torchrun's variable `name`.
int64_t envInt(const char *name, const char *v, const std::string &what,
               const SourceLoc &loc) {
  if (!v || !*v)
    fail(what + ": environment variable " + name + " expected, but not set",
         "start the ranks with strata-launch (or torchrun), or set RANK, "
         "WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
         loc);
  char *end = nullptr;
  errno = 0;
  long long x = std::strtoll(v, &end, 10);
  if (*end != '\0')
    fail(what + ": environment variable " + name +
             " must be an integer, but got '" + v + "'",
         "set it to a decimal number", loc);
  // More ranks than this could not connect anyway; larger values (and
  // overflow, which strtoll clamps) would wrap in gloo's int ranks.
  if (errno == ERANGE || x < 0 || x > (1 << 20))
    fail(what + ": environment variable " + name +
             " must be in [0, 1048576], but got '" + v + "'",
         "set it to a rank (RANK) or a number of processes (WORLD_SIZE)", loc);
  return x;
}

} // namespace

detail::UncheckedGuard::UncheckedGuard() : previous_(tUnchecked) {
  tUnchecked = true;
}

detail::UncheckedGuard::~UncheckedGuard() { tUnchecked = previous_; }

//===--- Initialization
//-----------------------------------------------------===//

void init_process_group(const std::string &backendName,
                        const std::string &init_method,
                        std::chrono::milliseconds timeout, int64_t world_size,
                        int64_t rank, SourceLoc loc) {
  const std::string what = "init_process_group";
  // PyTorch's Backend lower-cases the name ("NCCL" is "nccl").
  std::string backend = backendName;
  for (char &c : backend)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::shared_ptr<NcclComm> nccl;
  if (backend == "nccl") // NCCL and the CUDA driver, or what is missing
    nccl = loadNccl(what, loc);
  else if (backend != "gloo")
    fail(what + ": Invalid backend: '" + backend + "'",
         "use \"gloo\" (CPU tensors) or \"nccl\" (CUDA tensors, and CPU "
         "tensors through gloo)",
         loc);
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
  RendezvousSources sources;
  sources.worldSize = world_size < 0 ? "WORLD_SIZE" : "argument";
  if (world_size < 0)
    world_size = envInt("WORLD_SIZE", std::getenv("WORLD_SIZE"), what, loc);
  if (rank < 0)
    rank = envInt("RANK", std::getenv("RANK"), what, loc);
  if (world_size < 1 || world_size > (1 << 20) || rank < 0 ||
      rank >= world_size)
    fail(what + ": the rank must be in [0, world_size), but got rank " +
             std::to_string(rank) + " and world_size " +
             std::to_string(world_size),
         "check RANK and WORLD_SIZE (strata-launch sets them)", loc);

  auto g = std::make_unique<Group>();
  g->rank = static_cast<int>(rank);
  g->size = static_cast<int>(world_size);
  g->timeout = timeout;
  g->backend = backend;
  g->nccl = std::move(nccl);
  std::string host = "127.0.0.1";
  try {
    if (init_method.rfind("env://", 0) == 0) {
      const char *addr = std::getenv("MASTER_ADDR");
      if (!addr || !*addr)
        fail(what + ": environment variable MASTER_ADDR expected, but not "
                    "set",
             "set MASTER_ADDR and MASTER_PORT (strata-launch sets them)", loc);
      int64_t port =
          envInt("MASTER_PORT", std::getenv("MASTER_PORT"), what, loc);
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
      sources.serving = rank == 0 && !agentStore;
      g->storeName = "the store at " + master + ":" + std::to_string(port);
      try {
        g->store = detail::makeTcpStore(master, static_cast<uint16_t>(port),
                                        rank == 0 && !agentStore, g->size,
                                        timeout, what, loc);
      } catch (const Error &) {
        throw; // a build without libtorch (NoTcpStore.cpp)
      } catch (const std::exception &e) {
        std::string m = e.what();
        m = m.substr(0, m.find('\n'));
        bool serving = rank == 0 && !agentStore;
        if (serving && (m.find("EADDRINUSE") != std::string::npos ||
                        m.find("ddress already in use") != std::string::npos))
          fail(what + ": rank 0 could not serve the store at " + master + ":" +
                   std::to_string(port) +
                   ": the port is in use by another process [c10d: " + m + "]",
               "choose a free MASTER_PORT (strata-launch picks one when "
               "--master-port is 0, the default), or end the process "
               "holding it",
               loc);
        fail(what + ": rank " + std::to_string(rank) +
                 " could not reach the master's store at " + master + ":" +
                 std::to_string(port) + " within " +
                 std::to_string(timeout.count()) + " ms [c10d: " + m + "]",
             "check MASTER_ADDR and MASTER_PORT, and that rank 0 is "
             "running (it hosts the store)",
             loc);
      }
    } else if (init_method.rfind("file://", 0) == 0) {
      std::string dir = init_method.substr(7);
      struct stat st {};
      if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        fail(what + ": init_method '" + init_method + "' names no directory" +
                 (dir.empty() ? std::string(" (the path is empty)")
                              : " ('" + dir + "' " +
                                    (::stat(dir.c_str(), &st) != 0
                                         ? "does not exist"
                                         : "is not a directory") +
                                    ")"),
             "give file:///DIR with an existing directory every rank sees "
             "(empty, or left by a finished run)",
             loc);
      g->store = detail::makeFileStore(dir, timeout);
      g->storeName = "the file:// directory " + dir;
      g->fileStore = true;
    } else {
      fail(what + ": unsupported init_method '" + init_method +
               "' (expected env:// or file:///DIR)",
           "use \"env://\" with strata-launch, or \"file:///DIR\" with a "
           "directory every rank sees",
           loc);
    }
    if (auto h = runtime::settings::glooHostname())
      host = *h;
    gloo::transport::tcp::attr attr;
    attr.hostname = host;
    if (const char *iface = std::getenv("GLOO_SOCKET_IFNAME")) {
      attr.hostname.clear();
      attr.iface = iface;
    }
    // The ranks agree on the world size, the check and the backend before
    // gloo connects (gloo would fail on the address sizes, or the calls
    // would never meet), and the missing ones are named.
    exchangeRecords(*g, sources, what, loc);
    g->device = gloo::transport::tcp::CreateDevice(attr);
    g->context = std::make_shared<gloo::rendezvous::Context>(g->rank, g->size);
    g->context->setTimeout(timeout);
    g->context->connectFullMesh(*g->store, g->device);
    // Every rank has read the store once all are here: rank 0, which
    // serves it, may then exit whenever its program ends.
    gloo::BarrierOptions barrier(g->context);
    barrier.setTag(0);
    gloo::barrier(barrier);
    if (g->nccl)
      connectNccl(*g, what, loc);
    // Every rank has read what this one wrote: a file:// directory is left
    // empty for the next run.
    forgetRendezvous(*g);
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
  return group("get_backend", loc).backend;
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

} // namespace distributed
} // namespace strata
