//===- ThreadTest.cpp - 8 threads recording and evaluating at once --------===//
//
// Eight threads record and evaluate the same programs (views, broadcasts,
// reductions, an in-place write through a view, matmul) on their own
// tensors, all at once. Each result is compared with a plain C++ loop; each
// program must be prepared once by the DSL and each kernel compiled once by
// the JIT, also when eight threads compile the same sources through the JIT
// directly; and eight threads run backward() at once. Built and run under
// ThreadSanitizer by `make test-tsan` (docs/reliability.md); in the ordinary
// builds it is a plain ctest.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

using namespace strata;

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;
constexpr int kPrograms = 4;
constexpr int64_t kR = 4, kC = 3; // a: kR x kC, b: kC x kR

/// Row-major inputs that differ per thread and round.
std::vector<float> input(int thread, int round, int which, int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(
        std::sin(0.7 * i + 1.3 * which + 0.31 * thread + 0.17 * round) * 4);
  return v;
}

/// Program p on a (kR x kC) and b (kC x kR); the result as a flat vector.
/// `record` builds it with strata, `reference` with loops.
Tensor record(int p, const Tensor &a, const Tensor &b) {
  switch (p) {
  case 0: // sum over rows of relu(a^T + b): kR values
    return (a.t() + b).relu().sum({0});
  case 1: // max over columns of a * 2.5 - b^T: kR values
    return (a * 2.5 - b.t()).amax({1});
  case 2: { // rows 1..2 of a clone of a, plus rows 0..1 of b^T, in place
    Tensor c = a.clone();
    c.narrow(0, 1, 2).add_(b.t().narrow(0, 0, 2));
    return c;
  }
  default: // a @ b: kR x kR
    return matmul(a, b);
  }
}

std::vector<double> reference(int p, const std::vector<float> &a,
                              const std::vector<float> &b) {
  auto A = [&](int64_t i, int64_t j) { return double(a[i * kC + j]); };
  auto B = [&](int64_t i, int64_t j) { return double(b[i * kR + j]); };
  std::vector<double> out;
  switch (p) {
  case 0:
    for (int64_t j = 0; j < kR; ++j) {
      double s = 0;
      for (int64_t i = 0; i < kC; ++i)
        s += std::max(0.0, A(j, i) + B(i, j));
      out.push_back(s);
    }
    break;
  case 1:
    for (int64_t i = 0; i < kR; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < kC; ++j)
        m = std::max(m, double(float(A(i, j) * 2.5f)) - B(j, i));
      out.push_back(m);
    }
    break;
  case 2:
    for (int64_t i = 0; i < kR; ++i)
      for (int64_t j = 0; j < kC; ++j)
        out.push_back(A(i, j) + (i == 1 || i == 2 ? B(j, i - 1) : 0.0));
    break;
  default:
    for (int64_t i = 0; i < kR; ++i)
      for (int64_t j = 0; j < kR; ++j) {
        double s = 0;
        for (int64_t k = 0; k < kC; ++k)
          s += A(i, k) * B(k, j);
        out.push_back(s);
      }
    break;
  }
  return out;
}

/// The program sources the DSL prepared (one per program).
std::vector<std::string> programSources() {
  std::vector<std::string> sources;
  for (int p = 0; p < kPrograms; ++p) {
    Tensor a = from_vector(input(0, 0, 0, kR * kC), {kR, kC});
    Tensor b = from_vector(input(0, 0, 1, kC * kR), {kC, kR});
    sources.push_back(dump_ir({record(p, a, b)}).before);
  }
  return sources;
}

struct KernelCount {
  int64_t distinct = 0; // kernels compiled by a serial run of every source
  int64_t lookups = 0;  // kernels over all sources
};

