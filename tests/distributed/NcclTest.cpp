//===- NcclTest.cpp - the nccl backend on CUDA tensors, against the CPU
//----===//
//
// Run as every rank of a group under the CUDA simulator, with
// STRATA_NCCL_LIBRARY naming libstrata-fake-nccl.so (tests/distributed/
// CMakeLists.txt), or on GPUs with the real NCCL (tests/gpu/run.sh):
//
//   strata-dist-nccl [collectives|MODE TIMEOUT_MS]
//
// collectives: every collective on CUDA tensors (each dtype and reduce op,
// strided views, pending tensors, async forms, a DDP step) against the same
// computation done locally on the CPU; each rank computes every rank's
// inputs. Under the fake it also checks that each CUDA collective reached
// NCCL and a CPU one did not. Prints "rank R: N checks passed" or each
// difference (exit 1). The fault MODEs (run_fault.py) print the
// strata::Error a surviving rank gets and exit 1.
//
// The ranks meet through init_method $STRATA_INIT_METHOD when it is set
// (file:///DIR: the GPU bundle, whose strata_distributed has no
// c10d::TCPStore; tests/gpu/run.sh gives each run a fresh directory), else
// env:// (MASTER_ADDR and MASTER_PORT, set by strata-launch).
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;

namespace {

int gChecks = 0, gFailures = 0;
int64_t gRank = 0, gSize = 1;
const Device kCuda = Device::cuda();

void expect(bool ok, const std::string &what) {
  ++gChecks;
  if (ok)
    return;
  ++gFailures;
  std::printf("FAIL %s on rank %lld\n", what.c_str(),
              static_cast<long long>(gRank));
}

void expectNear(const std::string &what, const std::vector<double> &got,
                const std::vector<double> &want, double tol = 1e-6) {
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i)
    same = std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i]));
  if (!same) {
    std::printf("rank %lld %s got/want:", static_cast<long long>(gRank),
                what.c_str());
    for (size_t i = 0; i < got.size() && i < 8; ++i)
      std::printf(" %g/%g", got[i], i < want.size() ? want[i] : -1.0);
    std::printf("\n");
  }
  expect(same, what);
}

/// Values of the test tensors: rank r's, as CPU tensors.
Tensor inputOf(int64_t r, Shape shape, DType t) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<double>((r + 1) * (i % 5 + 1) - (i % 3));
  Tensor x = from_vector(v, shape);
  return t == kBool ? x > 2.0 : x.to(t);
}

/// The collectives the fake NCCL ran in this process (-1: not the fake).
long ncclCalls() {
  static auto fn = [] {
    const char *lib = std::getenv("STRATA_NCCL_LIBRARY");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    return h ? reinterpret_cast<long (*)()>(
                   dlsym(h, "strataFakeNcclCollectives"))
             : nullptr;
  }();
  return fn ? fn() : -1;
}

/// Checks that `body` made `calls` NCCL collectives (under the fake).
template <typename F>
void expectNccl(const std::string &what, long calls, F &&body) {
  long before = ncclCalls();
  body();
  if (before >= 0)
    expect(ncclCalls() - before == calls,
           what + ": " + std::to_string(calls) + " NCCL collective(s)");
}

Tensor reducedOnCpu(dist::ReduceOp op, Shape shape, DType t) {
  Tensor acc = inputOf(0, shape, t).to(kFloat64);
  for (int64_t r = 1; r < gSize; ++r) {
    Tensor x = inputOf(r, shape, t).to(kFloat64);
    if (op == dist::ReduceOp::SUM || op == dist::ReduceOp::AVG)
      acc = t == kBool ? maximum(acc, x) : acc + x;
    else if (op == dist::ReduceOp::PRODUCT)
      acc = t == kBool ? minimum(acc, x) : acc * x;
    else if (op == dist::ReduceOp::MIN)
      acc = minimum(acc, x);
    else
      acc = maximum(acc, x);
  }
  return op == dist::ReduceOp::AVG ? acc / static_cast<double>(gSize) : acc;
}

