//===- JitBandwidthWorkloads.h - the JIT issue's workloads ------*- C++ -*-===//
//
// Workloads (a)-(h) of the CPU JIT issue, (i) a.t().relu(), on 4096x4096 f32
// (and the channel shuffle of (32,256,56,56)), as strata IR text with
// contiguous f32 arguments. Shared by strata-bench-jit (against the STREAM
// baseline) and strata-bench-dsl (the same workloads through the fluent API vs
// this IR).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_BENCHMARKS_JITBANDWIDTHWORKLOADS_H
#define STRATA_BENCHMARKS_JITBANDWIDTHWORKLOADS_H

#include "ProgramBuilder.h"

#include <string>
#include <vector>

namespace strata::bench {

using strata::test::Program;
using strata::test::V;

enum class Base { Copy, Add, ReadSum };

struct Workload {
  std::string id, expr;
  std::string source;
  std::vector<std::vector<int64_t>> inputs; // contiguous f32 inputs
  double bytes;                             // useful traffic per run
  Base base;
};

inline std::string prog(Program &p, const std::vector<V> &results) {
  return p.text(results);
}

inline std::vector<Workload> workloads() {
  const int64_t n = 4096, nn = n * n;
  std::vector<Workload> w;
  {
    Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    w.push_back({"a",
                 "a + b (4096x4096)",
                 prog(p, {p.binary("add", a, b)}),
                 {{n, n}, {n, n}},
                 12.0 * nn,
                 Base::Add});
  }
  {
    Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    w.push_back({"b",
                 "a.t() + b",
                 prog(p, {p.binary("add", p.transpose(a, 0, 1), b)}),
                 {{n, n}, {n, n}},
                 12.0 * nn,
                 Base::Add});
  }
  {
    Program p;
    V a = p.arg({n, n});
    V m = p.binary("mul", a, p.scalar(2));
    V s = p.binary("add", m, p.scalar(1));
    w.push_back({"c",
                 "(a * 2 + 1).relu()",
                 prog(p, {p.unary("relu", s)}),
                 {{n, n}},
                 8.0 * nn,
                 Base::Copy});
  }
  {
    // The result keeps a.t()'s layout (TensorIterator): read and written
    // in storage order, a stream, not a transpose.
    Program p;
    V a = p.arg({n, n});
    w.push_back({"i",
                 "a.t().relu()",
                 prog(p, {p.unary("relu", p.transpose(a, 0, 1))}),
                 {{n, n}},
                 8.0 * nn,
                 Base::Copy});
  }
  {
    Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    V m = p.binary("mul", p.transpose(a, 0, 1), b);
    w.push_back({"d",
                 "(a.t() * b).sum()",
                 prog(p, {p.reduce("sum", m, {0, 1})}),
                 {{n, n}, {n, n}},
                 8.0 * nn + 4,
                 Base::ReadSum});
  }
  {
    Program p;
    V a = p.arg({n, n});
    w.push_back({"e",
                 "a.t().contiguous()",
                 prog(p, {p.contiguous(p.transpose(a, 0, 1))}),
                 {{n, n}},
                 8.0 * nn,
                 Base::Copy});
  }
  {
    const int64_t N = 32, C = 256, H = 56, W = 56, G = 4;
    Program p;
    V x = p.arg({N, C, H, W});
    V v = p.viewAs(x, {N, G, C / G, H, W});
    V t = p.transpose(v, 1, 2);
    V c = p.contiguous(t);
    V r = p.viewAs(c, {N, C, H, W});
    double m = double(N * C * H * W);
    w.push_back({"f",
                 "channel shuffle (32,256,56,56), g=4",
                 prog(p, {r}),
                 {{N, C, H, W}},
                 8.0 * m,
                 Base::Copy});
  }
  {
    Program p;
    V a = p.arg({n, 1}), b = p.arg({1, n});
    w.push_back({"g",
                 "a(4096,1) + b(1,4096)",
                 prog(p, {p.binary("add", a, b)}),
                 {{n, 1}, {1, n}},
                 4.0 * nn + 8.0 * n,
                 Base::Copy});
  }
  {
    Program p;
    V a = p.arg({n, n});
    w.push_back({"h0",
                 "a.sum(0) (4096x4096)",
                 prog(p, {p.reduce("sum", a, {0})}),
                 {{n, n}},
                 4.0 * nn + 4.0 * n,
                 Base::ReadSum});
  }
  {
    Program p;
    V a = p.arg({n, n});
    w.push_back({"h1",
                 "a.sum(1) (4096x4096)",
                 prog(p, {p.reduce("sum", a, {1})}),
                 {{n, n}},
                 4.0 * nn + 4.0 * n,
                 Base::ReadSum});
  }
  return w;
}

} // namespace strata::bench

#endif // STRATA_BENCHMARKS_JITBANDWIDTHWORKLOADS_H
