//===- LinearCostTest.cpp - long programs compile a bounded set of kernels ===//
//
// The cost guards of docs/performance.md "Cost against program length",
// checked by counts, not by time: a long program is cut into pieces of one
// structure (pending chains at kMaxPendingDepth, kernel bodies at 512 ops
// or 32 outside values by --strata-split-kernels), so the number of distinct
// programs and kernels built stays bounded while the program grows; every
// result is checked against the same recurrence computed in the test.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace strata;

namespace {

/// Kernels built (compiled, or loaded from the disk cache) since `reset`.
int64_t kernelsBuilt() {
  jit::CacheStats s = jit::cacheStats();
  return s.compiles + s.diskHits;
}
void reset() {
  jit::clearMemoryCache();
  jit::resetCacheStats();
  reset_eval_stats();
}

/// y = x; n times y = y * 0.5 or y + 1 (alternating).
float chainValue(float x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x = (i % 2 == 0) ? x * 0.5f : x + 1.0f;
  return x;
}

TEST(LinearCost, LongChainBuildsABoundedSetOfKernels) {
  for (int64_t n : {2000, 40000}) {
    reset();
    Tensor y = arange(8).to(kFloat32);
    for (int64_t i = 0; i < n; ++i)
      y = (i % 2 == 0) ? y * 0.5 : y + 1.0;
    std::vector<float> got = y.to_vector<float>();
    for (int64_t e = 0; e < 8; ++e)
      EXPECT_NEAR(got[e], chainValue(static_cast<float>(e), n), 1e-5)
          << "n=" << n << " element " << e;
    EvalStats st = eval_stats();
    // 40,000 ops run as 10 programs of at most 4,000 pending ops; those
    // after the first two have one structure (program-cache hits).
    EXPECT_LE(st.compiles, 3) << "n=" << n;
    // Each program's kernel is cut into pieces (at most 512 ops reading
    // at most 32 values from outside: here 32 scalars), which are one
    // kernel (one build) but for the first and last pieces.
    EXPECT_LE(kernelsBuilt(), 8) << "n=" << n;
    if (n == 40000) {
      EXPECT_GE(st.kernels, 40000 / 512) << "kernels were not split";
    }
  }
}

TEST(LinearCost, KernelsOfManyInputsAreCutAndStayRight) {
  // One fused kernel reading 60 tensors (strided, transposed, broadcast
  // views) and 120 scalars, ending in a sum over rows: cut into pieces of
  // at most 32 outside values (--strata-split-kernels max-inputs), the
  // last keeping the reduction. Checked against the same f32 recurrence
  // in plain C++ (elementwise bit for bit; the sum in double, to 1e-5).
  const int64_t rows = 5, cols = 7, numInputs = 60;
  std::vector<Tensor> ins;
  std::vector<std::vector<float>> vals; // row-major [rows][cols] each
  for (int64_t k = 0; k < numInputs; ++k) {
    Tensor base = arange(rows * cols * 2).to(kFloat32) * (0.01 * (k + 1));
    Tensor v;
    switch (k % 3) {
    case 0: // every other element: stride 2
      v = base.view({rows, cols * 2}).narrow(1, 1, cols);
      break;
    case 1: // a transposed view
      v = base.narrow(0, 0, rows * cols).view({cols, rows}).t();
      break;
    default: // a broadcast row
      v = base.narrow(0, k, cols).expand({rows, cols});
    }
    ins.push_back(v);
    vals.push_back(v.contiguous().to_vector<float>());
  }
  Tensor y = zeros({rows, cols});
  std::vector<float> want(rows * cols, 0.0f);
  for (int64_t k = 0; k < numInputs; ++k) {
    double a = 1.0 + 0.001 * k, b = 0.5 / (k + 1);
    y = (y * a + ins[k]) - b;
    for (int64_t e = 0; e < rows * cols; ++e)
      want[e] = (want[e] * static_cast<float>(a) + vals[k][e]) -
                static_cast<float>(b);
  }
  reset();
  Tensor rowSums = y.sum(1);
  std::vector<float> got = rowSums.to_vector<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double w = 0;
    for (int64_t c = 0; c < cols; ++c)
      w += want[r * cols + c];
    EXPECT_NEAR(got[r], w, 1e-5 * std::fabs(w)) << "row " << r;
  }
  EXPECT_GE(eval_stats().kernels, (numInputs + 2 * numInputs) / 32)
      << "the kernel was not cut";
  std::vector<float> all = y.to_vector<float>();
  EXPECT_EQ(all, want);
}

