//===- TcpStore.cpp - gloo's rendezvous over PyTorch's c10d::TCPStore -----===//
//
// env:// rendezvous uses the store torchrun's ranks use: c10d::TCPStore from
// Debian's libtorch (libtorch-dev headers, libtorch_cpu.so), rank 0 serving
// it at MASTER_ADDR:MASTER_PORT. Only this file includes torch headers;
// gloo's Context only needs set/get/wait, which map one to one, and the
// rendezvous check/erase, c10d's check/deleteKey.
//
//===----------------------------------------------------------------------===//
#include "StoreAdapter.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace strata {
namespace distributed {
namespace detail {
namespace {

class TcpStoreAdapter : public Store {
public:
  TcpStoreAdapter(const std::string &host, uint16_t port, bool isServer,
                  int worldSize, std::chrono::milliseconds timeout)
      : timeout_(timeout) {
    c10d::TCPStoreOptions opts;
    opts.port = port;
    opts.isServer = isServer;
    opts.numWorkers = worldSize;
    opts.waitWorkers = false; // joining is checked by the rendezvous's waits
    opts.timeout = timeout;
    store_ = c10::make_intrusive<c10d::TCPStore>(host, opts);
  }

  void set(const std::string &key, const std::vector<char> &data) override {
    store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
    noteWritten(key);
  }

  bool check(const std::vector<std::string> &keys) override {
    return store_->check(keys);
  }

  void erase(const std::string &key) override {
    try {
      store_->deleteKey(key);
    } catch (const std::exception &) {
      // best effort: rank 0's server may be gone already
    }
  }

  std::vector<char> get(const std::string &key) override {
    std::vector<uint8_t> v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }

  void wait(const std::vector<std::string> &keys) override {
    store_->wait(keys, timeout_);
  }

  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    store_->wait(keys, timeout);
  }

private:
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::TCPStore> store_;
};

} // namespace

std::unique_ptr<Store> makeTcpStore(const std::string &host, uint16_t port,
                                    bool isServer, int worldSize,
                                    std::chrono::milliseconds timeout,
                                    const std::string &, const SourceLoc &) {
  return std::make_unique<TcpStoreAdapter>(host, port, isServer, worldSize,
                                           timeout);
}

} // namespace detail
} // namespace distributed
} // namespace strata