/// Compiles every source once, serially, from an empty kernel cache.
KernelCount countSerially(const std::vector<std::string> &sources) {
  jit::clearMemoryCache();
  jit::resetCacheStats();
  KernelCount count;
  for (const std::string &source : sources) {
    std::string error;
    auto fn = jit::PreparedFunction::fromSource(source, "main", error);
    EXPECT_TRUE(fn) << error;
  }
  // (A matrix product BLAS runs compiles nothing: not every kernel of a
  // program is looked up.)
  jit::CacheStats stats = jit::cacheStats();
  count.distinct = stats.compiles;
  count.lookups = stats.compiles + stats.memoryHits;
  return count;
}

/// Runs body(t) on kThreads threads released together; returns when all
/// have finished.
void runAtOnce(const std::function<void(int)> &body) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  for (std::thread &th : threads)
    th.join();
}

/// Records and evaluates program p on thread t's inputs of `round`; true
/// when every element matches the loops within `rtol` (relative).
bool programMatches(int p, int t, int round, double rtol) {
  auto av = input(t, round, 0, kR * kC);
  auto bv = input(t, round, 1, kC * kR);
  Tensor a = from_vector(av, {kR, kC});
  Tensor b = from_vector(bv, {kC, kR});
  std::vector<float> got = record(p, a, b).to_vector<float>();
  std::vector<double> want = reference(p, av, bv);
  bool same = got.size() == want.size();
  for (size_t k = 0; same && k < got.size(); ++k)
    same = std::abs(got[k] - want[k]) <= rtol * (1 + std::abs(want[k]));
  return same;
}

class Threads : public ::testing::Test {
protected:
  void SetUp() override {
    jit::setCacheDir(""); // every miss compiles: the counter sees them all
    jit::clearMemoryCache();
    jit::resetCacheStats();
    reset_eval_stats();
  }
};

TEST_F(Threads, EightThreadsRecordAndEvaluateTheSamePrograms) {
  std::atomic<int> mismatches{0}, errors{0};
  runAtOnce([&](int t) { // all threads record at once
    for (int round = 0; round < kRounds; ++round)
      for (int i = 0; i < kPrograms; ++i) {
        int p = (i + t) % kPrograms; // threads meet programs in any order
        try {
          mismatches += !programMatches(p, t, round, 1e-5);
        } catch (const Error &e) {
          ++errors;
          ADD_FAILURE() << "thread " << t << " program " << p << ": "
                        << e.what();
        }
      }
  });
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);

  EvalStats stats = eval_stats();
  EXPECT_EQ(stats.programs, kThreads * kRounds * kPrograms);
  EXPECT_EQ(stats.compiles, kPrograms) << "each program prepared once";
  EXPECT_EQ(stats.cacheHits, kThreads * kRounds * kPrograms - kPrograms);
  int64_t compiledConcurrently = jit::cacheStats().compiles;

  KernelCount serial = countSerially(programSources());
  EXPECT_GT(serial.distinct, 0);
  EXPECT_EQ(compiledConcurrently, serial.distinct)
      << "each kernel compiled once";
}

