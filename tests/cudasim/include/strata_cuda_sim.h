//===- strata_cuda_sim.h - CUDA C of the emitter, compiled for the host ---===//
//
// Force-included (-include) into every module the CUDA simulator compiles
// (SimDriver.cpp). It gives the emitter's CUDA C (codegen/lib/Target/CUDA)
// host meanings: each CUDA thread is a fiber of the simulator, so
// threadIdx/blockIdx read the running fiber's state; __syncthreads and the
// warp shuffles wait for the other fibers of the block or warp; __shared__
// arrays are statics (one block runs at a time); every global pointer is a
// checked Ptr that reports an access outside its allocation, or a vector
// access that is misaligned, instead of touching the memory. Device
// addresses are not host addresses: a Ptr finds the host memory behind
// its allocation.
//
// Only the constructs the emitter writes are supported: the simulator is
// for testing strata's CUDA code, not CUDA in general.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_CUDA_SIM_H
#define STRATA_CUDA_SIM_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

namespace strata_sim {

struct Dim3 {
  unsigned x, y, z;
};

/// One simulated thread: its indices and the launch shape.
struct Thread {
  Dim3 threadIdx, blockIdx, blockDim, gridDim;
  unsigned lane, warp;
  unsigned id; // linear index in the block
};

/// Entry points of the simulator (SimDriver.cpp) a module calls back.
struct Api {
  /// Waits until every thread of the block has arrived.
  void (*syncBlock)();
  /// Waits until every thread of the running thread's warp has arrived.
  void (*syncWarp)();
  /// The 32 exchange slots of the running thread's warp.
  uint64_t *(*warpSlots)();
  /// The allocation holding device address `address`, and the host memory
  /// behind it: false if none does.
  bool (*find)(uint64_t address, uint64_t *base, uint64_t *bytes, char **host);
  /// Records an invalid access (the launch fails with this message).
  void (*fault)(const char *message);
  /// Advances at each block's start and at each __syncthreads: two
  /// threads' accesses to one shared element in the same epoch race.
  const uint64_t *epoch;
};

} // namespace strata_sim

// Set by the simulator when it loads the module, and before each switch to
// a thread.
extern "C" {
extern const strata_sim::Api *strata_sim_api;
extern strata_sim::Thread *strata_sim_thread;
}

#ifndef STRATA_SIM_DRIVER // the rest is for modules only

extern "C" {
const strata_sim::Api *strata_sim_api = nullptr;
strata_sim::Thread *strata_sim_thread = nullptr;
}

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define threadIdx (strata_sim_thread->threadIdx)
#define blockIdx (strata_sim_thread->blockIdx)
#define blockDim (strata_sim_thread->blockDim)
#define gridDim (strata_sim_thread->gridDim)

inline void __syncthreads() { strata_sim_api->syncBlock(); }

template <typename T> T __shfl_down_sync(unsigned mask, T v, int delta) {
  static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
  if (mask != 0xffffffffu)
    strata_sim_api->fault("__shfl_down_sync with a partial mask");
  uint64_t *slots = strata_sim_api->warpSlots();
  unsigned lane = strata_sim_thread->lane;
  uint64_t mine = 0;
  memcpy(&mine, &v, sizeof(T));
  slots[lane] = mine;
  strata_sim_api->syncWarp();
  T out = v; // a source lane past the warp gives the caller's own value
  if (lane + delta < 32)
    memcpy(&out, &slots[lane + delta], sizeof(T));
  strata_sim_api->syncWarp(); // nobody overwrites a slot before it is read
  return out;
}

/// The value of lane `lane - delta` (the caller's own below delta).
template <typename T> T __shfl_up_sync(unsigned mask, T v, int delta) {
  static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
  if (mask != 0xffffffffu)
    strata_sim_api->fault("__shfl_up_sync with a partial mask");
  uint64_t *slots = strata_sim_api->warpSlots();
  unsigned lane = strata_sim_thread->lane;
  uint64_t mine = 0;
  memcpy(&mine, &v, sizeof(T));
  slots[lane] = mine;
  strata_sim_api->syncWarp();
  T out = v;
  if (lane >= unsigned(delta))
    memcpy(&out, &slots[lane - delta], sizeof(T));
  strata_sim_api->syncWarp();
  return out;
}

/// The value of lane `src` (a broadcast).
template <typename T> T __shfl_sync(unsigned mask, T v, int src) {
  static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
  if (mask != 0xffffffffu)
    strata_sim_api->fault("__shfl_sync with a partial mask");
  uint64_t *slots = strata_sim_api->warpSlots();
  uint64_t mine = 0;
  memcpy(&mine, &v, sizeof(T));
  slots[strata_sim_thread->lane] = mine;
  strata_sim_api->syncWarp();
  T out;
  memcpy(&out, &slots[src & 31], sizeof(T));
  strata_sim_api->syncWarp();
  return out;
}

inline float __int_as_float(int v) {
  float f;
  memcpy(&f, &v, 4);
  return f;
}
inline double __longlong_as_double(long long v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}

template <typename T> inline T min(T a, T b) { return b < a ? b : a; }
template <typename T> inline T max(T a, T b) { return a < b ? b : a; }
/// Fibers take turns on one host thread: a read-modify-write is atomic.
template <typename T> inline T atomicAdd(T *p, T v) {
  T old = *p;
  *p = old + v;
  return old;
}

