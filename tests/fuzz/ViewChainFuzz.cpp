//===- ViewChainFuzz.cpp - differential fuzzer of view chains -------------===//
//
// Random chains of every view op of the layout algebra over random roots
// (sizes 0 and 1, stride 0 from expand and as_strided, negative strides from
// flip, overlapping unfold/as_strided windows), with arguments drawn partly
// out of range. Each step is checked against two references that do not
// call the algebra:
//  - the verdict (view / copy / error) against `Rules`, PyTorch's argument
//    conditions restated from the documentation, and reshape/view/flatten
//    against "some strides address exactly these elements" (expressible());
//  - every storage index the folded layout addresses against the index
//    oracle (tests/unit/support/IndexOracle.h), which applies each op to an
//    explicit array of storage indices.
// Errors must name their op ("<op>: ..."); every layout produced must stay
// inside its storage (checkInStorage) with a non-negative offset (as the
// tensor type's verifier requires).
//
//   strata-fuzz-views [--chains N] [--seconds S] [--seed K] [--verbose]
// Chain i uses seed K + i; a failure prints the chain, the step and the
// seed, and `--seed <that> --chains 1 --verbose` replays it.
//
//===----------------------------------------------------------------------===//
#include "support/IndexOracle.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

using namespace strata;
using namespace strata::testing;
namespace lay = strata::layout;