TEST(LinearCost, DeepBackwardBuildsABoundedSetOfKernels) {
  for (int64_t n : {1000, 6000}) {
    reset();
    double c = 1.0 - 1.0 / static_cast<double>(n);
    Tensor x = ones({8}, TensorOptions().requires_grad(true));
    Tensor y = x;
    for (int64_t i = 0; i < n; ++i)
      y = y * c;
    y.sum().backward();
    std::vector<float> got = x.grad().to_vector<float>();
    float want = 1.0f;
    for (int64_t i = 0; i < n; ++i)
      want *= static_cast<float>(c);
    for (float v : got)
      EXPECT_NEAR(v, want, 1e-4) << "n=" << n;
    // Gradient programs of 128-op segments of one structure (a structure
    // seen before: one program whose long kernels are cut into pieces of
    // one structure), so the kernels built do not grow with n while the
    // kernels run do.
    EXPECT_LE(kernelsBuilt(), 10) << "n=" << n;
    EXPECT_GE(eval_stats().kernels, n / 512) << "kernels were not split";
  }
}

TEST(LinearCost, LongBackwardsRunInSegmentsEveryStep) {
  // A training loop's graph of more than 4,096 ops: every step's backward
  // runs in segments (found prepared after the first), never as one
  // program compiled whole at the second step (10 s at 10^5 ops).
  const int64_t n = 6000;
  const double c = 1.0 - 1.0 / static_cast<double>(n);
  float want = 1.0f;
  for (int64_t i = 0; i < n; ++i)
    want *= static_cast<float>(c);
  reset();
  for (int step = 0; step < 3; ++step) {
    int64_t segments = backward_segments();
    reset_eval_stats();
    Tensor x = ones({8}, TensorOptions().requires_grad(true));
    Tensor y = x;
    for (int64_t i = 0; i < n; ++i)
      y = y * c;
    y.sum().backward();
    for (float v : x.grad().to_vector<float>())
      EXPECT_NEAR(v, want, 1e-4) << "step " << step;
    EXPECT_GE(backward_segments(), segments + 2) << "step " << step;
    if (step > 0) {
      EXPECT_EQ(eval_stats().compiles, 0) << "step " << step;
    }
  }
}

