//===- Consistency.cpp - the ranks agree on each collective ---------------===//
//
// Signatures as words, their hash in gloo tags, the eager check of NCCL
// calls and the comparison through the store after a failed call, which
// names calls that differ, ranks whose check was set differently, or the
// ranks that never reached the call (Consistency.h, docs/distributed.md
// "Consistency check").
//
//===----------------------------------------------------------------------===//
#include "Consistency.h"
#include "Rendezvous.h"

#include "strata/strata.h"

#include <gloo/allgather.h>
#include <gloo/rendezvous/context.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <thread>

namespace strata {
namespace distributed {
namespace detail {

namespace {

/// "the ranks disagree: rank 0 called ..., rank r called ..." for the first
/// rank r whose words differ from rank 0's, or "".
std::string firstDifference(const std::vector<int64_t> &all, int size) {
  const int64_t *first = all.data();
  for (int r = 1; r < size; ++r) {
    const int64_t *other = all.data() + r * Signature::kWords;
    if (!std::equal(first, first + Signature::kWords, other))
      return "the ranks disagree: rank 0 called " + describe(first) +
             ", rank " + std::to_string(r) + " called " + describe(other);
  }
  return "";
}

} // namespace

std::vector<int64_t> wordsOf(const Signature &s) {
  std::vector<int64_t> words(Signature::kWords);
  words[0] = s.op;
  words[1] = s.dtype;
  words[2] = s.reduce;
  words[3] = s.root;
  words[4] = s.count;
  words[5] = s.numel;
  words[6] = s.ndim;
  std::copy_n(s.sizes, Signature::kMaxDims, words.begin() + 7);
  words[7 + Signature::kMaxDims] = s.cuda;
  return words;
}

uint32_t tagOf(uint32_t seq, const std::vector<int64_t> &words) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(seq);
  for (int64_t w : words)
    mix(static_cast<uint64_t>(w));
  return static_cast<uint32_t>(h ^ (h >> 32));
}

void checkSignature(Group &g, const Signature &s, const std::string &what,
                    uint32_t tag) {
  std::vector<int64_t> mine = wordsOf(s), all(Signature::kWords * g.size);
  gloo::AllgatherOptions opts(g.context);
  opts.setInput(mine.data(), mine.size());
  opts.setOutput(all.data(), all.size());
  opts.setTag(tag);
  gloo::allgather(opts);
  std::string differs = firstDifference(all, g.size);
  if (!differs.empty())
    throw Error(what + ": " + differs,
                "every rank must call the same collectives in the same "
                "order with tensors of the same shape and dtype",
                std::source_location::current());
}

Comparison disagreement(Group &g, const Work::State &w,
                        std::chrono::milliseconds bound) {
  using Clock = std::chrono::steady_clock;
  Comparison result;
  std::string prefix = g.keyPrefix + "signature/" + std::to_string(w.seq) + "/";
  // The record: the signature's words, then whether the check was on.
  std::vector<int64_t> mine = w.signature;
  mine.push_back(w.checked ? 1 : 0);
  const size_t words = mine.size(), bytes = words * sizeof(int64_t);
  std::vector<std::vector<int64_t>> all(g.size);
  all[g.rank] = mine;
  std::vector<int> pending;
  for (int r = 0; r < g.size; ++r)
    if (r != g.rank)
      pending.push_back(r);
  try {
    const auto *p = reinterpret_cast<const char *>(mine.data());
    g.store->set(prefix + std::to_string(g.rank),
                 std::vector<char>(p, p + bytes));
    const Clock::time_point deadline = Clock::now() + bound;
    std::chrono::milliseconds pause(1);
    while (!pending.empty()) {
      for (auto it = pending.begin(); it != pending.end();) {
        std::string key = prefix + std::to_string(*it);
        if (!g.store->check({key})) {
          ++it;
          continue;
        }
        std::vector<char> theirs = g.store->get(key);
        if (theirs.size() == bytes) {
          all[*it].resize(words);
          std::memcpy(all[*it].data(), theirs.data(), bytes);
        }
        it = pending.erase(it);
      }
      if (pending.empty() || Clock::now() >= deadline)
        break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(10));
    }
  } catch (const std::exception &) {
    // the store is gone (rank 0, which serves it, left): what was read
  }
  result.missing = pending;
  // Each rank says it has read before any leaves (rank 0 serves a TCP
  // store: its exit would fail the others' reads); only the ranks that
  // wrote are awaited, and only by a rank that read some.
  try {
    g.store->set(prefix + "read/" + std::to_string(g.rank), {1});
    std::vector<std::string> read;
    for (int r = 0; r < g.size; ++r)
      if (r != g.rank && !all[r].empty())
        read.push_back(prefix + "read/" + std::to_string(r));
    if (!read.empty())
      g.store->wait(read, bound);
  } catch (const std::exception &) {
  }
  // The consistency check set differently: the calls' tags differ even
  // where the calls agree.
  for (int r = 0; r < g.size; ++r)
    if (!all[r].empty() && all[r].back() != mine.back()) {
      int on = mine.back() ? g.rank : r, off = mine.back() ? r : g.rank;
      result.differs =
          "the ranks disagree on the consistency check: rank " +
          std::to_string(on) + " has it on and rank " + std::to_string(off) +
          " off (set_consistency_check(false) or STRATA_DISTRIBUTED_CHECK=0)";
      return result;
    }
  // Else each rank's call against the lowest rank's that came.
  int first = -1;
  for (int r = 0; r < g.size && result.differs.empty(); ++r) {
    if (all[r].empty())
      continue;
    if (first < 0) {
      first = r;
      continue;
    }
    if (!std::equal(all[first].begin(), all[first].end() - 1, all[r].begin()))
      result.differs = "the ranks disagree: rank " + std::to_string(first) +
                       " called " + describe(all[first].data()) + ", rank " +
                       std::to_string(r) + " called " + describe(all[r].data());
  }
  return result;
}

std::pair<std::string, std::string>
explainFailure(Group &g, const Work::State &w, const std::string &glooMessage) {
  bool timedOut = glooMessage.find("Timed out") != std::string::npos ||
                  glooMessage.find("timed out") != std::string::npos;
  // A peer whose collective timed out closes its connections, so a
  // mismatch may show here as either.
  auto compared = std::chrono::steady_clock::now();
  Comparison c;
  if (!w.signature.empty())
    c = disagreement(g, w,
                     std::min<std::chrono::milliseconds>(
                         g.timeout, std::chrono::seconds(10)));
  auto extra = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - compared);
  std::ostringstream os;
  std::string hint;
  os << w.what << ": ";
  bool checkDiffers = c.differs.rfind("the ranks disagree on the "
                                      "consistency check",
                                      0) == 0;
  if (!c.differs.empty()) {
    os << c.differs << " (calls "
       << (checkDiffers ? "tagged differently" : "that differ")
       << " cannot meet: the group's timeout of " << g.timeout.count()
       << " ms ended them)";
    hint = checkDiffers
               ? "call set_consistency_check() with the same value on every "
                 "rank at the same point, and set STRATA_DISTRIBUTED_CHECK "
                 "alike on every rank (or on none)"
               : "every rank must call the same collectives in the same "
                 "order with tensors of the same shape and dtype";
  } else {
    os << "rank " << g.rank;
    if (timedOut)
      os << " timed out after " << g.timeout.count()
         << " ms waiting for the other ranks";
    else
      os << " lost its connection to another rank (did a rank exit or "
            "crash?)";
    if (!c.missing.empty())
      os << "; " << rankList(c.missing)
         << (c.missing.size() == 1 ? " has" : " have") << " not reached this "
         << w.what << " (call " << w.seq << "): no signature of "
         << (c.missing.size() == 1 ? "it" : "theirs")
         << " came through the store within " << extra.count()
         << " ms more (never called it, still in earlier work, or left)";
    else if (!w.signature.empty())
      os << "; every rank reached this " << w.what << " with the same "
         << "call (their signatures, read through the store, agree)";
    hint = timedOut ? "every rank must call the same collectives in the "
                      "same order; a longer timeout (init_process_group's "
                      "timeout) if a rank is slow"
                    : "look at the other ranks' output for the first "
                      "failure";
  }
  os << " [gloo: " << glooMessage << "]";
  return {os.str(), hint};
}

} // namespace detail
} // namespace distributed
} // namespace strata