namespace strata_sim {

template <typename T> struct Bare { using type = T; };
template <typename T> struct Bare<const T> { using type = T; };
template <typename T> struct Bare<T *> { using type = typename Bare<T>::type; };

inline void faultf(const char *what, const char *name, long long index,
                   uint64_t address, uint64_t base, uint64_t bytes) {
  char text[320];
  snprintf(text, sizeof(text),
           "%s: %s[%lld] (address 0x%llx; its allocation is [0x%llx, "
           "0x%llx))",
           what, name, index, (unsigned long long)address,
           (unsigned long long)base, (unsigned long long)(base + bytes));
  strata_sim_api->fault(text);
}

/// A global-memory pointer that checks every access against the
/// allocation it points into.
template <typename T> class Ptr {
public:
  Ptr(uint64_t address, const char *name) : address(address), name(name) {
    if (!strata_sim_api->find(address, &base, &bytes, &host)) {
      base = bytes = 0;
      if (address)
        faultf("kernel argument", name, 0, address, 0, 0);
    }
  }
  T &operator[](long long i) const {
    uint64_t at = address + uint64_t(i) * sizeof(T);
    if (at < base || at + sizeof(T) > base + bytes) {
      faultf("out-of-bounds access", name, i, at, base, bytes);
      static typename Bare<T>::type scratch;
      return scratch;
    }
    return *reinterpret_cast<T *>(host + (at - base));
  }
  Ptr operator+(long long i) const {
    Ptr p = *this;
    p.address += uint64_t(i) * sizeof(T);
    return p;
  }
  Ptr operator-(long long i) const { return *this + -i; }
  uint64_t address, base = 0, bytes = 0; // device addresses
  char *host = nullptr;                  // the memory at `base`
  const char *name;
};

/// A two-dimensional __shared__ array of the tiled kernels (`tile_*`),
/// with each element's accesses tracked: a thread that reads or writes an
/// element another thread wrote, or writes one another thread read, with
/// no __syncthreads in between, is a race and fails the launch.
template <typename T, int R, int C> class Shared {
public:
  explicit Shared(const char *name) : name(name) {}
  class Elem {
  public:
    Elem(Shared *s, int r, int c) : s(s), r(r), c(c) {}
    Elem &operator=(T v) {
      s->access(r, c, /*write=*/true);
      s->data[r][c] = v;
      return *this;
    }
    Elem &operator=(const Elem &o) { return *this = T(o); }
    operator T() const {
      s->access(r, c, /*write=*/false);
      return s->data[r][c];
    }

  private:
    Shared *s;
    int r, c;
  };
  class Row {
  public:
    Row(Shared *s, long long r) : s(s), r(r) {}
    Elem operator[](long long c) const {
      if (r < 0 || r >= R || c < 0 || c >= C) {
        char text[160];
        snprintf(text, sizeof(text),
                 "out-of-bounds shared-memory access: %s[%lld][%lld] of "
                 "[%d][%d]",
                 s->name, r, c, R, C);
        strata_sim_api->fault(text);
        return Elem(s, 0, 0);
      }
      return Elem(s, int(r), int(c));
    }

  private:
    Shared *s;
    long long r;
  };
  Row operator[](long long r) { return Row(this, r); }

private:
  void access(int r, int c, bool write) {
    uint64_t now = *strata_sim_api->epoch;
    unsigned me = strata_sim_thread->id;
    const char *what = nullptr;
    unsigned other = 0;
    if (wEpoch[r][c] == now && writer[r][c] != me) {
      what =
          write ? "writes what thread %u wrote" : "reads what thread %u wrote";
      other = writer[r][c];
    } else if (write && rEpoch[r][c] == now &&
               (reader[r][c] != me || manyReaders[r][c])) {
      what = "writes what thread %u read";
      other = reader[r][c];
    }
    if (what) {
      char how[64], text[224];
      snprintf(how, sizeof(how), what, other);
      snprintf(text, sizeof(text),
               "shared-memory race on %s[%d][%d]: thread %u %s with no "
               "__syncthreads between",
               name, r, c, me, how);
      strata_sim_api->fault(text);
    }
    if (write) {
      wEpoch[r][c] = now;
      writer[r][c] = me;
    } else if (rEpoch[r][c] == now) {
      manyReaders[r][c] |= reader[r][c] != me;
    } else {
      rEpoch[r][c] = now;
      reader[r][c] = me;
      manyReaders[r][c] = false;
    }
  }

  const char *name;
  T data[R][C];
  uint64_t wEpoch[R][C] = {}, rEpoch[R][C] = {};
  unsigned writer[R][C] = {}, reader[R][C] = {};
  bool manyReaders[R][C] = {};
};

/// reinterpret_cast<V *>(ptr + i) of the vectorized kernels: checks that
/// the whole vector is inside the allocation and aligned as V must be.
template <typename To, typename T> To cast(const Ptr<T> &p) {
  using V = typename Bare<To>::type;
  uint64_t at = p.address;
  if (at < p.base || at + sizeof(V) > p.base + p.bytes) {
    faultf("out-of-bounds vector access", p.name,
           (long long)((at - p.base) / sizeof(T)), at, p.base, p.bytes);
    static V scratch;
    return &scratch;
  }
  if (at % alignof(V) != 0) {
    faultf("misaligned vector access", p.name,
           (long long)((at - p.base) / sizeof(T)), at, p.base, p.bytes);
    static V scratch;
    return &scratch;
  }
  return reinterpret_cast<To>(p.host + (at - p.base));
}

} // namespace strata_sim

#endif // STRATA_SIM_DRIVER
#endif // STRATA_CUDA_SIM_H