void allReduces() {
  for (DType t : {kFloat32, kFloat64, kInt32, kInt64, kBool})
    for (auto op :
         {dist::ReduceOp::SUM, dist::ReduceOp::AVG, dist::ReduceOp::PRODUCT,
          dist::ReduceOp::MIN, dist::ReduceOp::MAX}) {
      if (op == dist::ReduceOp::AVG && !isFloatingPoint(t))
        continue;
      std::string name = "all_reduce " + toString(t) + " " + dist::toString(op);
      Tensor x = inputOf(gRank, {3, 5}, t).to(kCuda);
      expectNccl(name, 1, [&] { dist::all_reduce(x, op); });
      expect(x.device().is_cuda(), name + " stays on cuda:0");
      expectNear(name, x.to(kCPU).to(kFloat64).to_vector<double>(),
                 reducedOnCpu(op, {3, 5}, t).to_vector<double>());
    }
}

void viewsAndPending() {
  // A strided view of a CUDA tensor: packed, reduced, unpacked in place.
  Tensor base = full({6, 8}, -1.0, dtype(kFloat32).device(kCuda));
  Tensor view = base.t().slice(1, 0, 6, 2); // 8 x 3, strides (1, 16)
  view.copy_(inputOf(gRank, {8, 3}, kFloat32).to(kCuda));
  int64_t version = base._version();
  expectNccl("all_reduce strided view", 1, [&] { dist::all_reduce(view); });
  Tensor want = full({6, 8}, -1.0, dtype(kFloat64));
  want.t()
      .slice(1, 0, 6, 2)
      .copy_(reducedOnCpu(dist::ReduceOp::SUM, {8, 3}, kFloat32));
  expectNear("all_reduce strided view: the base",
             base.to(kCPU).to(kFloat64).to_vector<double>(),
             want.to_vector<double>());
  expect(base._version() > version, "a view's result is a recorded write");

  // A pending tensor; a reader recorded before sees the old values, an op
  // recorded after the reduced ones.
  Tensor x = inputOf(gRank, {10}, kFloat64).to(kCuda);
  Tensor pending = x * 2.0 + 1.0;
  Tensor before = pending * 1.0;
  dist::all_reduce(pending, dist::ReduceOp::MAX);
  Tensor after = pending - 1.0;
  Tensor wantMax = reducedOnCpu(dist::ReduceOp::MAX, {10}, kFloat64) * 2.0;
  expectNear("all_reduce pending", pending.to(kCPU).to_vector<double>(),
             (wantMax + 1.0).to_vector<double>());
  expectNear("a reader recorded before", before.to(kCPU).to_vector<double>(),
             (inputOf(gRank, {10}, kFloat64) * 2.0 + 1.0).to_vector<double>());
  expectNear("an op recorded after", after.to(kCPU).to_vector<double>(),
             wantMax.to_vector<double>());
}

void broadcastsAndGathers() {
  int64_t src = gSize - 1;
  Tensor t = inputOf(gRank, {3, 4}, kInt64).to(kCuda);
  expectNccl("broadcast", 1, [&] { dist::broadcast(t, src); });
  expectNear("broadcast", t.to(kCPU).to(kFloat64).to_vector<double>(),
             inputOf(src, {3, 4}, kFloat64).to_vector<double>());
  Tensor base = zeros({4, 6}, dtype(kFloat32).device(kCuda));
  Tensor view = base.slice(1, 1, 6, 2); // 4 x 3
  view.copy_(inputOf(gRank, {4, 3}, kFloat32).to(kCuda));
  dist::broadcast(view, 0);
  expectNear("broadcast strided view", view.to(kCPU).to_vector<double>(),
             inputOf(0, {4, 3}, kFloat64).to_vector<double>());
  expectNear("broadcast strided view: column 0",
             base.select(1, 0).to(kCPU).to_vector<double>(),
             std::vector<double>(4, 0.0));

  Tensor mine = inputOf(gRank, {2, 3}, kFloat32).to(kCuda) * 1.0f; // pending
  std::vector<Tensor> list;
  for (int64_t r = 0; r < gSize; ++r)
    list.push_back(zeros({2, 3}, dtype(kFloat32).device(kCuda)));
  expectNccl("all_gather", 1, [&] { dist::all_gather(list, mine); });
  for (int64_t r = 0; r < gSize; ++r)
    expectNear("all_gather [" + std::to_string(r) + "]",
               list[r].to(kCPU).to_vector<double>(),
               inputOf(r, {2, 3}, kFloat64).to_vector<double>());
  Tensor out = zeros({2 * gSize, 3}, dtype(kInt32).device(kCuda));
  Tensor in = inputOf(gRank, {3, 2}, kInt32).to(kCuda).t(); // a view
  dist::all_gather_into_tensor(out, in);
  std::vector<Tensor> parts;
  for (int64_t r = 0; r < gSize; ++r)
    parts.push_back(inputOf(r, {3, 2}, kFloat64).t());
  expectNear("all_gather_into_tensor", out.to(kCPU).to_vector<double>(),
             cat(parts, 0).to_vector<double>());

  for (auto op : {dist::ReduceOp::SUM, dist::ReduceOp::AVG}) {
    std::vector<Tensor> inputs;
    for (int64_t k = 0; k < gSize; ++k)
      inputs.push_back(
          (inputOf(gRank, {4}, kFloat32) * static_cast<float>(k + 1))
              .to(kCuda));
    Tensor o = zeros({2, 4}, dtype(kFloat32).device(kCuda)).select(0, 1);
    expectNccl("reduce_scatter", 1,
               [&] { dist::reduce_scatter(o, inputs, op); });
    expectNear(
        "reduce_scatter " + dist::toString(op), o.to(kCPU).to_vector<double>(),
        (reducedOnCpu(op, {4}, kFloat32) * static_cast<double>(gRank + 1))
            .to_vector<double>());
  }
}

