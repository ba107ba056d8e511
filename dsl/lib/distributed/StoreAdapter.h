//===- StoreAdapter.h - the rendezvous stores of a process group -*- C++
//-*-===//
//
// gloo::rendezvous::Store over PyTorch's c10d::TCPStore (env://, what
// torchrun's ranks use) or gloo's FileStore (file://), with the two calls
// gloo's interface lacks: a check that does not wait (the rendezvous
// compares each rank's record as it comes and names the ranks that never
// came) and the removal of a key (each rank removes what it wrote once
// every rank has read it, so a file:// directory can serve the next run).
// Internal to strata_distributed; the torch headers stay in TcpStore.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_STOREADAPTER_H
#define STRATA_DISTRIBUTED_STOREADAPTER_H

#include "strata/Error.h"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata {
namespace distributed {
namespace detail {

/// A rendezvous store: gloo's calls, plus check and erase.
class Store : public gloo::rendezvous::Store {
public:
  /// Whether every key is set, without waiting. Throws on a store failure.
  virtual bool check(const std::vector<std::string> &keys) = 0;
  /// Removes `key` if it is set (best effort: never throws).
  virtual void erase(const std::string &key) = 0;
  /// The keys this process set so far, in order.
  std::vector<std::string> written() {
    std::lock_guard<std::mutex> lock(m_);
    return written_;
  }

protected:
  void noteWritten(const std::string &key) {
    std::lock_guard<std::mutex> lock(m_);
    written_.push_back(key);
  }

private:
  std::mutex m_;
  std::vector<std::string> written_;
};

/// A c10d::TCPStore client at host:port (rank 0 also starts the server
/// there) as a gloo store; every wait and the connection are bounded by
/// `timeout`. Throws std::runtime_error with c10d's message on failure; a
/// build without libtorch (NoTcpStore.cpp) throws strata::Error (`what`
/// and `loc`: the caller's) instead.
std::unique_ptr<Store> makeTcpStore(const std::string &host, uint16_t port,
                                    bool isServer, int worldSize,
                                    std::chrono::milliseconds timeout,
                                    const std::string &what,
                                    const SourceLoc &loc);

/// gloo's FileStore in directory `dir` (one file a key), its waits bounded
/// by `timeout`.
std::unique_ptr<Store> makeFileStore(const std::string &dir,
                                     std::chrono::milliseconds timeout);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_STOREADAPTER_H