namespace {

constexpr int64_t kMaxRank = 6;
constexpr int64_t kMaxNumel = 4096;

std::string str(const Shape &s) { return lay::formatList(s); }

/// One chain's state: the folded layout, the oracle's array, the root size.
struct State {
  Layout l;
  Nd oracle;
  int64_t storageSize = 0;
};

/// PyTorch's maybe_wrap_dim condition, restated: rank 0 behaves as rank 1.
bool dimOk(int64_t d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return d >= -r && d < r;
}
int64_t wrap(int64_t d, int64_t rank) {
  return d < 0 ? d + std::max<int64_t>(rank, 1) : d;
}
/// Dims in range and no dim named twice.
bool dimListOk(const Shape &dims, int64_t rank) {
  std::vector<bool> seen(std::max<int64_t>(rank, 1), false);
  for (int64_t d : dims) {
    if (!dimOk(d, rank) || seen[wrap(d, rank)])
      return false;
    seen[wrap(d, rank)] = true;
  }
  return true;
}
/// infer_size's condition: at most one -1, no other negative, and the
/// product matches (with -1: the known product divides numel, non-zero).
std::optional<Shape> inferred(const Shape &shape, int64_t numel) {
  int64_t known = 1, minus = 0;
  for (int64_t s : shape) {
    if (s == -1)
      ++minus;
    else if (s < 0)
      return std::nullopt;
    else
      known *= s;
  }
  if (minus > 1)
    return std::nullopt;
  Shape out = shape;
  if (minus == 0)
    return known == numel ? std::optional<Shape>(out) : std::nullopt;
  if (known == 0 || numel % known != 0)
    return std::nullopt;
  for (int64_t &s : out)
    if (s == -1)
      s = numel / known;
  return out;
}

class Fuzzer {
public:
  explicit Fuzzer(uint64_t seed) : rng(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(int percent) { return pick(0, 99) < percent; }

  /// Runs one chain; false (with `report` set) on the first mismatch.
  bool run(std::string &report, int64_t &steps, int64_t &elements) {
    State s = root();
    int64_t n = pick(1, 10);
    for (int64_t i = 0; i < n; ++i) {
      if (!step(s, report))
        return false;
      ++steps;
      elements += static_cast<int64_t>(s.oracle.data.size());
    }
    return true;
  }

  std::string trace;
  /// Verdict counts: views, copies and errors seen.
  int64_t views = 0, copies = 0, errors = 0;

private:
  Shape randomSizes(int64_t rank) {
    Shape sizes;
    for (int64_t r = 0; r < rank; ++r)
      sizes.push_back(chance(10) ? 0 : (chance(30) ? 1 : pick(2, 4)));
    return sizes;
  }

  /// A contiguous root at an offset, or an as_strided window (stride 0 and
  /// overlapping strides included) of a larger storage.
  State root() {
    Shape sizes = randomSizes(pick(0, 4));
    State s;
    if (chance(60)) {
      int64_t offset = pick(0, 3);
      s.l = lay::contiguous(sizes, offset);
      s.storageSize = offset + std::max<int64_t>(product(sizes), 1);
    } else {
      Shape strides;
      for (size_t d = 0; d < sizes.size(); ++d)
        strides.push_back(pick(0, 6));
      s.storageSize = pick(1, 64);
      int64_t offset = pick(0, 8);
      Layout want = L(sizes, strides, offset);
      int64_t need = offset;
      for (size_t d = 0; d < sizes.size(); ++d)
        need += (sizes[d] - 1) * strides[d];
      if (product(sizes) == 0 || need >= s.storageSize)
        s.storageSize = std::max<int64_t>(need + 1, offset + 1);
      s.l = want;
    }
    s.oracle = materialize(s.l);
    trace =
        "root " + describe(s.l) + " storage " + std::to_string(s.storageSize);
    return s;
  }

  static std::string describe(const Layout &l) {
    return str(l.sizes) + "/" + str(l.strides) + "@" + std::to_string(l.offset);
  }

  /// A dim argument: usually valid (either spelling), sometimes not.
  int64_t dimArg(int64_t rank) {
    int64_t r = std::max<int64_t>(rank, 1);
    if (chance(8))
      return chance(50) ? r + pick(0, 2) : -r - 1 - pick(0, 2);
    return pick(-r, r - 1);
  }

  /// A shape for view/reshape: a regrouping of the sizes (merge, split,
  /// -1), a shuffle of the sizes, or a deliberately wrong one.
  Shape shapeArg(const Layout &l) {
    int64_t numel = l.numel();
    Shape shape = l.sizes;
    switch (pick(0, 5)) {
    case 0: // merge adjacent dims
      if (shape.size() >= 2) {
        int64_t d = pick(0, shape.size() - 2);
        shape[d] *= shape[d + 1];
        shape.erase(shape.begin() + d + 1);
      }
      break;
    case 1: // split a dim by one of its factors
      if (!shape.empty()) {
        int64_t d = pick(0, shape.size() - 1);
        int64_t f = pick(1, 4);
        if (shape[d] % f == 0) {
          shape[d] /= f;
          shape.insert(shape.begin() + d, f);
        }
      }
      break;
    case 2: // flat, or flat with size-1 dims around
      shape = {numel};
      if (chance(50))
        shape.insert(shape.begin() + pick(0, 1), 1);
      break;
    case 3: // the sizes permuted (same numel, usually a copy)
      std::shuffle(shape.begin(), shape.end(), rng);
      break;
    case 4: // wrong on purpose
      shape.push_back(pick(-3, 3));
      break;
    default:
      break;
    }
    if (!shape.empty() && chance(30))
      shape[pick(0, shape.size() - 1)] = -1;
    if (chance(3))
      shape.push_back(-1);
    return shape;
  }

  /// Calls a random op with extreme arguments (int64 limits, huge sizes
  /// and strides). Only the absence of undefined behaviour (UBSan, in the
  /// sanitizer build) and of crashes is checked, plus that a failure names
  /// its op; the chain does not continue from the result.
  bool extremeProbe(const Layout &l, std::string &report) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    const int64_t values[] = {kMax,
                              kMin,
                              kMax / 2,
                              kMin / 2,
                              kMax - 1,
                              int64_t(1) << 32,
                              -(int64_t(1) << 32),
                              -2};
    auto v = [&] { return values[pick(0, 7)]; };
    int64_t rank = l.dim();
    Shape big(rank);
    for (int64_t &x : big)
      x = chance(50) ? v() : pick(0, 3);
    std::string op;
    lay::Result<Layout> got = Layout{};
    auto asView = [](lay::Result<lay::MaybeView> r) -> lay::Result<Layout> {
      if (!r)
        return lay::Result<Layout>::failure(r.error());
      return r->layout;
    };
    switch (pick(0, 9)) {
    case 0:
      op = "expand";
      big.insert(big.begin(), v());
      got = lay::expand(l, big);
      break;
    case 1:
      op = "as_strided";
      got = lay::asStrided(Shape{v(), pick(0, 3)}, Shape{v(), v()}, v(), v());
      break;
    case 2:
      op = "slice";
      got = lay::slice(l, v(), v(), v(), v());
      if (rank)
        got = lay::slice(l, 0, v(), v(), v());
      break;
    case 3:
      op = "select";
      got = rank ? lay::select(l, 0, v()) : lay::select(l, v(), 0);
      break;
    case 4:
      op = "narrow";
      got = rank ? lay::narrow(l, 0, v(), v()) : lay::narrow(l, v(), 0, 0);
      break;
    case 5:
      op = "view";
      got = lay::view(l, Shape{v(), -1});
      break;
    case 6:
      op = "reshape";
      got = asView(lay::reshape(l, big));
      break;
    case 7:
      op = "diagonal";
      got = lay::diagonal(l, v(), rank ? 0 : v(), rank > 1 ? 1 : v());
      break;
    case 8:
      op = "unfold";
      got = lay::unfold(l, rank ? 0 : v(), v(), v());
      break;
    default: { // a huge but valid layout through unsqueeze/flip/permute
      op = "as_strided";
      got = lay::asStrided(Shape{2, 2}, Shape{kMax / 4, kMax / 4}, 0, kMax);
      if (got) {
        Layout h = *got;
        (void)lay::unsqueeze(h, 0);
        (void)lay::flip(h, Shape{0, 1});
        (void)lay::permute(h, Shape{1, 0});
        (void)lay::view(h, Shape{4});
        (void)lay::reshape(h, Shape{-1});
        (void)lay::unfold(h, 0, 1, kMax);
        (void)lay::slice(h, 1, 0, kMax, kMax);
      }
      break;
    }
    }
    if (!got.ok() && got.error().rfind(op + ": ", 0) != 0) {
      report = trace + "\n  extreme " + op + " on " + describe(l) +
               ": error does not name its op: " + got.error();
      return false;
    }
    return true;
  }

