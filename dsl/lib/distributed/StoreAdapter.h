//===- StoreAdapter.h - the rendezvous stores of a process group -*- C++
//-*-===//
//
// gloo::rendezvous::Store over PyTorch's c10d::TCPStore (env://, what
// torchrun's ranks use) or gloo's FileStore (file://). Internal to
// strata_distributed; the torch headers stay in TcpStore.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DISTRIBUTED_STOREADAPTER_H
#define STRATA_DISTRIBUTED_STOREADAPTER_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace strata {
namespace distributed {
namespace detail {

/// A c10d::TCPStore client at host:port (rank 0 also starts the server
/// there) as a gloo store; every wait and the connection are bounded by
/// `timeout`. Throws std::runtime_error with c10d's message on failure.
std::unique_ptr<gloo::rendezvous::Store>
makeTcpStore(const std::string &host, uint16_t port, bool isServer,
             int worldSize, std::chrono::milliseconds timeout);

} // namespace detail
} // namespace distributed
} // namespace strata

#endif // STRATA_DISTRIBUTED_STOREADAPTER_H