void asyncAndMixed() {
  Tensor a = inputOf(gRank, {5}, kFloat32).to(kCuda);
  Tensor b = inputOf(gRank, {7}, kFloat64).to(kCuda);
  dist::Work wa = dist::all_reduce(a, dist::ReduceOp::SUM, true);
  dist::Work wb = dist::all_reduce(b, dist::ReduceOp::MIN, true);
  wb.wait();
  wa.wait();
  expect(wa.is_success() && wb.is_success(), "async all_reduce succeeded");
  expectNear(
      "async all_reduce (a)", a.to(kCPU).to_vector<double>(),
      reducedOnCpu(dist::ReduceOp::SUM, {5}, kFloat32).to_vector<double>());
  expectNear(
      "async all_reduce (b)", b.to(kCPU).to_vector<double>(),
      reducedOnCpu(dist::ReduceOp::MIN, {7}, kFloat64).to_vector<double>());

  // CPU tensors of an nccl group run on gloo.
  Tensor c = inputOf(gRank, {4}, kInt64);
  expectNccl("all_reduce of a CPU tensor", 0, [&] { dist::all_reduce(c); });
  expectNear(
      "all_reduce of a CPU tensor", c.to(kFloat64).to_vector<double>(),
      reducedOnCpu(dist::ReduceOp::SUM, {4}, kInt64).to_vector<double>());
  dist::barrier();

  // One collective's tensors on two devices: refused before any rank runs.
  std::vector<Tensor> list(gSize, zeros({2}));
  try {
    dist::all_gather(list, zeros({2}, dtype(kFloat32).device(kCuda)));
    expect(false, "all_gather over two devices throws");
  } catch (const Error &e) {
    expect(std::string(e.what()).find("every tensor must be on one device") !=
               std::string::npos,
           std::string("the two-device error, got: ") + e.what());
  }
}

/// A linear layer and tanh, its parameters on `device`.
struct Net : nn::Module {
  Tensor w, b;
  explicit Net(Device device) {
    w = register_parameter("w", inputOf(0, {4, 3}, kFloat32).to(device) * 0.1f);
    b = register_parameter("b", zeros({3}, dtype(kFloat32).device(device)));
  }
  Tensor forward(const Tensor &x) { return (x.matmul(w) + b).tanh(); }
};

