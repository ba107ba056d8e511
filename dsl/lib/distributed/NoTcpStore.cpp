//===- NoTcpStore.cpp - env:// in a build without libtorch ----------------===//
//
// The GPU bundle (STRATA_STATIC_LLVM=ON, tests/gpu/make-bundle.sh) carries
// no libtorch, whose c10d::TCPStore serves env:// rendezvous in the default
// build (TcpStore.cpp): there, this file replaces it and env:// fails with a
// located error that names the file:// store, which works the same.
//
//===----------------------------------------------------------------------===//
#include "StoreAdapter.h"

#include <string>

namespace strata {
namespace distributed {
namespace detail {

std::unique_ptr<Store> makeTcpStore(const std::string &host, uint16_t port,
                                    bool, int, std::chrono::milliseconds,
                                    const std::string &what,
                                    const SourceLoc &loc) {
  throw Error(what +
                  ": init_method env:// expected c10d's TCPStore to serve "
                  "the store at " +
                  host + ":" + std::to_string(port) +
                  ", but this build of strata_distributed has none (built "
                  "without libtorch, as the GPU bundle is)",
              "use init_method \"file:///DIR\" with a directory every rank "
              "sees (tests/gpu/run.sh: STRATA_INIT_METHOD=file:///DIR), or "
              "a build with libtorch-dev",
              loc);
}

} // namespace detail
} // namespace distributed
} // namespace strata