  /// Applies one random op to `s`, checks it, and continues the chain.
  bool step(State &s, std::string &report) {
    if (chance(2))
      return extremeProbe(s.l, report);
    const Layout &l = s.l;
    int64_t rank = l.dim();
    bool grow = rank < kMaxRank;
    std::string op;
    bool expectOk = false;
    bool expectCopy = false; // view/copy for reshape and flatten
    bool gotCopy = false;
    lay::Result<Layout> got = Layout{};
    Nd next;
    auto asView = [&](lay::Result<lay::MaybeView> r) -> lay::Result<Layout> {
      if (!r)
        return lay::Result<Layout>::failure(r.error());
      gotCopy = r->needsCopy;
      return r->layout;
    };
    std::ostringstream args;

    switch (pick(0, 15)) {
    case 0: { // permute
      op = "permute";
      Shape dims(rank);
      std::iota(dims.begin(), dims.end(), 0);
      std::shuffle(dims.begin(), dims.end(), rng);
      for (int64_t &d : dims)
        if (chance(30))
          d -= rank;
      if (chance(8) && !dims.empty())
        dims[pick(0, dims.size() - 1)] = dimArg(rank);
      if (chance(4))
        dims.push_back(pick(0, rank));
      args << str(dims);
      got = lay::permute(l, dims);
      expectOk =
          static_cast<int64_t>(dims.size()) == rank && dimListOk(dims, rank);
      if (expectOk) {
        Shape w;
        for (int64_t d : dims)
          w.push_back(wrap(d, rank));
        next = rank ? oPermute(s.oracle, w) : s.oracle;
      }
      break;
    }
    case 1: { // transpose
      op = "transpose";
      int64_t a = dimArg(rank), b = dimArg(rank);
      args << a << ", " << b;
      got = lay::transpose(l, a, b);
      expectOk = dimOk(a, rank) && dimOk(b, rank);
      if (expectOk)
        next = rank ? oTranspose(s.oracle, wrap(a, rank), wrap(b, rank))
                    : s.oracle;
      break;
    }
    case 2: { // t
      op = "t";
      got = lay::t(l);
      expectOk = rank <= 2;
      if (expectOk)
        next = rank == 2 ? oTranspose(s.oracle, 0, 1) : s.oracle;
      break;
    }
    case 3: { // slice with Python bounds
      op = "slice";
      int64_t d = dimArg(rank);
      int64_t n = rank && dimOk(d, rank) ? l.sizes[wrap(d, rank)] : 2;
      std::optional<int64_t> start, end;
      if (chance(75))
        start = pick(-n - 2, n + 2);
      if (chance(75))
        end = pick(-n - 2, n + 2);
      int64_t stepArg = chance(5) ? pick(-1, 0) : pick(1, 3);
      args << d << " " << (start ? std::to_string(*start) : "_") << ":"
           << (end ? std::to_string(*end) : "_") << ":" << stepArg;
      got = lay::slice(l, d, start, end, stepArg);
      expectOk = rank > 0 && dimOk(d, rank) && stepArg > 0;
      if (expectOk)
        next = oSlice(s.oracle, wrap(d, rank), start, end, stepArg);
      break;
    }
    case 4: { // select
      op = "select";
      int64_t d = dimArg(rank);
      int64_t n = rank && dimOk(d, rank) ? l.sizes[wrap(d, rank)] : 1;
      int64_t index = pick(-n - 1, n);
      args << d << ", " << index;
      got = lay::select(l, d, index);
      expectOk = rank > 0 && dimOk(d, rank) && index >= -n && index < n;
      if (expectOk)
        next = oSelect(s.oracle, wrap(d, rank), index < 0 ? index + n : index);
      break;
    }
    case 5: { // narrow: start wraps like a dim; start == size is allowed
      op = "narrow";
      int64_t d = dimArg(rank);
      int64_t n = rank && dimOk(d, rank) ? l.sizes[wrap(d, rank)] : 1;
      int64_t start = pick(-n - 1, n + 1);
      int64_t length = pick(-1, n + 1);
      args << d << ", " << start << ", " << length;
      got = lay::narrow(l, d, start, length);
      int64_t r = std::max<int64_t>(n, 1);
      bool startOk = start == n || (start >= -r && start < r);
      int64_t st = start < 0 ? start + r : start;
      expectOk = rank > 0 && dimOk(d, rank) && startOk && length >= 0 &&
                 st + length <= n;
      if (expectOk)
        next = oSlice(s.oracle, wrap(d, rank), st, st + length, 1);
      break;
    }
    case 6: { // expand (stride 0)
      op = "expand";
      Shape shape;
      int64_t lead = grow ? pick(0, 2) : 0;
      for (int64_t i = 0; i < lead; ++i)
        shape.push_back(chance(5) ? -1 : pick(0, 3));
      for (int64_t sz : l.sizes)
        shape.push_back(sz == 1 ? (chance(20) ? -1 : pick(0, 3))
                                : (chance(40)  ? -1
                                   : chance(8) ? pick(0, 5)
                                               : sz));
      if (chance(4) && !shape.empty())
        shape.erase(shape.begin());
      if (chance(3) && !shape.empty())
        shape[pick(0, shape.size() - 1)] = -2;
      args << str(shape);
      got = lay::expand(l, shape);
      Shape concrete = shape;
      expectOk = shape.size() >= l.sizes.size();
      size_t off = shape.size() - l.sizes.size();
      for (size_t i = 0; expectOk && i < shape.size(); ++i) {
        if (i < off) {
          expectOk = shape[i] >= 0;
          continue;
        }
        int64_t have = l.sizes[i - off];
        if (shape[i] == -1)
          concrete[i] = have;
        else if (shape[i] != have)
          expectOk = have == 1 && shape[i] >= 0;
      }
      if (expectOk) {
        if (product(concrete) > kMaxNumel)
          return true; // legal but too big to check by enumeration
        next = oExpand(s.oracle, concrete);
      }
      break;
    }
    case 7: { // squeeze, all or listed dims
      op = "squeeze";
      Shape dims;
      if (chance(50))
        for (int64_t k = pick(1, 3); k > 0; --k)
          dims.push_back(dimArg(rank));
      args << str(dims);
      got = lay::squeeze(l, dims);
      expectOk = dimListOk(dims, rank);
      if (expectOk) {
        std::vector<bool> listed(std::max<int64_t>(rank, 1), dims.empty());
        for (int64_t d : dims)
          listed[wrap(d, rank)] = true;
        Shape shape;
        for (int64_t d = 0; d < rank; ++d)
          if (!(l.sizes[d] == 1 && listed[d]))
            shape.push_back(l.sizes[d]);
        next = oReshape(s.oracle, shape);
      }
      break;
    }
    case 8: { // unsqueeze
      if (!grow)
        return true;
      op = "unsqueeze";
      int64_t d = dimArg(rank + 1);
      args << d;
      got = lay::unsqueeze(l, d);
      expectOk = dimOk(d, rank + 1);
      if (expectOk) {
        Shape shape = l.sizes;
        shape.insert(shape.begin() + wrap(d, rank + 1), 1);
        next = oReshape(s.oracle, shape);
      }
      break;
    }
    case 9:    // view
    case 10: { // reshape (view or copy)
      bool isView = pick(0, 1);
      op = isView ? "view" : "reshape";
      Shape shape = shapeArg(l);
      if (static_cast<int64_t>(shape.size()) > kMaxRank)
        return true;
      args << str(shape);
      got = isView ? lay::view(l, shape) : asView(lay::reshape(l, shape));
      std::optional<Shape> concrete = inferred(shape, l.numel());
      bool expressible_ =
          concrete && expressible(oReshape(s.oracle, *concrete));
      expectOk = concrete && (!isView || expressible_);
      expectCopy = !isView && concrete && !expressible_;
      if (expectOk)
        next = oReshape(s.oracle, *concrete);
      break;
    }
    case 11: { // flatten
      op = "flatten";
      int64_t a = dimArg(rank), b = dimArg(rank);
      args << a << ", " << b;
      got = asView(lay::flatten(l, a, b));
      expectOk =
          dimOk(a, rank) && dimOk(b, rank) && wrap(a, rank) <= wrap(b, rank);
      if (expectOk) {
        Shape shape;
        if (rank == 0) {
          shape = {1};
        } else {
          int64_t wa = wrap(a, rank), wb = wrap(b, rank);
          shape.assign(l.sizes.begin(), l.sizes.begin() + wa);
          int64_t merged = 1;
          for (int64_t d = wa; d <= wb; ++d)
            merged *= l.sizes[d];
          shape.push_back(merged);
          shape.insert(shape.end(), l.sizes.begin() + wb + 1, l.sizes.end());
        }
        next = oReshape(s.oracle, shape);
        expectCopy = !expressible(next);
      }
      break;
    }
    case 12: { // diagonal
      op = "diagonal";
      int64_t off = pick(-3, 3), a = dimArg(rank), b = dimArg(rank);
      if (chance(70) && rank >= 2) { // mostly distinct dims
        a = pick(0, rank - 1);
        b = (a + pick(1, rank - 1)) % rank;
      }
      args << off << ", " << a << ", " << b;
      got = lay::diagonal(l, off, a, b);
      expectOk =
          dimOk(a, rank) && dimOk(b, rank) && wrap(a, rank) != wrap(b, rank);
      if (expectOk)
        next = oDiagonal(s.oracle, off, wrap(a, rank), wrap(b, rank));
      break;
    }
    case 13: { // unfold (overlapping windows when step < size)
      if (!grow)
        return true;
      op = "unfold";
      int64_t d = dimArg(rank);
      int64_t n = rank && dimOk(d, rank) ? l.sizes[wrap(d, rank)] : 1;
      int64_t size = chance(5) ? pick(-2, -1) : pick(0, n + 1);
      int64_t stepArg = chance(5) ? pick(-1, 0) : pick(1, 3);
      args << d << ", " << size << ", " << stepArg;
      got = lay::unfold(l, d, size, stepArg);
      expectOk = dimOk(d, rank) && size >= 0 && size <= n && stepArg > 0;
      if (expectOk) {
        if (rank == 0)
          next = Nd{Shape{size}, size ? s.oracle.data : std::vector<int64_t>{}};
        else
          next = oUnfold(s.oracle, wrap(d, rank), size, stepArg);
      }
      break;
    }
    case 14: { // flip (negative strides)
      op = "flip";
      Shape dims;
      for (int64_t k = pick(0, std::min<int64_t>(rank, 3)); k > 0; --k)
        dims.push_back(dimArg(rank));
      args << str(dims);
      got = lay::flip(l, dims);
      expectOk = dimListOk(dims, rank);
      if (expectOk) {
        Shape w;
        for (int64_t d : dims)
          w.push_back(wrap(d, rank));
        next = rank ? oFlip(s.oracle, w) : s.oracle;
      }
      break;
    }
    default: { // as_strided over the root (overlap, stride 0, bad args)
      op = "as_strided";
      Shape sizes = randomSizes(pick(0, 3)), strides;
      for (size_t d = 0; d < sizes.size(); ++d)
        strides.push_back(chance(4) ? -1 : pick(0, 4));
      if (chance(4))
        strides.push_back(1);
      if (chance(3) && !sizes.empty())
        sizes[0] = -1;
      int64_t offset = chance(4) ? -1 : pick(0, s.storageSize);
      args << str(sizes) << ", " << str(strides) << ", " << offset;
      got = lay::asStrided(sizes, strides, offset, s.storageSize);
      expectOk = sizes.size() == strides.size() && offset >= 0;
      int64_t last = offset;
      for (size_t d = 0; expectOk && d < sizes.size(); ++d) {
        expectOk = sizes[d] >= 0 && strides[d] >= 0;
        last += (sizes[d] - 1) * strides[d];
      }
      if (expectOk && product(sizes) > 0)
        expectOk = last < s.storageSize;
      if (expectOk)
        next = materialize(L(sizes, strides, offset));
      break;
    }
    }

    trace += "\n  " + op + "(" + args.str() + ")";
    auto failWith = [&](const std::string &why) {
      report = trace + "\n  on " + describe(l) + ": " + why;
      return false;
    };
    if (got.ok() != expectOk)
      return failWith(std::string("algebra says ") +
                      (got.ok() ? "ok" : "error \"" + got.error() + "\"") +
                      ", the rules say " + (expectOk ? "ok" : "error"));
    if (!got.ok()) {
      ++errors;
      if (got.error().rfind(op + ": ", 0) != 0)
        return failWith("error does not name its op: " + got.error());
      return true; // the chain goes on from the unchanged layout
    }
    if (gotCopy != expectCopy)
      return failWith(std::string("algebra says ") +
                      (gotCopy ? "copy" : "view") + ", the oracle says " +
                      (expectCopy ? "copy (no strides address it)"
                                  : "view (strides exist)"));
    if (gotCopy) {
      ++copies;
      // A copy is a fresh contiguous tensor: a new root in storage order.
      if (*got != lay::contiguous(next.shape))
        return failWith("copy result is not contiguous: " + describe(*got));
      s.storageSize = std::max<int64_t>(product(next.shape), 1);
      next.data.resize(product(next.shape));
      std::iota(next.data.begin(), next.data.end(), 0);
    } else {
      ++views;
    }
    trace += " -> " + describe(*got);
    Nd mine = materialize(*got);
    if (mine.shape != next.shape)
      return failWith("sizes " + str(mine.shape) + ", oracle " +
                      str(next.shape));
    if (mine.data != next.data)
      return failWith("storage indices " + str(mine.data) + ", oracle " +
                      str(next.data));
    // The tensor type's verifier rejects a negative offset even when the
    // layout is empty, so the algebra must never produce one.
    if (got->offset < 0)
      return failWith("negative storage offset " + std::to_string(got->offset));
    if (!lay::checkInStorage(*got, s.storageSize, op.c_str()))
      return failWith("leaves its storage of " + std::to_string(s.storageSize));
    s.l = *got;
    s.oracle = std::move(next);
    return true;
  }

