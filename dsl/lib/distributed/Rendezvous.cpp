//===- Rendezvous.cpp - what the ranks agree on before gloo connects ------===//
//
// Each rank writes "strata/init/<rank>": a line of its world size (and its
// source), consistency check, backend, a random run id, its pid and host.
// It then polls the store for every other rank's record (10 ms apart at
// most), compares each with its own as soon as it is there and throws on
// the first difference; at the group's timeout it names the ranks whose
// records never came. A record of this rank already in the store means
// an earlier run's files (file://) or a second process with the same RANK;
// a record whose writer on this host no longer runs, an earlier run's.
// See Rendezvous.h.
//
//===----------------------------------------------------------------------===//
#include "Rendezvous.h"

#include "strata/strata.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace strata {
namespace distributed {
namespace detail {

namespace {

using Clock = std::chrono::steady_clock;

/// One rank's record.
struct Record {
  int64_t worldSize = 0;
  std::string worldSizeFrom; // "WORLD_SIZE" or "argument"
  int check = 1;
  std::string backend, run, host;
  int64_t pid = 0;

  std::string text() const {
    std::ostringstream os;
    os << "strata-rendezvous-1 " << worldSize << ' ' << worldSizeFrom << ' '
       << check << ' ' << backend << ' ' << run << ' ' << pid << ' ' << host;
    return os.str();
  }

  static bool parse(const std::vector<char> &bytes, Record &r) {
    std::istringstream is(std::string(bytes.begin(), bytes.end()));
    std::string magic;
    is >> magic >> r.worldSize >> r.worldSizeFrom >> r.check >> r.backend >>
        r.run >> r.pid >> r.host;
    return magic == "strata-rendezvous-1" && !is.fail();
  }

