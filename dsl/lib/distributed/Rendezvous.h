//===- Rendezvous.h - what the ranks agree on before gloo connects -*- C++
//-*-===//
//
// Before gloo's connectFullMesh, each rank publishes a record in the store
// (its world size, its consistency check, its backend, its host and
// process) and compares every other rank's with its own as it comes: a
// world size, check or backend that differs is named at once on every
// rank (gloo itself would fail on the address sizes, or the calls would
// never meet), and at the timeout the ranks that never came are named.
// Records left by an earlier run in a file:// directory are recognized.
// Once every rank has connected, each removes the files it wrote.
// Internal to strata_distributed.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_RENDEZVOUS_H
#define STRATA_DISTRIBUTED_RENDEZVOUS_H

#include "Group.h"

#include <string>
#include <vector>

namespace strata {
namespace distributed {
namespace detail {

/// Where this rank's settings came from, for messages.
struct RendezvousSources {
  /// "WORLD_SIZE" or "the world_size argument".
  std::string worldSize;
  /// True when this process serves the TCP store (rank 0 under env://
  /// without torchrun's agent): it then waits for the others to have read
  /// its record before it leaves with an error.
  bool serving = false;
};

/// Publishes this rank's record and compares the others' (`g`'s rank,
/// size, check, backend, store and storeName are set). Sets g.keyPrefix
/// from rank 0's record (the run's id: later keys of this run never meet
/// an earlier run's). Throws a located strata::Error on a disagreement,
/// an earlier run's records, or ranks missing at the group's timeout.
void exchangeRecords(Group &g, const RendezvousSources &sources,
                     const std::string &what, const SourceLoc &loc);

/// After every rank has connected (the init barrier): removes the keys
/// this rank wrote to a file:// directory, so it is empty again for the
/// next run (as PyTorch's FileStore removes its file).
void forgetRendezvous(Group &g);

/// "rank 2", "ranks 1 and 3", "ranks 1, 2 and 5" (at most 8 named, then
/// "and N more").
std::string rankList(const std::vector<int> &ranks);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_RENDEZVOUS_H
