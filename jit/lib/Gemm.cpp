//===- Gemm.cpp - matrix-product kernels run by a tuned BLAS --------------===//
//
// See Gemm.h. The kernel's loops (after --strata-coalesce) are classified
// by the operands' strides along them: the reduced loop (the result's
// stride 0) is K, a loop only A and the result move along is M, one only B
// and the result move along is N, any other is a batch loop run by strata.
// BLAS wants each matrix with one unit stride (row- or column-major) and a
// leading dimension covering the other; the result must be row-major, or
// column-major and computed as C^T = B^T A^T.
//
//===----------------------------------------------------------------------===//
#include "Gemm.h"
#include "JitInternal.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Runtime/Settings.h"
#include "strata/Runtime/ThreadPool.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

using namespace strata::jit::detail;
using namespace strata::ir;

namespace {

// cblas.h's values (OpenBLAS, netlib): CblasRowMajor, CblasNoTrans,
// CblasTrans; blasint is a 32-bit int in Debian's libopenblas0.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double *,
                         int, const double *, int, double, double *, int);

struct Blas {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
};

const Blas &blas() {
  static const Blas loaded = [] {
    Blas b;
    const std::string &name = strata::runtime::settings::blasLibrary();
    if (name.empty()) // STRATA_BLAS=0
      return b;
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      if (strata::runtime::settings::debugLevel() >= 1)
        fprintf(stderr, "[strata] no BLAS (%s): matmuls run as kernels\n",
                dlerror());
      return b;
    }
    auto sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
    auto dgemm = reinterpret_cast<DgemmFn>(dlsym(lib, "cblas_dgemm"));
    if (!sgemm || !dgemm)
      return b;
    // strata's thread pool spreads the products; OpenBLAS's own threads
    // would compete with it (as PyTorch sets its BLAS's thread count).
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(
            dlsym(lib, "openblas_set_num_threads")))
      set(1);
    b.sgemm = sgemm;
    b.dgemm = dgemm;
    if (strata::runtime::settings::debugLevel() >= 1)
      fprintf(stderr, "[strata] matmuls run through %s\n", name.c_str());
    return b;
  }();
  return loaded;
}

/// How BLAS reads a rows x cols matrix with strides s: its transpose flag
/// and leading dimension; nothing when BLAS cannot address it.
struct Access {
  int trans;
  int64_t ld;
};
std::optional<Access> access(int64_t rows, int64_t cols, MatrixStrides s) {
  if (s.rows < 0 || s.cols < 0)
    return std::nullopt;
  if (s.cols == 1 || cols == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : s.rows;
    if (ld >= std::max<int64_t>(cols, 1))
      return Access{kNoTrans, ld};
  }
  if (s.rows == 1 || rows == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : s.cols;
    if (ld >= std::max<int64_t>(rows, 1))
      return Access{kTrans, ld};
  }
  return std::nullopt;
}

bool fitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

} // namespace

bool strata::jit::detail::blasAvailable() { return blas().sgemm != nullptr; }

std::optional<GemmCall> strata::jit::detail::matchGemm(mlir::Operation *op) {
  auto kernel = llvm::dyn_cast<KernelOp>(op);
  if (!kernel || !isMatrixProduct(kernel))
    return std::nullopt;
  mlir::Type element =
      kernel.getResult(0).getType().cast<StridedTensorType>().getElementType();
  KernelOp::LoopNest nest = kernel.getLoopNest();
  const auto &sa = nest.strides[0], &sb = nest.strides[1],
             &sc = nest.strides[2];
  GemmCall call;
  call.isDouble = element.isF64();
  call.offsetA = nest.offsets[0];
  call.offsetB = nest.offsets[1];
  call.offsetC = nest.offsets[2];
  int kLoop = -1, mLoop = -1, nLoop = -1;
  for (size_t l = 0; l < nest.sizes.size(); ++l) {
    if (nest.sizes[l] == 1)
      continue;
    if (sc[l] == 0) {
      if (kLoop >= 0)
        return std::nullopt;
      kLoop = static_cast<int>(l);
    } else if (sb[l] == 0 && sa[l] != 0) {
      // (Of several, the one the result moves along least is M.)
      if (mLoop < 0 || std::abs(sc[l]) < std::abs(sc[mLoop]))
        mLoop = static_cast<int>(l);
    } else if (sa[l] == 0 && sb[l] != 0) {
      if (nLoop < 0 || std::abs(sc[l]) < std::abs(sc[nLoop]))
        nLoop = static_cast<int>(l);
    }
  }
  for (size_t l = 0; l < nest.sizes.size(); ++l) {
    int li = static_cast<int>(l);
    if (nest.sizes[l] == 1 || li == kLoop || li == mLoop || li == nLoop)
      continue;
    if (sa[l] < 0 || sb[l] < 0 || sc[l] < 0)
      return std::nullopt;
    call.batch.push_back(nest.sizes[l]);
    call.batchA.push_back(sa[l]);
    call.batchB.push_back(sb[l]);
    call.batchC.push_back(sc[l]);
  }
  if (kLoop >= 0) {
    call.k = nest.sizes[kLoop];
    call.a.cols = sa[kLoop];
    call.b.rows = sb[kLoop];
  }
  if (mLoop >= 0) {
    call.m = nest.sizes[mLoop];
    call.a.rows = sa[mLoop];
    call.c.rows = sc[mLoop];
  }
  if (nLoop >= 0) {
    call.n = nest.sizes[nLoop];
    call.b.cols = sb[nLoop];
    call.c.cols = sc[nLoop];
  }
  // A column-major result: C^T = B^T A^T.
  if (!(call.c.cols == 1 || call.n == 1) && (call.c.rows == 1 || call.m == 1)) {
    std::swap(call.m, call.n);
    std::swap(call.a, call.b);
    std::swap(call.offsetA, call.offsetB);
    std::swap(call.batchA, call.batchB);
    std::swap(call.a.rows, call.a.cols);
    std::swap(call.b.rows, call.b.cols);
    std::swap(call.c.rows, call.c.cols);
    call.operandsSwapped = true;
  }
  if (!fitsInt(call.m) || !fitsInt(call.n) || !fitsInt(call.k) ||
      call.m * call.n * call.k == 0)
    return std::nullopt;
  auto a = access(call.m, call.k, call.a), b = access(call.k, call.n, call.b),
       c = access(call.m, call.n, call.c);
  if (!a || !b || !c || c->trans != kNoTrans || !fitsInt(a->ld) ||
      !fitsInt(b->ld) || !fitsInt(c->ld))
    return std::nullopt;
  return call;
}