  std::string worldSizeSource() const {
    return worldSizeFrom == "WORLD_SIZE"
               ? "WORLD_SIZE=" + std::to_string(worldSize)
               : "the world_size argument";
  }
};

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string h = name;
  std::replace(h.begin(), h.end(), ' ', '_');
  return h.empty() ? "?" : h;
}

std::string initKey(int rank) { return "strata/init/" + std::to_string(rank); }
std::string doneKey(int rank) {
  return "strata/init/done/" + std::to_string(rank);
}

/// Whether process `pid` runs on this host (false only when it surely
/// does not).
bool running(int64_t pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

/// The first difference between this rank's record and rank `r`'s, as the
/// sentence and its hint; "" when they agree.
std::pair<std::string, std::string>
difference(const Group &g, const Record &mine, int r, const Record &theirs) {
  std::string me = "rank " + std::to_string(g.rank),
              them = "rank " + std::to_string(r);
  if (theirs.worldSize != mine.worldSize)
    return {"every rank must have the same world size, but " + me + " has " +
                std::to_string(mine.worldSize) + " (" + mine.worldSizeSource() +
                ") and " + them + " has " + std::to_string(theirs.worldSize) +
                " (" + theirs.worldSizeSource() + ")",
            "give every rank the same WORLD_SIZE (strata-launch and torchrun "
            "set it alike for all the ranks they start), or the same "
            "world_size argument"};
  if (theirs.check != mine.check) {
    auto setting = [](int on) {
      return on ? std::string("on (the default)")
                : std::string("off (STRATA_DISTRIBUTED_CHECK=0)");
    };
    return {"every rank must have the consistency check set alike, but " + me +
                " has it " + setting(mine.check) + " and " + them + " has it " +
                setting(theirs.check),
            "set STRATA_DISTRIBUTED_CHECK the same way in every rank's "
            "environment, or in none (ranks whose calls are tagged "
            "differently never meet); call set_consistency_check() alike "
            "on every rank too"};
  }
  if (theirs.backend != mine.backend)
    return {"every rank must use the same backend, but " + me + " uses \"" +
                mine.backend + "\" and " + them + " uses \"" + theirs.backend +
                "\"",
            "pass the same backend to init_process_group on every rank"};
  return {"", ""};
}

} // namespace

std::string rankList(const std::vector<int> &ranks) {
  std::ostringstream os;
  os << (ranks.size() == 1 ? "rank " : "ranks ");
  size_t shown = std::min<size_t>(ranks.size(), 8);
  for (size_t i = 0; i < shown; ++i) {
    if (i)
      os << (i + 1 == ranks.size() ? " and " : ", ");
    os << ranks[i];
  }
  if (shown < ranks.size())
    os << " and " << ranks.size() - shown << " more";
  return os.str();
}

void exchangeRecords(Group &g, const RendezvousSources &sources,
                     const std::string &what, const SourceLoc &loc) {
  Record mine;
  mine.worldSize = g.size;
  mine.worldSizeFrom =
      sources.worldSize == "WORLD_SIZE" ? "WORLD_SIZE" : "argument";
  mine.check = g.check ? 1 : 0;
  mine.backend = g.backend;
  mine.pid = ::getpid();
  mine.host = hostName();
  std::random_device entropy;
  std::ostringstream run;
  run << std::hex << entropy() << entropy();
  mine.run = run.str();

  const std::string rankName = "rank " + std::to_string(g.rank);
  const std::string fresh =
      g.fileStore
          ? "give every run a fresh or empty directory, or delete the files "
            "in " +
                g.storeName.substr(g.storeName.rfind(' ') + 1) +
                " first (strata removes its own once every rank has joined: "
                "only an interrupted run leaves them)"
          : "give every process its own RANK in [0, WORLD_SIZE) "
            "(strata-launch does)";
  // An earlier record of this rank: an earlier run's, or a second process
  // with this RANK.
  auto earlier = [&](const std::vector<char> &bytes) {
    Record old;
    std::string who = "an unreadable record";
    if (Record::parse(bytes, old)) {
      who = "written by process " + std::to_string(old.pid) + " on " + old.host;
      if (old.host == mine.host && old.pid == mine.pid)
        who += ", this process: an earlier init_process_group that failed";
      else if (old.host == mine.host && !running(old.pid))
        who += ", no longer running: an earlier run's";
      else if (old.host == mine.host)
        who += ", still running: a second process with RANK=" +
               std::to_string(g.rank) + "?";
    }
    fail(what + ": " + rankName + "'s rendezvous record is already in " +
             g.storeName + " (" + who + ")",
         fresh, loc);
  };
  try {
    if (g.store->check({initKey(g.rank)}))
      earlier(g.store->get(initKey(g.rank)));
    std::string text = mine.text();
    try {
      g.store->set(initKey(g.rank),
                   std::vector<char>(text.begin(), text.end()));
    } catch (const std::exception &) {
      earlier(g.store->get(initKey(g.rank))); // set between check and set
    }
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    std::string m = e.what();
    fail(what + ": " + rankName + " could not write to " + g.storeName + " [" +
             m.substr(0, m.find('\n')) + "]",
         "check that the store is reachable and writable by every rank", loc);
  }

  // Every other rank's record, compared as it comes.
  std::vector<int> pending, seen;
  for (int r = 0; r < g.size; ++r)
    if (r != g.rank)
      pending.push_back(r);
  const Clock::time_point start = Clock::now(), deadline = start + g.timeout;
  std::chrono::milliseconds pause(1);
  std::string error, hint;
  try {
    while (!pending.empty() && error.empty()) {
      for (auto it = pending.begin(); it != pending.end() && error.empty();) {
        if (!g.store->check({initKey(*it)})) {
          ++it;
          continue;
        }
        Record theirs;
        if (!Record::parse(g.store->get(initKey(*it)), theirs)) {
          error = "rank " + std::to_string(*it) + "'s rendezvous record in " +
                  g.storeName + " is not one of this strata version's";
          hint = "run the same program (one strata version) on every rank, "
                 "and " +
                 fresh;
          break;
        }
        if (*it == 0)
          g.keyPrefix = "strata/" + theirs.run + "/";
        std::tie(error, hint) = difference(g, mine, *it, theirs);
        if (error.empty() && theirs.host == mine.host && g.fileStore &&
            !running(theirs.pid)) {
          error = "rank " + std::to_string(*it) + "'s rendezvous record in " +
                  g.storeName + " was written by process " +
                  std::to_string(theirs.pid) +
                  " on this host, which is no "
                  "longer running (an earlier run's, or rank " +
                  std::to_string(*it) + " exited since)";
          hint = fresh;
        }
        seen.push_back(*it);
        it = pending.erase(it);
      }
      if (pending.empty() || !error.empty())
        break;
      if (Clock::now() >= deadline) {
        error =
            rankName + " of " + std::to_string(g.size) + " timed out after " +
            std::to_string(g.timeout.count()) +
            " ms waiting for the other ranks to join: " + rankList(pending) +
            (pending.size() == 1 ? " has" : " have") +
            " not joined (no record in " + g.storeName + ")";
        hint = "start WORLD_SIZE processes with ranks 0..WORLD_SIZE-1 "
               "(strata-launch --nproc-per-node N), all with the same "
               "MASTER_ADDR and MASTER_PORT (or file:// directory); a "
               "longer timeout (init_process_group's timeout) if a rank "
               "starts slowly";
        break;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(10));
    }
  } catch (const std::exception &e) {
    std::string m = e.what();
    error = rankName + " lost " + g.storeName +
            " while waiting for the other ranks' records (did rank 0, "
            "which serves it, exit?) [" +
            m.substr(0, m.find('\n')) + "]";
    hint = "look at the other ranks' output for the first failure";
  }
  if (g.rank == 0)
    g.keyPrefix = "strata/" + mine.run + "/";
  // Done comparing. On an error the server stays until the ranks it has
  // seen are done too (bounded), so they read its record and say why.
  try {
    g.store->set(doneKey(g.rank), {1});
    if (!error.empty() && sources.serving && !seen.empty()) {
      std::vector<std::string> keys;
      for (int r : seen)
        keys.push_back(doneKey(r));
      g.store->wait(keys, std::min<std::chrono::milliseconds>(
                              g.timeout, std::chrono::seconds(10)));
    }
  } catch (const std::exception &) {
  }
  if (error.empty())
    return;
  fail(what + ": " + error, hint, loc);
}

void forgetRendezvous(Group &g) {
  // A TCP store ends with rank 0, which may leave as soon as the barrier
  // is passed: only a directory outlives the run.
  if (!g.fileStore)
    return;
  for (const std::string &key : g.store->written())
    g.store->erase(key);
}

} // namespace detail
} // namespace distributed
} // namespace strata