  std::mt19937_64 rng;
};

} // namespace

int main(int argc, char **argv) {
  int64_t chains = 0;
  double seconds = 0;
  uint64_t seed = 1;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--chains"))
      chains = std::atoll(next());
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(next(), nullptr, 10);
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--chains N] [--seconds S] [--seed K] "
                   "[--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  if (chains <= 0 && seconds <= 0)
    chains = 10000;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  int64_t done = 0, failures = 0, steps = 0, elements = 0;
  int64_t views = 0, copies = 0, errors = 0;
  for (;
       (chains <= 0 || done < chains) && (seconds <= 0 || elapsed() < seconds);
       ++done) {
    Fuzzer f(seed + done);
    std::string report;
    if (!f.run(report, steps, elements)) {
      if (++failures <= 10)
        std::printf("MISMATCH seed %llu:\n%s\n",
                    static_cast<unsigned long long>(seed + done),
                    report.c_str());
    } else if (verbose) {
      std::printf("seed %llu:\n%s\n",
                  static_cast<unsigned long long>(seed + done),
                  f.trace.c_str());
    }
    views += f.views;
    copies += f.copies;
    errors += f.errors;
  }
  std::printf("strata-fuzz-views: %lld chains (%lld ops: %lld views, %lld "
              "copies, %lld errors; %lld elements compared) in %.1f s, "
              "seeds %llu..%llu, %lld failures\n",
              static_cast<long long>(done), static_cast<long long>(steps),
              static_cast<long long>(views), static_cast<long long>(copies),
              static_cast<long long>(errors), static_cast<long long>(elements),
              elapsed(), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed + done - 1),
              static_cast<long long>(failures));
  return failures ? 1 : 0;
}
