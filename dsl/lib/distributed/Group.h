//===- Group.h - the default process group's state (internal) -*- C++ -*-===//
//
// One process group per process (PyTorch's default group) over a gloo TCP
// context. Collectives run in call order: an async one is queued for the
// group's worker thread (as ProcessGroupGloo's); a synchronous one with
// nothing queued or running runs on its caller's thread, and a thread
// waiting for its work runs queued work itself when the worker is idle
// (each thread hand-off cost a scheduler tick on a loaded machine). A
// failure of gloo or NCCL (a peer closed its connection, a timeout) breaks
// the group: every later call says why. With backend "nccl", CUDA
// tensors' collectives run on NCCL (Nccl.h) inside the same work items.
// Internal to strata_distributed (ProcessGroup.cpp: joining and leaving;
// Collectives.cpp: the collectives).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_GROUP_H
#define STRATA_DISTRIBUTED_GROUP_H

#include "StoreAdapter.h"
#include "strata/distributed.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace strata {
namespace distributed {

namespace detail {
/// Runs queued work of `group` (a Group) on this thread until `w` is done,
/// when the worker is not already running some (see Group::help).
void help(void *group, Work::State *w);
/// Waits for `w` (helping the queue) and, if it succeeded, runs its
/// copy-backs once, on this thread.
void copyBack(Work::State &w);
} // namespace detail

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
  /// The tag of the eager signature check of a CUDA tensor's collective
  /// (0: none).
  uint32_t checkTag = 0;
  /// The collective's number in call order and its signature's words
  /// (empty: unchecked): after a gloo timeout the ranks compare them
  /// through the store (disagreement()).
  uint32_t seq = 0;
  std::vector<int64_t> signature;
  /// Whether the consistency check was on for this call (its tag a hash).
  bool checked = false;
  /// Temporaries the raw pointers point into.
  std::vector<Tensor> keep;

  std::mutex m;
  std::condition_variable cv;
  /// done: the collective ran; copied: its copy-backs ran; finished:
  /// wait() returned or threw once.
  bool done = false, copied = false, finished = false;
  std::string error, hint;
};

namespace detail {

/// What a rank says about a collective before running it; every rank's
/// record must equal rank 0's (the device too: a CPU tensor's collective
/// runs on gloo, a CUDA tensor's on NCCL).
struct Signature {
  static constexpr int kMaxDims = 8;
  int64_t op = 0, dtype = -1, reduce = -1, root = -1, count = 0, numel = 0,
          ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t cuda = 0;
  static constexpr size_t kWords = 8 + kMaxDims;
};

/// The NCCL communicator of a group made with backend "nccl" (Nccl.h).
struct NcclComm;
struct Group;
/// What the ranks said through the store after `w`'s gloo collective
/// failed (timed out, or a peer that timed out closed its connection).
struct Comparison {
  /// The sentence naming the first disagreement (calls, or the
  /// consistency check set differently), or "".
  std::string differs;
  /// The ranks that wrote no signature within the bound: they never
  /// reached the call, or left.
  std::vector<int> missing;
};
/// Each rank writes its signature of call `w.seq` (and whether its check
/// was on), then reads the others' as they come, for at most `bound`.
Comparison disagreement(Group &g, const Work::State &w,
                        std::chrono::milliseconds bound);
/// The error and hint of `w`, whose gloo collective threw `glooMessage`:
/// the signatures are compared through the store first (the peers' awaited
/// at most 10 s: the error comes within the timeout + 10 s), so it names
/// a disagreement, or the ranks that never reached the call.
std::pair<std::string, std::string>
explainFailure(Group &g, const Work::State &w, const std::string &glooMessage);

/// "all_reduce of a tensor of shape [3] and dtype torch.float32, op sum"
/// from a signature's words.
std::string describe(const int64_t *w);
/// False when STRATA_DISTRIBUTED_CHECK=0.
bool checkFromEnvironment();

/// The default group: its gloo context, its store and its work queue.
struct Group {
  int rank = 0, size = 1;
  std::chrono::milliseconds timeout{};
  std::unique_ptr<Store> store;
  /// "the file:// directory /d" or "the store at 127.0.0.1:29500", for
  /// messages; fileStore: the former.
  std::string storeName;
  bool fileStore = false;
  /// The prefix of this run's keys after the rendezvous ("strata/<run id>/",
  /// rank 0's): an earlier run's keys in a file:// directory never meet
  /// this run's.
  std::string keyPrefix = "strata/";
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  /// "gloo", or "nccl": then `nccl` runs the collectives on CUDA tensors
  /// and gloo the rest (rendezvous, checks, barrier, CPU tensors).
  std::string backend = "gloo";
  std::shared_ptr<NcclComm> nccl;
  uint32_t nextTag = 1;
  bool check = checkFromEnvironment();

  std::mutex m;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Work::State>> queue;
  /// Async work with copy-backs (strided views, all_gather's list), in call
  /// order: the next collective runs them first, so it sees their results
  /// as PyTorch's eager order would.
  std::deque<std::weak_ptr<Work::State>> copyBacks;
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
          std::tie(error, hint) = explainFailure(*this, *w, e.what());
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

  ~Group() {
    shutdown();
    nccl.reset(); // before the gloo context its rendezvous came from
  }

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

/// The default group (guarded by gGroupMutex) and whether this thread's
/// collectives skip the signature check (UncheckedGuard).
extern std::mutex gGroupMutex;
extern std::unique_ptr<Group> gGroup;
extern thread_local bool tUnchecked;

/// Throws strata::Error(message, hint, loc).
[[noreturn]] void fail(const std::string &message, const std::string &hint,
                       const SourceLoc &loc);
/// The default group; D01 when there is none.
Group &group(const char *what, const SourceLoc &loc);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_GROUP_H
