//===- FileStore.cpp - gloo's FileStore as a rendezvous store (file://) ---===//
//
// gloo's FileStore keeps one file a key (its name a hash of the key) in the
// directory every rank sees, and refuses to set a key whose file exists.
// This adapter bounds every wait by the group's timeout and adds the
// non-waiting check and the removal the rendezvous needs (StoreAdapter.h).
//
//===----------------------------------------------------------------------===//
#include "StoreAdapter.h"

#include <gloo/rendezvous/file_store.h>

#include <cstdio>

namespace strata {
namespace distributed {
namespace detail {
namespace {

/// gloo's FileStore, whose objectPath and check are protected.
class GlooFileStore : public gloo::rendezvous::FileStore {
public:
  using FileStore::check;
  using FileStore::FileStore;
  using FileStore::objectPath;
};

class FileStoreAdapter : public Store {
public:
  FileStoreAdapter(const std::string &path, std::chrono::milliseconds timeout)
      : store_(path), timeout_(timeout) {}
  void set(const std::string &key, const std::vector<char> &data) override {
    store_.set(key, data);
    noteWritten(key);
  }
  std::vector<char> get(const std::string &key) override {
    return store_.get(key);
  }
  void wait(const std::vector<std::string> &keys) override {
    store_.wait(keys, timeout_);
  }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    store_.wait(keys, timeout);
  }
  bool check(const std::vector<std::string> &keys) override {
    return store_.check(keys);
  }
  void erase(const std::string &key) override {
    std::remove(store_.objectPath(key).c_str());
  }

private:
  GlooFileStore store_;
  std::chrono::milliseconds timeout_;
};

} // namespace

std::unique_ptr<Store> makeFileStore(const std::string &dir,
                                     std::chrono::milliseconds timeout) {
  return std::make_unique<FileStoreAdapter>(dir, timeout);
}

} // namespace detail
} // namespace distributed
} // namespace strata
