//===- Consistency.h - the ranks agree on each collective (internal) -*- C++
//-*-===//
//
// Every rank must give the same (op, dtype, shape, root) to a collective.
// On gloo the call's tag carries a hash of that signature, so calls that
// differ never meet and end at the group's timeout, when disagreement()
// names them through the store; a CUDA tensor's NCCL call (no tags) is
// preceded by checkSignature's all_gather (docs/distributed.md
// "Consistency check"). Internal to strata_distributed.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_CONSISTENCY_H
#define STRATA_DISTRIBUTED_CONSISTENCY_H

#include "Group.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {
namespace distributed {
namespace detail {

/// A signature as the words describe() reads.
std::vector<int64_t> wordsOf(const Signature &s);
/// The gloo tag of call `seq` with signature `words` (FNV-1a, folded to
/// gloo's 32 bits): equal on ranks that agree, different (but for a 2^-32
/// chance) on ranks that do not, or that are at different calls.
uint32_t tagOf(uint32_t seq, const std::vector<int64_t> &words);
/// The eager check of a CUDA tensor's collective: the all_gather of
/// signatures; throws a strata::Error naming the ranks that differ from
/// rank 0 (on every rank: each sees all records).
void checkSignature(Group &g, const Signature &s, const std::string &what,
                    uint32_t tag);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_CONSISTENCY_H