TEST_F(Threads, EightThreadsRunBackwardAtOnce) {
  // Each thread: loss = (x * w).relu().sum() + (x.t() * 0.5).sum() on its
  // own leaves, backward(), and the gradients against their closed form
  // (d/dx = w * [x*w > 0] + 0.5, d/dw = x * [x*w > 0]); and a retained
  // non-leaf's gradient (ones). The gradient program is prepared once.
  int64_t compilesBefore = backward_compiles();
  std::atomic<int> mismatches{0}, errors{0};
  runAtOnce([&](int t) {
    for (int round = 0; round < kRounds; ++round) {
      auto xv = input(t, round, 0, kR * kC);
      auto wv = input(t, round, 1, kR * kC);
      try {
        Tensor x = from_vector(xv, {kR, kC}).requires_grad_();
        Tensor w = from_vector(wv, {kR, kC}).requires_grad_();
        Tensor h = (x * w).relu();
        h.retain_grad();
        Tensor loss = h.sum() + (x.t() * 0.5).sum();
        loss.backward();
        std::vector<float> gx = x.grad().to_vector<float>();
        std::vector<float> gw = w.grad().to_vector<float>();
        std::vector<float> gh = h.grad().to_vector<float>();
        bool same = gx.size() == xv.size() && gw.size() == wv.size() &&
                    gh.size() == xv.size();
        for (size_t k = 0; same && k < xv.size(); ++k) {
          double on = xv[k] * wv[k] > 0 ? 1 : 0;
          same = std::abs(gx[k] - (wv[k] * on + 0.5)) <= 1e-5 &&
                 std::abs(gw[k] - xv[k] * on) <= 1e-5 && gh[k] == 1.0f;
        }
        mismatches += !same;
      } catch (const Error &e) {
        ++errors;
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    }
  });
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(backward_compiles() - compilesBefore, 1)
      << "the gradient program prepared once";
}

TEST_F(Threads, EightThreadsCompileTheSameKernelsOnce) {
  std::vector<std::string> sources = programSources();
  KernelCount serial = countSerially(sources);
  ASSERT_GT(serial.distinct, 0);

  jit::clearMemoryCache();
  jit::resetCacheStats();
  std::atomic<int> failures{0};
  runAtOnce([&](int t) {
    for (size_t i = 0; i < sources.size(); ++i) {
      std::string error;
      auto fn = jit::PreparedFunction::fromSource(
          sources[(i + t) % sources.size()], "main", error);
      failures += !fn;
    }
  });
  EXPECT_EQ(failures.load(), 0);
  jit::CacheStats stats = jit::cacheStats();
  EXPECT_EQ(stats.compiles, serial.distinct) << "each kernel compiled once";
  EXPECT_EQ(stats.compiles + stats.memoryHits, kThreads * serial.lookups);
}

// Views of pending results at offsets that change (Slice::offsetsVary's
// table, shared by the threads), writes at many offsets in one program
// (dynamic one-loop kernels) and an optimizer step with the loss alive
// (the old version keeps its data: SliceReaders.cpp), on 8 threads at
// once, each value against plain C++.
TEST_F(Threads, EightThreadsViewPendingResultsAtRandomOffsets) {
  std::atomic<int> mismatches{0}, errors{0};
  runAtOnce([&](int t) {
    try {
      const int64_t rows = 40, cols = 6, batch = 5;
      std::vector<float> xv = input(t, 0, 0, rows * cols);
      Tensor x = from_vector(xv, {rows, cols});
      for (int step = 0; step < 12; ++step) {
        int64_t k = (step * 7 + t) % (rows - batch);
        std::vector<float> got =
            (x * 2 + 1).narrow(0, k, batch).sum({1}).to_vector<float>();
        for (int64_t r = 0; r < batch; ++r) {
          double want = 0;
          for (int64_t c = 0; c < cols; ++c)
            want += xv[(k + r) * cols + c] * 2.0 + 1;
          mismatches += std::abs(got[r] - want) > 1e-4 * (1 + std::abs(want));
        }
      }
      Tensor y = zeros({rows, 2});
      for (int64_t i = 0; i < rows; ++i)
        y.narrow(0, i, 1).add_(double(i + t));
      std::vector<float> yv = y.to_vector<float>();
      for (int64_t i = 0; i < rows; ++i)
        mismatches += yv[2 * i] != float(i + t);
      Tensor w = from_vector(input(t, 0, 1, cols), {cols, 1}).requires_grad_();
      std::vector<float> wv = w.to_vector<float>();
      optim::SGD opt({w}, optim::SGDOptions(0.5));
      Tensor loss = x.matmul(w).sum();
      loss.backward();
      opt.step(); // `loss` alive: reads the old `w`
      float l = loss.item<float>();
      double want = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          want += double(xv[r * cols + c]) * wv[c];
      mismatches += std::abs(l - want) > 1e-3 * (1 + std::abs(want));
      std::vector<float> after = w.to_vector<float>();
      for (int64_t c = 0; c < cols; ++c) {
        double g = 0;
        for (int64_t r = 0; r < rows; ++r)
          g += xv[r * cols + c];
        mismatches +=
            std::abs(after[c] - (wv[c] - 0.5 * g)) > 1e-3 * (1 + std::abs(g));
      }
      // Backward through a result requiring grad read at changing offsets:
      // cut after it once they change (one table of structures for all).
      Tensor v = from_vector(input(t, 0, 2, cols), {cols}).requires_grad_();
      std::vector<float> vv = v.to_vector<float>();
      for (int step = 0; step < 8; ++step) {
        int64_t k = (step * 5 + t) % (rows - batch);
        (x * v).narrow(0, k, batch).sum().backward();
        std::vector<float> gv = v.grad().to_vector<float>();
        for (int64_t c = 0; c < cols; ++c) {
          double want = 0; // d/dv sum of rows k..k+B of x * v, each step
          for (int s = 0; s <= step; ++s) {
            int64_t ks = (s * 5 + t) % (rows - batch);
            for (int64_t r = ks; r < ks + batch; ++r)
              want += xv[r * cols + c];
          }
          mismatches += std::abs(gv[c] - want) > 1e-3 * (1 + std::abs(want));
        }
      }
    } catch (const Error &e) {
      ++errors;
      ADD_FAILURE() << "thread " << t << ": " << e.what();
    }
  });
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

} // namespace

// Eight threads evaluate four different programs and run backward while
// the program caches hold one program each: programs are evicted while
// other threads run them (each keeps its program alive) and prepared
// again; every result still matches the loops.
TEST_F(Threads, EightThreadsWithOneCachedProgram) {
  int64_t capacity = program_cache_capacity();
  set_program_cache_capacity(1);
  std::atomic<int> mismatches{0}, errors{0};
  runAtOnce([&](int t) {
    for (int round = 0; round < kRounds; ++round)
      for (int p = 0; p < kPrograms; ++p) {
        try {
          bool same = programMatches((p + t) % kPrograms, t, round, 1e-4);
          auto av = input(t, round, 0, kR * kC);
          Tensor x = from_vector(av, {kR, kC}).requires_grad_();
          ((x * (p + 1.0)).relu().sum()).backward();
          std::vector<float> gx = x.grad().to_vector<float>();
          for (size_t k = 0; same && k < gx.size(); ++k)
            same = gx[k] == (av[k] > 0 ? float(p + 1) : 0.0f);
          mismatches += !same;
        } catch (const Error &e) {
          ++errors;
          ADD_FAILURE() << "thread " << t << ": " << e.what();
        }
      }
  });
  EXPECT_LE(program_cache_size(), 2); // one evaluator + one gradient program
  set_program_cache_capacity(capacity);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

//===--- Tensors shared between threads -----------------------------------===//
//
// PyTorch lets threads share tensors; so does strata (docs/design.md
// "Threads"). Each pattern below corrupted memory before the trace lock.

// Eight threads read the same pending tensor at once: it is computed once
// (one program run), and every thread sees the value of the loops.
TEST_F(Threads, EightThreadsEvaluateOneSharedPendingTensor) {
  for (int round = 0; round < kRounds; ++round) {
    auto xv = input(0, round, 0, kR * kC);
    Tensor x = from_vector(xv, {kR, kC});
    Tensor y = (x * 2 + 1).sum();
    double want = 0;
    for (float v : xv)
      want += double(float(v * 2.0f) + 1.0f);
    reset_eval_stats();
    std::atomic<int> mismatches{0};
    runAtOnce([&](int t) {
      float got = t % 2 ? y.item<float>() : y.to_vector<float>().at(0);
      mismatches += std::abs(got - want) > 1e-5 * (1 + std::abs(want));
    });
    EXPECT_EQ(mismatches.load(), 0);
    EXPECT_EQ(eval_stats().programs, 1) << "computed once";
  }
}

// Eight threads each run backward() on their own loss over one shared leaf:
// the leaf's gradient is the sum of every contribution, none lost.
TEST_F(Threads, EightThreadsAccumulateIntoOneSharedLeaf) {
  constexpr int kBackwards = 25; // after the first, each is fast: they race
  auto wv = input(0, 0, 0, kR * kC);
  Tensor w = from_vector(wv, {kR, kC}).requires_grad_();
  runAtOnce([&](int t) {
    for (int round = 0; round < kBackwards; ++round) {
      // loss = sum(w * k), d/dw = k (small integers: sums are exact)
      Tensor k = full({kR, kC}, double(t + 1 + round * kThreads));
      (w * k).sum().backward();
    }
  });
  double want = 0; // sum of t + 1 + round * kThreads over threads, rounds
  for (int t = 0; t < kThreads; ++t)
    for (int round = 0; round < kBackwards; ++round)
      want += t + 1 + round * kThreads;
  std::vector<float> g = w.grad().to_vector<float>();
  ASSERT_EQ(g.size(), wv.size());
  for (float v : g)
    EXPECT_EQ(v, want);
}

// Second derivatives (create_graph) from eight threads: each a gradient
// penalty of its own x through one shared leaf w. The differentiated
// program is one (cached, replayed by one thread at a time); the sums are
// exact small integers.
TEST_F(Threads, EightThreadsSecondDerivatives) {
  constexpr int kRounds = 10;
  Tensor w = full({2}, 1.0, dtype(kFloat64)).requires_grad_();
  std::vector<std::vector<double>> xg(kThreads);
  runAtOnce([&](int t) {
    Tensor x = full({2}, double(t + 1), dtype(kFloat64)).requires_grad_();
    for (int round = 0; round < kRounds; ++round) {
      // g = 2 x w; sum(g^2) = 4 x^2 w^2: d/dx = 8 x w^2, d/dw = 8 x^2 w
      Tensor g = grad({(x * x * w).sum()}, {x}, {}, {}, true)[0];
      g.pow(2).sum().backward();
    }
    xg[t] = x.grad().to_vector<double>();
  });
  double want = 0;
  for (int t = 0; t < kThreads; ++t) {
    want += kRounds * 8.0 * (t + 1) * (t + 1);
    EXPECT_EQ(xg[t], std::vector<double>(2, kRounds * 8.0 * (t + 1)));
  }
  EXPECT_EQ(w.grad().to_vector<double>(), std::vector<double>(2, want));
}

// One thread writes into x in place (add_(1), evaluated every other
// write); seven read x or a view of it. Every read sees x between two
// writes: all elements equal (no torn write), never decreasing, and the
// last value is the number of writes.
TEST_F(Threads, OneWriterSevenReadersSeeWholeWrites) {
  constexpr int kWrites = 200;
  constexpr int64_t kN = 4096; // several cache lines, many elements a write
  Tensor x = zeros({kN});
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, backwards{0}, reads{0};
  runAtOnce([&](int t) {
    if (t == 0) {
      for (int i = 0; i < kWrites; ++i) {
        x.add_(1);
        if (i % 2)
          x.eval();
      }
      done = true;
      return;
    }
    float last = 0;
    while (!done) {
      std::vector<float> v = t % 2 ? x.to_vector<float>()
                                   : x.narrow(0, 1, kN - 2).to_vector<float>();
      for (float e : v)
        torn += e != v[0];
      backwards += v[0] < last;
      last = v[0];
      ++reads;
    }
  });
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_GT(reads.load(), 0);
  for (float e : x.to_vector<float>())
    ASSERT_EQ(e, float(kWrites));
}

// Eight threads fill their own buffer through data_ptr() each step and
// record a step reading it and one shared tensor; each also takes the
// shared tensor's pointer, which runs the other threads' pending steps
// (they read it). Every step sees its own thread's data of that step
// (eager: the write comes before the step, the next write after it).
TEST_F(Threads, EightThreadsWriteThroughDataPointers) {
  constexpr int kSteps = 30;
  constexpr int64_t kN = 64;
  Tensor shared = from_vector(input(0, 0, 2, kN), {kN});
  std::vector<float> sv = shared.to_vector<float>();
  std::atomic<int> wrong{0};
  runAtOnce([&](int t) {
    Tensor a = zeros({kN});
    std::vector<Tensor> steps;
    std::vector<float> want;
    for (int step = 0; step < kSteps; ++step) {
      float *p = a.data_ptr<float>();
      double sum = 0;
      for (int64_t i = 0; i < kN; ++i) {
        p[i] = static_cast<float>(t * 1000 + step * 10 + i % 7);
        sum += double(float(p[i] * 2.0f) + sv[i]);
      }
      steps.push_back((a * 2 + shared).sum());
      want.push_back(static_cast<float>(sum));
      const float *s = shared.data_ptr<float>(); // runs others' steps
      wrong += s[kN - 1] != sv[kN - 1];
    }
    for (int step = 0; step < kSteps; ++step)
      wrong += std::abs(steps[step].item<float>() - want[step]) >
               1e-5 * (1 + std::abs(want[step]));
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(Threads, EightThreadsRunLongBackwardsInSegments) {
  // Each thread: its own 700-step chain h <- (h * w).sin() with a leaf w
  // read every step, backward in segments (700 steps = 1,400 ops), the
  // gradients against the same chain differentiated by hand in double.
  const int64_t n = 700;
  std::atomic<int> mismatches{0}, errors{0};
  int64_t segments = backward_segments();
  runAtOnce([&](int t) {
    const int64_t d = 4 + t; // (a structure per thread: each runs segments)
    std::vector<float> h0 = input(t, 0, 0, d), w0 = input(t, 0, 1, d);
    for (float &v : w0) // (|w| < 1: a contraction, as stable in f32 as in f64)
      v = 0.9f + v * 0.02f;
    try {
      Tensor h = from_vector(h0, {d}).requires_grad_();
      Tensor w = from_vector(w0, {d}).requires_grad_();
      Tensor s = h;
      for (int64_t i = 0; i < n; ++i)
        s = (s * w).sin() * (1.0 + 1e-3 * t);
      s.sum().backward();
      std::vector<std::vector<double>> hs(n + 1, std::vector<double>(d));
      for (int64_t k = 0; k < d; ++k)
        hs[0][k] = h0[k];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < d; ++k)
          hs[i + 1][k] = std::sin(hs[i][k] * w0[k]) * (1.0 + 1e-3 * t);
      std::vector<double> g(d, 1.0), gw(d, 0.0);
      for (int64_t i = n; i-- > 0;)
        for (int64_t k = 0; k < d; ++k) {
          double pre = g[k] * (1.0 + 1e-3 * t) * std::cos(hs[i][k] * w0[k]);
          gw[k] += pre * hs[i][k];
          g[k] = pre * w0[k];
        }
      std::vector<float> gh = h.grad().to_vector<float>();
      std::vector<float> gwv = w.grad().to_vector<float>();
      bool same = true;
      for (int64_t k = 0; k < d; ++k)
        same = same && std::abs(gh[k] - g[k]) <= 1e-4 * (1 + std::abs(g[k])) &&
               std::abs(gwv[k] - gw[k]) <= 1e-3 * (1 + std::abs(gw[k]));
      mismatches += !same;
    } catch (const Error &e) {
      ++errors;
      ADD_FAILURE() << "thread " << t << ": " << e.what();
    }
  });
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_GE(backward_segments() - segments, 8 * 5);
}