TEST(LinearCost, BackwardThroughInPlaceChains) {
  // h.mul_(c).add_(d) n times with history, then backward: each write
  // replaces h's whole storage and is read back as written, so the
  // gradient program differentiates the out-of-place chain (no write and
  // zero-fill kernels per op: 8 kernels a pair before, 1,000 pairs were
  // 8,000 kernels). Checked against the closed form c^n.
  // (The first backward of a long graph's structure runs in segments, the
  // next as one program if it has at most 4,096 ops requiring grad:
  // docs/design.md "Deep programs". The one program is checked here;
  // SegmentedBackwardTest.cpp checks the segments.)
  const int64_t n = 1000;
  const double c = 0.9999;
  for (int pass = 0; pass < 2; ++pass) {
    reset();
    int64_t segments = backward_segments();
    Tensor x = ones({16}, TensorOptions().requires_grad(true));
    Tensor h = x * 1.0;
    for (int64_t i = 0; i < n; ++i)
      h.mul_(c).add_(0.001);
    h.sum().backward();
    double want = std::pow(static_cast<double>(static_cast<float>(c)), n);
    for (float v : x.grad().to_vector<float>())
      EXPECT_NEAR(v, want, 1e-4);
    if (pass == 1) {
      EXPECT_EQ(backward_segments(), segments) << "not one program";
      // Each op's scalar is an argument and a kernel piece reads at most
      // 32 (--strata-split-kernels max-inputs): about 4n / 32 pieces, far
      // below the 8 kernels per pair of re-emitted writes.
      EXPECT_LE(eval_stats().kernels, n / 4) << "writes were re-emitted";
    }
  }
  // A partial write keeps its write (and the zeroed gradient under it).
  Tensor y = ones({4}, TensorOptions().requires_grad(true));
  Tensor k = y * 2.0;
  k.narrow(0, 1, 2).mul_(3.0);
  k.sum().backward();
  std::vector<float> g = y.grad().to_vector<float>();
  EXPECT_EQ(g, (std::vector<float>{2, 6, 6, 2}));
}

TEST(LinearCost, ManyPendingWritesOfOneRoot) {
  // 12,000 pending add_ on one tensor, read once: the writes are cut into
  // programs at kMaxPendingDepth and each root's readers are scanned once.
  reset();
  Tensor x = zeros({8});
  for (int i = 0; i < 12000; ++i)
    x.add_(1);
  for (float v : x.to_vector<float>())
    EXPECT_EQ(v, 12000.0f);
  EXPECT_LE(eval_stats().compiles, 3);
}

TEST(LinearCost, ReadOfADeepChainRequiringGradRunsInPieces) {
  // h = x * 1; 30,000 in-place writes with history, then h read without a
  // backward (and after one): the chain is not cut when recorded (it
  // requires grad), so reading it evaluates its nodes at each multiple of
  // kMaxPendingDepth first (evaluateDeepInPieces). One program of the
  // whole chain compiled ~30 µs an op (10^5 writes: 6.7 s, ~1 GB): here a
  // few programs, and the value and gradient of the recurrence.
  const int64_t n = 30000;
  for (int backwardFirst = 0; backwardFirst < 2; ++backwardFirst) {
    reset();
    Tensor x = ones({4}, TensorOptions().requires_grad(true));
    Tensor h = x * 1.0;
    for (int64_t i = 0; i < n; ++i)
      (i % 2 == 0) ? h.add_(1.0) : h.mul_(1.0);
    if (backwardFirst)
      h.sum().backward();
    for (float v : h.to_vector<float>())
      EXPECT_EQ(v, static_cast<float>(1 + n / 2));
    // (In one program each write was a kernel of its own: 60,002 run.)
    if (!backwardFirst) {
      EXPECT_LE(eval_stats().kernels, n / 10) << "not cut into pieces";
    }
    EXPECT_LE(eval_stats().compiles, 20);
    if (!backwardFirst)
      h.sum().backward();
    for (float v : x.grad().to_vector<float>())
      EXPECT_EQ(v, 1.0f);
  }
}

TEST(LinearCost, DeepChainRequiringGradReadAgainAfterAnEvaluation) {
  // Read once (h gets a home buffer), then 4,500 more writes with grad and
  // read again: a level's program writes over the home and takes in the
  // chain's pending readers, whose levels included the level itself (a
  // recursion without end: a crash). Checked against the recurrence, and
  // the gradient.
  reset();
  Tensor x = ones({3}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  double want = 1;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4500; ++i) {
      h.add_(0.001);
      want += 0.001;
    }
    for (float v : h.to_vector<float>())
      EXPECT_NEAR(v, want, 1e-3);
  }
  h.sum().backward();
  for (float v : x.grad().to_vector<float>())
    EXPECT_EQ(v, 1.0f);
}

