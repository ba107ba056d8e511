//===- CollectivesTest.cpp - every collective against the local computation
//===//
//
// Run as every rank of a group (strata-launch --nproc-per-node N): each
// rank's inputs are a function of its rank, so every rank computes what
// each collective must give locally and compares. Inputs include strided
// views (packed and unpacked) and pending tensors (evaluated first); the
// async forms are waited for out of order. Prints "rank R: N checks
// passed" and exits 0, or names each difference and exits 1.
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;

namespace {

int gChecks = 0, gFailures = 0;
int64_t gRank = 0, gSize = 1;

template <typename T>
void expectEq(const std::string &what, const std::vector<T> &got,
              const std::vector<T> &want, double tol = 0) {
  ++gChecks;
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i)
    same =
        std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <=
        tol * std::max(1.0, std::abs(static_cast<double>(want[i])));
  if (same)
    return;
  ++gFailures;
  std::printf("FAIL %s on rank %lld:", what.c_str(),
              static_cast<long long>(gRank));
  for (size_t i = 0; i < got.size() && i < 8; ++i)
    std::printf(" %g/%g", static_cast<double>(got[i]),
                i < want.size() ? static_cast<double>(want[i]) : -1.0);
  std::printf(" (got/want)\n");
}

/// Rank r's i-th input value: small integers, exact in every dtype and
/// under every reduction of up to 4 ranks.
double value(int64_t r, int64_t i) {
  return static_cast<double>((r + 1) * (i % 5 + 1) - (i % 3));
}

template <typename T> std::vector<T> inputOf(int64_t r, int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(value(r, i));
  return v;
}

template <typename T> std::vector<T> reduced(dist::ReduceOp op, int64_t n) {
  std::vector<T> out = inputOf<T>(0, n);
  for (int64_t r = 1; r < gSize; ++r) {
    std::vector<T> x = inputOf<T>(r, n);
    for (int64_t i = 0; i < n; ++i) {
      switch (op) {
      case dist::ReduceOp::SUM:
      case dist::ReduceOp::AVG:
        out[i] += x[i];
        break;
      case dist::ReduceOp::PRODUCT:
        out[i] *= x[i];
        break;
      case dist::ReduceOp::MIN:
        out[i] = std::min(out[i], x[i]);
        break;
      case dist::ReduceOp::MAX:
        out[i] = std::max(out[i], x[i]);
        break;
      }
    }
  }
  if (op == dist::ReduceOp::AVG)
    for (T &x : out)
      x /= static_cast<T>(gSize);
  return out;
}

template <typename T> void allReduceEveryOp(const char *name) {
  for (auto op :
       {dist::ReduceOp::SUM, dist::ReduceOp::AVG, dist::ReduceOp::PRODUCT,
        dist::ReduceOp::MIN, dist::ReduceOp::MAX}) {
    if (op == dist::ReduceOp::AVG && !std::is_floating_point_v<T>)
      continue;
    Tensor t = from_vector(inputOf<T>(gRank, 15), {3, 5});
    dist::all_reduce(t, op);
    expectEq(std::string("all_reduce ") + name + " " + dist::toString(op),
             t.to_vector<T>(), reduced<T>(op, 15), 1e-6);
  }
}