void strata::jit::detail::runGemm(const GemmCall &call, const void *a,
                                  const void *b, void *c, int numThreads) {
  const Blas &lib = blas();
  if (call.operandsSwapped) // (C^T = B^T A^T: the kernel's second input is A)
    std::swap(a, b);
  auto ma = *access(call.m, call.k, call.a),
       mb = *access(call.k, call.n, call.b),
       mc = *access(call.m, call.n, call.c);
  int64_t batches = 1;
  for (int64_t s : call.batch)
    batches *= s;
  // Row blocks: enough to keep every thread busy, each worth a BLAS call.
  auto &pool = strata::runtime::ThreadPool::global();
  int64_t threads = numThreads == 1 ? 1 : pool.size();
  double flops = 2.0 * call.m * call.n * call.k * batches;
  int64_t blocks = 1;
  if (threads > 1 && flops >= (1 << 20) && batches < threads)
    blocks = std::min<int64_t>(call.m, (threads + batches - 1) / batches);
  int64_t rowsPerBlock = (call.m + blocks - 1) / blocks;
  size_t elem = call.isDouble ? 8 : 4;
  auto task = [&](int64_t t) {
    int64_t batch = t / blocks, block = t % blocks;
    int64_t offA = call.offsetA, offB = call.offsetB, offC = call.offsetC;
    for (size_t d = call.batch.size(); d-- > 0;) {
      int64_t i = batch % call.batch[d];
      batch /= call.batch[d];
      offA += i * call.batchA[d];
      offB += i * call.batchB[d];
      offC += i * call.batchC[d];
    }
    int64_t row0 = block * rowsPerBlock;
    int64_t rows = std::min(rowsPerBlock, call.m - row0);
    if (rows <= 0)
      return;
    offA += row0 * call.a.rows;
    offC += row0 * call.c.rows;
    const char *pa = static_cast<const char *>(a) + offA * elem;
    const char *pb = static_cast<const char *>(b) + offB * elem;
    char *pc = static_cast<char *>(c) + offC * elem;
    int m = static_cast<int>(rows), n = static_cast<int>(call.n),
        k = static_cast<int>(call.k);
    if (call.isDouble)
      lib.dgemm(kRowMajor, ma.trans, mb.trans, m, n, k, 1.0,
                reinterpret_cast<const double *>(pa), static_cast<int>(ma.ld),
                reinterpret_cast<const double *>(pb), static_cast<int>(mb.ld),
                0.0, reinterpret_cast<double *>(pc), static_cast<int>(mc.ld));
    else
      lib.sgemm(kRowMajor, ma.trans, mb.trans, m, n, k, 1.0f,
                reinterpret_cast<const float *>(pa), static_cast<int>(ma.ld),
                reinterpret_cast<const float *>(pb), static_cast<int>(mb.ld),
                0.0f, reinterpret_cast<float *>(pc), static_cast<int>(mc.ld));
  };
  int64_t tasks = batches * blocks;
  if (threads <= 1 || tasks == 1 || flops < (1 << 20)) {
    for (int64_t t = 0; t < tasks; ++t)
      task(t);
    return;
  }
  pool.parallelFor(tasks, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      task(t);
  });
}