TEST(LinearCost, DeepChainRequiringGradReadEveryTenThousandWrites) {
  // From its second read on, h has a home buffer: a level's program wrote
  // over it and so took in every pending reader of an older version, the
  // whole chain so far (10^5 writes read every 30,000: 15.7 s, 2.6 GB).
  // A level now writes a copy of the home, and a reader of an older
  // pending version reads no home. Checked against the recurrence, and
  // the gradient.
  const int64_t n = 40000, every = 10000;
  reset();
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int64_t i = 0; i < n; ++i) {
    (i % 2 == 0) ? h.add_(1.0) : h.mul_(1.0);
    if ((i + 1) % every == 0) {
      for (float v : h.to_vector<float>())
        ASSERT_EQ(v, static_cast<float>(1 + (i + 2) / 2)) << "after " << i;
    }
  }
  // (Taking the whole chain in: 28,000 kernels by the fourth read.)
  EXPECT_LE(eval_stats().kernels, n / 10) << "a level took the chain in";
  h.sum().backward();
  for (float v : x.grad().to_vector<float>())
    EXPECT_EQ(v, 1.0f);
}

TEST(LinearCost, TwoInterleavedChainsReadInPieces) {
  // a.mul_(c); b.add_(a * d) for 6,000 steps, both read together (eval)
  // every 3,000: b's chain grows twice as deep a step as a's, so pieces
  // cut by depth alone mixed steps of both; they are cut along the
  // deepest path in recording order now. Values and gradients against the
  // recurrence (double): a_k = a_{k-1} c, b_k = b_{k-1} + a_k d, so with
  // x = 1: da_n/dx = c^n, db_n/dx = 2 + d sum_k c^k.
  const int n = 6000;
  const double c0 = 0.9999, d = 0.001;
  reset();
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor a = x * 1.0, b = x * 2.0;
  eval({a, b});
  double av = 1, bv = 2, dbdx = 2;
  for (int i = 0; i < n; ++i) {
    a.mul_(c0);
    b.add_(a * d);
    av *= c0;
    bv += av * d;
    dbdx += std::pow(c0, i + 1) * d;
    if ((i + 1) % 3000 == 0) {
      eval({a, b});
      ASSERT_NEAR(a.to_vector<float>()[0], av, 1e-4) << "step " << i;
      // (6,000 float additions to ~6: a few 1e-4 of rounding.)
      ASSERT_NEAR(b.to_vector<float>()[0], bv, 1e-3) << "step " << i;
    }
  }
  (a + b).sum().backward();
  for (float v : x.grad().to_vector<float>())
    EXPECT_NEAR(v, std::pow(c0, n) + dbdx, 1e-3);
  EXPECT_LE(eval_stats().compiles, 40);
}

TEST(LinearCost, DeepChainOverAVersionSavedForBackward) {
  // h's version in its home buffer is saved by h.mul_(w) (PyTorch saves the
  // original of an in-place op's destination for w's gradient), then
  // 20,000 writes with grad and a read: the levels' programs and the last
  // one, which copies the result into the home, keep that version's data.
  reset();
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor w = full({4}, 2.0, TensorOptions().requires_grad(true));
  Tensor h = x * 3.0;
  h.to_vector<float>(); // (h's home buffer holds 3)
  h.mul_(w);
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    h.add_(1.0);
  for (float v : h.to_vector<float>())
    EXPECT_EQ(v, 6.0f + n);
  h.sum().backward();
  for (float v : w.grad().to_vector<float>())
    EXPECT_EQ(v, 3.0f) << "the saved version was written over";
  for (float v : x.grad().to_vector<float>())
    EXPECT_EQ(v, 6.0f);
}

