//===- AllreduceBench.cpp - strata's all_reduce against gloo's, direct ----===//
//
//   strata-launch --nproc-per-node 2 strata-bench-allreduce [--max-mb M]
//       [--markdown FILE]
//
// Every rank joins strata's group (env://) and, beside it, a gloo context of
// its own (a FileStore in /tmp keyed by MASTER_PORT) over the same TCP
// transport. For float32 messages of 4 KB .. 256 MB it times
// strata::distributed::all_reduce(t) (sum; with and without the
// consistency check) and gloo::allreduce on a plain buffer, one call of each
// in turn, in a rotating order; each figure is the median of the calls. Bus
// bandwidth as nccl-tests: bytes / time * 2 (n - 1) / n. Rank 0 prints the
// table (and writes it as markdown with --markdown).
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

} // namespace

int main(int argc, char **argv) {
  int64_t maxMb = 256;
  std::string markdown;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-mb" && i + 1 < argc)
      maxMb = std::atoll(argv[++i]);
    else if (a == "--markdown" && i + 1 < argc)
      markdown = argv[++i];
  }
  dist::init_process_group("gloo", "env://", std::chrono::seconds(120));
  int rank = static_cast<int>(dist::get_rank());
  int size = static_cast<int>(dist::get_world_size());

  // The direct gloo context: same transport, its own rendezvous.
  std::string dir =
      "/tmp/strata-bench-allreduce-" + std::string(std::getenv("MASTER_PORT"));
  if (rank == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  dist::barrier();
  gloo::rendezvous::FileStore store(dir);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(std::chrono::seconds(120));
  context->connectFullMesh(store, device);
  uint32_t tag = 1 << 20;

  struct Row {
    int64_t bytes;
    double gloo, strata, unchecked;
  };
  std::vector<Row> rows;
  for (int64_t bytes = 4096; bytes <= maxMb * 1024 * 1024; bytes *= 4) {
    int64_t n = bytes / 4;
    // Zeros: sums stay 0 (no infinities), the work is the same.
    std::vector<float> raw(static_cast<size_t>(n), 0.0f);
    Tensor t = zeros({n}, dtype(kFloat32));
    t.data_ptr(); // materialized once, as a gradient buffer would be
    int iters = bytes <= (1 << 20) ? 200 : bytes <= (16 << 20) ? 20 : 5;
    std::vector<double> g, s, u;
    // Interleaved, one call of each at a time: the machine's noise falls on
    // the three alike.
    auto direct = [&] {
      gloo::AllreduceOptions opts(context);
      opts.setOutput(raw.data(), raw.size());
      opts.setReduceFunction(
          static_cast<void (*)(void *, const void *, const void *, size_t)>(
              &gloo::sum<float>));
      opts.setTag(tag++);
      gloo::allreduce(opts);
    };
    auto checked = [&] {
      dist::set_consistency_check(true);
      dist::all_reduce(t);
    };
    auto unchecked = [&] {
      dist::set_consistency_check(false);
      dist::all_reduce(t);
    };
    std::function<void()> calls[3] = {direct, checked, unchecked};
    std::vector<double> *times[3] = {&g, &s, &u};
    for (int k = 0; k < iters; ++k) {
      // The order rotates, so each kind follows each other kind as often.
      for (int j = 0; j < 3; ++j) {
        int which = (j + k) % 3;
        auto start = Clock::now();
        calls[which]();
        times[which]->push_back(seconds(start));
      }
    }
    dist::set_consistency_check(true);
    rows.push_back({bytes, median(g), median(s), median(u)});
  }

  if (rank == 0) {
    auto busbw = [&](int64_t bytes, double t) {
      return static_cast<double>(bytes) / t * 2.0 * (size - 1) / size / 1e9;
    };
    std::string table =
        "| size | gloo direct | strata all_reduce | overhead | strata, no "
        "check | overhead | bus GB/s (gloo / strata) |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Row &r : rows) {
      char line[512];
      std::string sz = r.bytes >= (1 << 20)
                           ? std::to_string(r.bytes >> 20) + " MB"
                           : std::to_string(r.bytes >> 10) + " KB";
      std::snprintf(line, sizeof line,
                    "| %s | %.1f us | %.1f us | %+.1f%% | %.1f us | %+.1f%% | "
                    "%.2f / %.2f |\n",
                    sz.c_str(), r.gloo * 1e6, r.strata * 1e6,
                    100.0 * (r.strata / r.gloo - 1), r.unchecked * 1e6,
                    100.0 * (r.unchecked / r.gloo - 1), busbw(r.bytes, r.gloo),
                    busbw(r.bytes, r.strata));
      table += line;
    }
    std::printf("all_reduce (sum, float32) on %d ranks, medians:\n%s", size,
                table.c_str());
    if (!markdown.empty())
      std::ofstream(markdown) << table;
    std::filesystem::remove_all(dir);
  }
  dist::barrier();
  dist::destroy_process_group();
  return 0;
}