void allReduceViewsAndPending() {
  // A strided view (every other column of a transpose): packed, reduced,
  // copied back; the elements outside it keep their values.
  std::vector<float> baseValues(6 * 8, -1.0f);
  Tensor base = from_vector(baseValues, {6, 8});
  Tensor view = base.t().slice(1, 0, 6, 2); // 8 x 3, strides (1, 16)
  view.copy_(from_vector(inputOf<float>(gRank, 24), {8, 3}));
  dist::all_reduce(view, dist::ReduceOp::SUM);
  expectEq("all_reduce strided view", view.to_vector<float>(),
           reduced<float>(dist::ReduceOp::SUM, 24));
  std::vector<float> b = base.to_vector<float>();
  std::vector<float> want(6 * 8, -1.0f);
  std::vector<float> red = reduced<float>(dist::ReduceOp::SUM, 24);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 3; ++j)
      want[(2 * j) * 8 + i] = red[i * 3 + j];
  expectEq("all_reduce strided view: the base", b, want);

  // A pending tensor (two recorded ops, nothing evaluated yet).
  Tensor x = from_vector(inputOf<double>(gRank, 10), {10});
  Tensor pending = x * 2.0 + 1.0;
  dist::all_reduce(pending, dist::ReduceOp::MAX);
  std::vector<double> wantMax = reduced<double>(dist::ReduceOp::MAX, 10);
  for (double &v : wantMax)
    v = v * 2 + 1;
  expectEq("all_reduce pending", pending.to_vector<double>(), wantMax);
  // What was recorded after it reads the reduced values.
  Tensor after = pending - 1.0;
  for (double &v : wantMax)
    v -= 1;
  expectEq("all_reduce then an op", after.to_vector<double>(), wantMax);

  // A reader recorded before the collective reads the values before it
  // (data_ptr() runs pending readers first: PyTorch's eager order).
  Tensor a = from_vector(inputOf<float>(gRank, 6), {6});
  Tensor before = a * 1.0f; // pending
  dist::all_reduce(a, dist::ReduceOp::SUM);
  expectEq("a reader recorded before", before.to_vector<float>(),
           inputOf<float>(gRank, 6));
  expectEq("the reduced tensor", a.to_vector<float>(),
           reduced<float>(dist::ReduceOp::SUM, 6));

  // A strided view's result is a recorded write: the version moves.
  Tensor m = from_vector(inputOf<float>(gRank, 12), {3, 4});
  int64_t version = m._version();
  dist::all_reduce(m.t(), dist::ReduceOp::MAX);
  ++gChecks;
  if (m._version() <= version) {
    ++gFailures;
    std::printf("FAIL the version of a view's base did not move\n");
  }

  // A 0-d tensor and an empty one.
  Tensor scalar = ones(Shape{}, dtype(kFloat64)) * static_cast<double>(gRank);
  dist::all_reduce(scalar, dist::ReduceOp::SUM);
  expectEq("all_reduce 0-d", std::vector<double>{scalar.item<double>()},
           std::vector<double>{static_cast<double>(gSize * (gSize - 1) / 2)});
  Tensor none = zeros({0, 3});
  dist::all_reduce(none);
  dist::broadcast(none, 0);
  expectEq("all_reduce empty", none.to_vector<float>(), std::vector<float>{});

  // Bool: sum is logical or, product logical and.
  std::vector<bool> mine = {gRank == 0, true, false, gRank == 1};
  Tensor flags = from_vector(mine, {4});
  dist::all_reduce(flags, dist::ReduceOp::SUM);
  expectEq("all_reduce bool or", flags.to(kInt64).to_vector<int64_t>(),
           std::vector<int64_t>{1, 1, 0, gSize > 1 ? 1 : 0});

  // A large message (4 MB).
  int64_t n = 1 << 20;
  Tensor big = full({n}, static_cast<double>(gRank + 1), dtype(kFloat32));
  dist::all_reduce(big, dist::ReduceOp::SUM);
  std::vector<float> bigv = big.to_vector<float>();
  float want1 = static_cast<float>(gSize * (gSize + 1) / 2);
  expectEq("all_reduce 4 MB (first, last)",
           std::vector<float>{bigv.front(), bigv.back()},
           std::vector<float>{want1, want1});
}

void broadcasts() {
  int64_t src = gSize - 1;
  Tensor t = from_vector(inputOf<int64_t>(gRank, 12), {3, 4});
  dist::broadcast(t, src);
  expectEq("broadcast", t.to_vector<int64_t>(), inputOf<int64_t>(src, 12));
  // Into a strided view of a larger tensor.
  Tensor base = zeros({4, 6}, dtype(kFloat32));
  Tensor view = base.slice(1, 1, 6, 2); // 4 x 3
  view.copy_(from_vector(inputOf<float>(gRank, 12), {4, 3}));
  dist::broadcast(view, 0);
  expectEq("broadcast strided view", view.to_vector<float>(),
           inputOf<float>(0, 12));
  expectEq("broadcast strided view: column 0",
           base.select(1, 0).to_vector<float>(), std::vector<float>(4, 0.0f));
}

void allGathers() {
  Tensor mine = from_vector(inputOf<float>(gRank, 6), {2, 3}) * 1.0f; // pending
  std::vector<Tensor> list;
  Tensor wide = zeros({2, 3 * gSize}, dtype(kFloat32));
  for (int64_t k = 0; k < gSize; ++k)
    list.push_back(k % 2 ? wide.slice(1, k, 3 * gSize, gSize) // strided
                         : zeros({2, 3}, dtype(kFloat32)));
  dist::all_gather(list, mine);
  for (int64_t k = 0; k < gSize; ++k)
    expectEq("all_gather [" + std::to_string(k) + "]",
             list[k].to_vector<float>(), inputOf<float>(k, 6));

  Tensor out = empty({2 * gSize, 3}, dtype(kFloat32));
  dist::all_gather_into_tensor(out, mine);
  std::vector<float> want;
  for (int64_t k = 0; k < gSize; ++k) {
    std::vector<float> v = inputOf<float>(k, 6);
    want.insert(want.end(), v.begin(), v.end());
  }
  expectEq("all_gather_into_tensor", out.to_vector<float>(), want);
}