TEST(LinearCost, BackwardOfAChainReadEveryTenSteps) {
  // Each read evaluated h into its home buffer, which the next writes took
  // over: the versions read are gone, and a segment plan whose boundaries
  // they were fell back to one program of the whole graph (~80 µs an op:
  // 10^5 steps took 9.2 s, 2.2 GB). No formula here reads them: segments.
  const int64_t n = 20000;
  reset();
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int64_t i = 0; i < n; ++i) {
    (i % 2 == 0) ? h.add_(1.0) : h.mul_(1.0);
    if ((i + 1) % 10 == 0) {
      ASSERT_EQ(h.to_vector<float>()[0], static_cast<float>(1 + (i + 2) / 2));
    }
  }
  int64_t segments = backward_segments();
  h.sum().backward();
  EXPECT_GE(backward_segments(), segments + 2) << "not run in segments";
  for (float v : x.grad().to_vector<float>())
    EXPECT_EQ(v, 1.0f);
}

TEST(LinearCost, BackwardOfAChainReadEveryTenStepsWhoseValuesAreSaved) {
  // As above, but h.mul_(c) saves each old h for c's gradient: those
  // versions keep their values, and the gradients are the closed forms
  // (x = 1): h = c^n, dh/dc = n c^(n-1), dh/dx = c^n.
  const int n = 3000;
  const double c0 = 1.0001;
  reset();
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor c = full({4}, c0, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int i = 0; i < n; ++i) {
    h.mul_(c);
    if ((i + 1) % 10 == 0) {
      ASSERT_NEAR(h.to_vector<float>()[0], std::pow(c0, i + 1), 1e-3);
    }
  }
  h.sum().backward();
  for (float v : c.grad().to_vector<float>())
    EXPECT_NEAR(v, n * std::pow(c0, n - 1), 1e-3 * n);
  for (float v : x.grad().to_vector<float>())
    EXPECT_NEAR(v, std::pow(c0, n), 1e-3);
}

TEST(LinearCost, GradOfALongChainRunsInSegments) {
  // grad() ran one program of the whole graph (~30 µs an op: 3 s at 10^5
  // writes, where backward() took 0.2 s). With every leaf reached asked
  // for, it runs in segments as backward() does, and writes no .grad.
  // Closed forms: h_k = h_{k-1} c + d, dh/dx = c^n, dh/dc = sum_k h_{k-1}
  // c^(n-k).
  const int n = 2000;
  const double c0 = 0.999, d = 0.01;
  std::vector<double> hs(1, 1.0);
  for (int i = 1; i < n; ++i)
    hs.push_back(hs.back() * c0 + d);
  double dc = 0;
  for (int k = 1; k <= n; ++k)
    dc += hs[k - 1] * std::pow(c0, n - k);
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor c = full({4}, c0, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int i = 0; i < n; ++i) {
    h.mul_(c);
    h.add_(d);
  }
  int64_t segments = backward_segments(), templates = backward_templates();
  std::vector<Tensor> g = grad({h.sum()}, {c, x});
  EXPECT_GE(backward_segments(), segments + 2) << "not run in segments";
  // (Its segments of one structure found one template: grad()'s targets,
  // given, are in the template's key.)
  EXPECT_GE(backward_templates(), templates + 10);
  for (float v : g[0].to_vector<float>())
    EXPECT_NEAR(v, dc, 1e-3 * dc);
  for (float v : g[1].to_vector<float>())
    EXPECT_NEAR(v, std::pow(c0, n), 1e-4);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(c.grad().defined());
  EXPECT_THROW(grad({h.sum()}, {x, c}), Error) << "the graph was freed";
}