/// A DDP step on CUDA: each rank starts from other parameters and its own
/// data; the gradients must be the average of each rank's gradient at rank
/// 0's parameters, computed here on the CPU.
void ddpStep() {
  auto net = std::make_shared<Net>(kCuda);
  {
    NoGradGuard g;
    net->w.copy_(net->w * static_cast<float>(gRank + 1)); // differ by rank
  }
  dist::DistributedDataParallel ddp(net);
  auto dataOf = [](int64_t r) { return inputOf(r, {5, 4}, kFloat32) * 0.05f; };
  Tensor loss = net->forward(dataOf(gRank).to(kCuda)).pow(2.0).mean();
  // One bucket, one NCCL all_reduce: started by the parameters' hooks in
  // backward() (a CUDA program runs them after it), waited for in
  // sync_gradients().
  expectNccl("backward and sync_gradients", 1, [&] {
    loss.backward();
    ddp.sync_gradients();
  });
  std::vector<double> wantW(12, 0.0), wantB(3, 0.0);
  for (int64_t r = 0; r < gSize; ++r) {
    Net cpu(kCPU); // rank 0's parameters
    cpu.forward(dataOf(r)).pow(2.0).mean().backward();
    std::vector<double> gw = cpu.w.grad().to_vector<double>(),
                        gb = cpu.b.grad().to_vector<double>();
    for (size_t i = 0; i < gw.size(); ++i)
      wantW[i] += gw[i] / static_cast<double>(gSize);
    for (size_t i = 0; i < gb.size(); ++i)
      wantB[i] += gb[i] / static_cast<double>(gSize);
  }
  expectNear("DDP: w's parameters are rank 0's",
             net->w.detach().to(kCPU).to_vector<double>(),
             Net(kCPU).w.detach().to_vector<double>());
  expectNear("DDP: w's gradient", net->w.grad().to(kCPU).to_vector<double>(),
             wantW, 1e-5);
  expectNear("DDP: b's gradient", net->b.grad().to(kCPU).to_vector<double>(),
             wantB, 1e-5);
}

/// The init_method: $STRATA_INIT_METHOD, else env://.
std::string initMethod() {
  const char *m = std::getenv("STRATA_INIT_METHOD");
  return m && *m ? m : "env://";
}

/// A fault MODE (run_fault.py): rank 1 misbehaves, rank 0 must get a
/// strata::Error within the timeout (nccl-init-hang: run_fault.py asks
/// the fake to hang rank 1's init; nccl-backend: rank 1 asks for gloo).
int fault(const std::string &mode, std::chrono::milliseconds timeout) {
  int64_t rank = -1;
  try {
    // nccl-backend: rank 1 asks for gloo (named at init on both ranks).
    const char *r = std::getenv("RANK");
    bool gloo = mode == "nccl-backend" && r && std::string(r) == "1";
    dist::init_process_group(gloo ? "gloo" : "nccl", initMethod(), timeout);
    rank = dist::get_rank();
    if (mode != "nccl-shape") // NCCL itself must notice
      dist::set_consistency_check(false);
    if (rank == 1 && mode == "nccl-exit-early")
      std::_Exit(0);
    if (rank == 1 && mode == "nccl-hang")
      std::this_thread::sleep_for(std::chrono::minutes(5));
    Tensor t = ones({rank == 1 && mode == "nccl-shape" ? 4 : 3},
                    dtype(kFloat32).device(kCuda));
    dist::all_reduce(t);
    std::printf("OK\n");
    return 0;
  } catch (const Error &e) {
    std::printf("rank %lld: strata::Error: %s\n", static_cast<long long>(rank),
                e.what());
    std::fflush(stdout);
    std::_Exit(1); // the aborted communicator may still hold a thread
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "collectives";
  if (mode != "collectives")
    return fault(
        mode, std::chrono::milliseconds(argc > 2 ? std::atoll(argv[2]) : 3000));
  try {
    dist::init_process_group("nccl", initMethod(), std::chrono::seconds(60));
    gRank = dist::get_rank();
    gSize = dist::get_world_size();
    expect(dist::get_backend() == "nccl", "get_backend() is nccl");
    allReduces();
    viewsAndPending();
    broadcastsAndGathers();
    asyncAndMixed();
    ddpStep();
    dist::destroy_process_group();
  } catch (const Error &e) {
    std::printf("FAIL strata::Error on rank %lld: %s\n",
                static_cast<long long>(gRank), e.what());
    return 1;
  }
  std::printf("rank %lld: %d checks passed%s\n", static_cast<long long>(gRank),
              gChecks - gFailures,
              gFailures ? (", " + std::to_string(gFailures) + " FAILED").c_str()
                        : "");
  return gFailures ? 1 : 0;
}
