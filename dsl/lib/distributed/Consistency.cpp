//===- Consistency.cpp - the ranks agree on each collective ---------------===//
//
// Signatures as words, their hash in gloo tags, the eager check of NCCL
// calls and the comparison through the store after a failed call
// (Consistency.h, docs/distributed.md "Consistency check").
//
//===----------------------------------------------------------------------===//
#include "Consistency.h"

#include "strata/strata.h"

#include <gloo/allgather.h>
#include <gloo/rendezvous/context.h>

#include <algorithm>
#include <cstring>

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

std::string disagreement(Group &g, const Work::State &w,
                         std::chrono::milliseconds bound) {
  std::string prefix = "strata/signature/" + std::to_string(w.seq) + "/";
  const auto *mine = reinterpret_cast<const char *>(w.signature.data());
  size_t bytes = w.signature.size() * sizeof(int64_t);
  std::vector<int64_t> all(Signature::kWords * g.size);
  try {
    g.store->set(prefix + std::to_string(g.rank),
                 std::vector<char>(mine, mine + bytes));
    std::vector<std::string> keys;
    for (int r = 0; r < g.size; ++r)
      if (r != g.rank)
        keys.push_back(prefix + std::to_string(r));
    g.store->wait(keys, bound);
    for (int r = 0; r < g.size; ++r) {
      std::vector<char> theirs = r == g.rank
                                     ? std::vector<char>(mine, mine + bytes)
                                     : g.store->get(prefix + std::to_string(r));
      if (theirs.size() != bytes)
        return "";
      std::memcpy(all.data() + r * Signature::kWords, theirs.data(), bytes);
    }
  } catch (const std::exception &) {
    return ""; // a rank that never wrote (it crashed): the plain error
  }
  // Each rank says it has read before any leaves (rank 0 serves a TCP
  // store: its exit would fail the others' reads).
  try {
    std::vector<std::string> read;
    for (int r = 0; r < g.size; ++r)
      read.push_back(prefix + "read/" + std::to_string(r));
    g.store->set(read[g.rank], std::vector<char>{1});
    g.store->wait(read, bound);
  } catch (const std::exception &) {
  }
  return firstDifference(all, g.size);
}

} // namespace detail
} // namespace distributed
} // namespace strata