TEST(LinearCost, GradOfALongGraphLeavesOutPathsToLeavesNotAskedFor) {
  // PyTorch's grad() differentiates only the paths to its inputs: an
  // exp() whose result was written since is on a path to w alone, so
  // grad(y, {x}) does not raise. Its segments differentiate those paths
  // too (each gets the inputs and the boundaries reaching them as
  // targets): one program of a long graph took ~0.2 ms an op.
  Tensor x = ones({4}, TensorOptions().requires_grad(true));
  Tensor w = ones({4}, TensorOptions().requires_grad(true));
  auto loss = [&] {
    Tensor h = x * 1.0;
    for (int i = 0; i < 1000; ++i)
      h.add_(0.001);
    Tensor a = w.exp();
    a.add_(1);
    return h.sum() + a.sum();
  };
  Tensor y = loss();
  int64_t segments = backward_segments();
  std::vector<Tensor> g = grad({y}, {x});
  EXPECT_GE(backward_segments(), segments + 2) << "not run in segments";
  for (float v : g[0].to_vector<float>())
    EXPECT_EQ(v, 1.0f);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  try {
    loss().backward();
    ADD_FAILURE() << "backward() differentiates the exp: it raises";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"),
              std::string::npos)
        << e.what();
  }
}

// One storage written, read or assembled at thousands of offsets in one
// program: each piece is a one-loop kernel at its own offset, which is
// loaded at run time (dynamic), so the pieces share a few kernels instead
// of one each (3000 writes once built 3000 kernels: ~10 s).
TEST(LinearCost, ManyOffsetsOfOneStorageShareKernels) {
  const int n = 3000;
  reset();
  Tensor x = zeros({n, 2});
  for (int i = 0; i < n; ++i)
    x.narrow(0, i, 1).add_(double(i % 7));
  std::vector<float> got = x.to_vector<float>();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(got[2 * i + 1], float(i % 7)) << "row " << i;
  EXPECT_LE(kernelsBuilt(), 8);
  // The rows of a pending result assembled by stack, and a cat of pieces.
  reset();
  Tensor y = arange(n * 3).to(kFloat32).view({n, 3}) * 2;
  std::vector<Tensor> rows;
  for (int i = 0; i < n; ++i)
    rows.push_back(y.select(0, i) + 1);
  std::vector<float> stacked = stack(rows).to_vector<float>();
  std::vector<float> joined = cat(rows).to_vector<float>();
  for (int e = 0; e < n * 3; e += 7) {
    ASSERT_EQ(stacked[e], float(e) * 2 + 1) << "element " << e;
    ASSERT_EQ(joined[e], float(e) * 2 + 1) << "element " << e;
  }
  EXPECT_LE(kernelsBuilt(), 16);
}

TEST(LinearCost, WideEvalOfIndependentOutputs) {
  // One eval() of 20,000 outputs runs as programs of at most 512 roots of
  // one structure (scalars are arguments): three prepares (the first
  // chunk, which also computes the pending `x`; the later ones, which read
  // it; the shorter last one), each output its own value.
  reset();
  Tensor x = arange(4).to(kFloat32);
  std::vector<Tensor> outs;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    outs.push_back(x * double(i));
  eval(outs);
  EXPECT_EQ(eval_stats().programs, (n + 511) / 512);
  EXPECT_LE(eval_stats().compiles, 3);
  for (int i = 0; i < n; i += 997) {
    std::vector<float> got = outs[i].to_vector<float>();
    for (int e = 0; e < 4; ++e)
      EXPECT_EQ(got[e], float(i) * e) << "output " << i;
  }
}

TEST(LinearCost, WideEvalSharingAPendingInput) {
  // The outputs share a pending intermediate: the first program writes it
  // (read outside that program), the later ones read it; nothing is
  // computed twice or lost between the programs.
  reset();
  Tensor x = arange(8).to(kFloat64);
  Tensor y = (x * 3.0).exp().log(); // pending, shared by every output
  std::vector<Tensor> outs;
  const int n = 1500;
  for (int i = 0; i < n; ++i)
    outs.push_back(y + double(i));
  eval(outs);
  EXPECT_EQ(eval_stats().programs, 3);
  for (int i = 0; i < n; i += 149) {
    std::vector<double> got = outs[i].to_vector<double>();
    for (int e = 0; e < 8; ++e)
      EXPECT_NEAR(got[e], 3.0 * e + i, 1e-9) << "output " << i;
  }
}

} // namespace