template <typename T> void reduceScatters(const char *name) {
  for (auto op :
       {dist::ReduceOp::SUM, dist::ReduceOp::MAX, dist::ReduceOp::MIN}) {
    // Rank r's k-th input is the slice k of one input of gSize * 5 values.
    std::vector<T> all = inputOf<T>(gRank, gSize * 5);
    std::vector<Tensor> inputs;
    for (int64_t k = 0; k < gSize; ++k)
      inputs.push_back(from_vector(
          std::vector<T>(all.begin() + k * 5, all.begin() + (k + 1) * 5), {5}));
    Tensor out = zeros({5}, dtype(from_vector(std::vector<T>{0}).dtype()));
    dist::reduce_scatter(out, inputs, op);
    std::vector<T> red = reduced<T>(op, gSize * 5);
    expectEq(
        std::string("reduce_scatter ") + name + " " + dist::toString(op),
        out.to_vector<T>(),
        std::vector<T>(red.begin() + gRank * 5, red.begin() + (gRank + 1) * 5));
  }
}

/// Two async collectives on one strided view, waited in reverse order: the
/// second sees the first's result (PyTorch's order), not the view's values
/// from before it.
void asyncTwiceOnAView() {
  Tensor base = from_vector(inputOf<float>(gRank, 12), {3, 4});
  Tensor view = base.t(); // 4 x 3, strided
  dist::Work first = dist::all_reduce(view, dist::ReduceOp::SUM, true);
  dist::Work second = dist::all_reduce(view, dist::ReduceOp::SUM, true);
  second.wait();
  first.wait();
  std::vector<float> want = reduced<float>(dist::ReduceOp::SUM, 12);
  for (float &v : want)
    v *= static_cast<float>(gSize);
  expectEq("two async all_reduces on one view", base.to_vector<float>(), want);
}

void asyncForms() {
  std::vector<Tensor> ts;
  std::vector<dist::Work> works;
  for (int k = 0; k < 4; ++k) {
    Tensor base = from_vector(inputOf<float>(gRank + k, 16), {4, 4});
    ts.push_back(k % 2 ? base.t() : base); // two of them strided
    works.push_back(dist::all_reduce(ts.back(), dist::ReduceOp::SUM, true));
  }
  works.push_back(dist::barrier(true));
  for (int k = 3; k >= 0; --k) // out of order
    works[k].wait();
  works[4].wait();
  for (int k = 0; k < 4; ++k) {
    std::vector<float> want(16, 0.0f);
    for (int64_t r = 0; r < gSize; ++r) {
      std::vector<float> x = inputOf<float>(r + k, 16);
      for (int i = 0; i < 16; ++i)
        want[i] += x[i];
    }
    Tensor w = from_vector(want, {4, 4});
    expectEq("async all_reduce " + std::to_string(k), ts[k].to_vector<float>(),
             (k % 2 ? w.t() : w).to_vector<float>());
    ++gChecks;
    if (!works[k].is_completed() || !works[k].is_success()) {
      ++gFailures;
      std::printf("FAIL async work %d not completed\n", k);
    }
  }
}

/// Async collectives of temporaries, their handles dropped or waited late:
/// the work holds the tensors it reads and writes (an adversary's all_gather
/// of `full({2}, r + 1)` read freed memory, a dropped all_reduce of
/// `ones({1000})` corrupted the heap).
void asyncOfTemporaries() {
  std::vector<Tensor> out;
  for (int64_t r = 0; r < gSize; ++r)
    out.push_back(empty({2}));
  dist::Work gather = dist::all_gather(
      out, full({2}, static_cast<double>(gRank + 1)), /*async_op=*/true);
  dist::Work dropped =
      dist::all_reduce(ones({1000}), dist::ReduceOp::SUM, /*async_op=*/true);
  std::vector<float> scratch(1 << 16, 1.0f); // reuses freed memory, if any
  (void)(from_vector(scratch, {1 << 16}) * 3).sum().item<float>();
  gather.wait();
  dropped.wait();
  for (int64_t r = 0; r < gSize; ++r)
    expectEq("all_gather of a temporary, entry " + std::to_string(r),
             out[r].to_vector<float>(),
             std::vector<float>(2, static_cast<float>(r + 1)));
  { (void)dist::all_reduce(ones({1000}), dist::ReduceOp::SUM, true); }
  dist::barrier();
}

} // namespace

int main() {
  try {
    // Any case, as PyTorch's Backend("Gloo").
    dist::init_process_group("Gloo", "env://", std::chrono::seconds(20));
    gRank = dist::get_rank();
    gSize = dist::get_world_size();
    allReduceEveryOp<float>("float32");
    allReduceEveryOp<double>("float64");
    allReduceEveryOp<int32_t>("int32");
    allReduceEveryOp<int64_t>("int64");
    allReduceViewsAndPending();
    broadcasts();
    allGathers();
    reduceScatters<float>("float32");
    reduceScatters<int64_t>("int64");
    asyncForms();
    asyncTwiceOnAView();
    asyncOfTemporaries();
    dist::barrier();
    dist::destroy_process_group();
  } catch (const std::exception &e) {
    std::printf("FAIL exception on rank %lld: %s\n",
                static_cast<long long>(gRank), e.what());
    return 1;
  }
  std::printf("rank %lld: %d checks passed, %d failed\n",
              static_cast<long long>(gRank), gChecks - gFailures, gFailures);
  return gFailures ? 1 : 0;
}
