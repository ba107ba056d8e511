//===- LayoutAlgebraTest.cpp - layout algebra vs PyTorch and an oracle ----===//
//
// Three kinds of checks, none of which trusts the implementation's output:
//  - golden cases recorded from PyTorch 1.13 (scripts/gen_layout_golden.py);
//  - an independent index oracle that applies each view op to an explicit
//    n-d array of storage indices, compared element by element with
//    storageIndices(layout) over fixed and seeded random view chains;
//  - hand-written cases for each rule in LayoutAlgebra.h.
//
//===----------------------------------------------------------------------===//

#include "strata/Layout/LayoutAlgebra.h"
#include "support/IndexOracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#ifndef STRATA_LAYOUT_GOLDEN
#error "define STRATA_LAYOUT_GOLDEN as the path of layout_golden.txt"
#endif

using namespace strata::layout;
using namespace strata::testing;

namespace {

//===--- Helpers shared by all tests --------------------------------------===//

/// "[1,2,3]", the golden file's list format (deliberately not formatList).
std::string fmt(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string fmt(const Layout &l) {
  return "sizes=" + fmt(l.sizes) + " strides=" + fmt(l.strides) +
         " offset=" + std::to_string(l.offset);
}

//===--- Golden cases from PyTorch ----------------------------------------===//

std::vector<std::string> split(const std::string &s, const std::string &sep) {
  std::vector<std::string> out;
  size_t start = 0, at;
  while ((at = s.find(sep, start)) != std::string::npos) {
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

Shape parseList(const std::string &v) {
  EXPECT_TRUE(v.size() >= 2 && v.front() == '[' && v.back() == ']') << v;
  Shape out;
  std::string body = v.substr(1, v.size() - 2);
  if (!body.empty())
    for (const std::string &item : split(body, ","))
      out.push_back(std::stoll(item));
  return out;
}

struct Fields {
  std::map<std::string, std::string> kv;
  const std::string &get(const std::string &key) const {
    static const std::string missing = "<missing>";
    auto it = kv.find(key);
    EXPECT_NE(it, kv.end()) << "no field " << key;
    return it == kv.end() ? missing : it->second;
  }
  int64_t num(const std::string &key) const { return std::stoll(get(key)); }
  Shape list(const std::string &key) const { return parseList(get(key)); }
  std::optional<int64_t> optNum(const std::string &key) const {
    if (get(key) == "none")
      return std::nullopt;
    return num(key);
  }
};

Fields parseFields(const std::string &text) {
  Fields f;
  if (text == "-")
    return f;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    size_t eq = token.find('=');
    EXPECT_NE(eq, std::string::npos) << token;
    f.kv[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return f;
}

struct GoldenCase {
  std::string line, op, input, args, expected;
};

const std::vector<GoldenCase> &goldenCases() {
  static const std::vector<GoldenCase> cases = [] {
    std::vector<GoldenCase> out;
    std::ifstream in(STRATA_LAYOUT_GOLDEN);
    EXPECT_TRUE(in.good()) << "cannot read " << STRATA_LAYOUT_GOLDEN;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#')
        continue;
      std::vector<std::string> parts = split(line, " | ");
      EXPECT_EQ(parts.size(), 4u) << line;
      if (parts.size() == 4)
        out.push_back({line, parts[0], parts[1], parts[2], parts[3]});
    }
    return out;
  }();
  return cases;
}

/// strata's answer to one case in the golden file's "expected" syntax (minus
/// the "ok " prefix), or its error message.
template <typename T, typename F>
std::pair<bool, std::string> describe(const Result<T> &r, F &&format) {
  if (!r)
    return {false, r.error()};
  return {true, format(*r)};
}

std::pair<bool, std::string> runCase(const GoldenCase &c) {
  Fields in = parseFields(c.input), a = parseFields(c.args);
  const std::string &op = c.op;
  auto layoutFmt = [](const Layout &l) { return fmt(l); };
  auto maybeFmt = [](const MaybeView &m) {
    return std::string(m.needsCopy ? "copy " : "view ") + fmt(m.layout);
  };
  auto shapeFmt = [](const Shape &s) { return "shape=" + fmt(s); };

  Layout x;
  if (in.kv.count("sizes")) {
    x = L(in.list("sizes"), in.list("strides"), in.num("offset"));
    // The recorded input itself must be a valid view of its storage.
    EXPECT_TRUE(checkInStorage(x, in.num("storage"), "input").ok()) << c.line;
  }

  if (op == "view")
    return describe(view(x, a.list("shape")), layoutFmt);
  if (op == "reshape")
    return describe(reshape(x, a.list("shape")), maybeFmt);
  if (op == "flatten")
    return describe(flatten(x, a.num("start"), a.num("end")), maybeFmt);
  if (op == "permute")
    return describe(permute(x, a.list("dims")), layoutFmt);
  if (op == "transpose")
    return describe(transpose(x, a.num("dim0"), a.num("dim1")), layoutFmt);
  if (op == "t")
    return describe(t(x), layoutFmt);
  if (op == "slice")
    return describe(slice(x, a.num("dim"), a.optNum("start"), a.optNum("end"),
                          a.num("step")),
                    layoutFmt);
  if (op == "select")
    return describe(select(x, a.num("dim"), a.num("index")), layoutFmt);
  if (op == "narrow")
    return describe(narrow(x, a.num("dim"), a.num("start"), a.num("length")),
                    layoutFmt);
  if (op == "expand")
    return describe(expand(x, a.list("shape")), layoutFmt);
  if (op == "squeeze")
    return describe(squeeze(x, a.list("dims")), layoutFmt);
  if (op == "unsqueeze")
    return describe(unsqueeze(x, a.num("dim")), layoutFmt);
  if (op == "as_strided")
    return describe(asStrided(a.list("sizes"), a.list("strides"),
                              a.num("offset"), in.num("storage")),
                    layoutFmt);
  if (op == "diagonal")
    return describe(diagonal(x, a.num("offset"), a.num("dim1"), a.num("dim2")),
                    layoutFmt);
  if (op == "unfold")
    return describe(unfold(x, a.num("dim"), a.num("size"), a.num("step")),
                    layoutFmt);
  if (op == "flip") {
    Result<Layout> r = flip(x, a.list("dims"));
    if (r) {
      // Flip keeps the sizes and must stay inside the storage.
      EXPECT_EQ(r->sizes, x.sizes) << c.line;
      EXPECT_TRUE(checkInStorage(*r, in.num("storage"), "flip").ok()) << c.line;
    }
    return describe(
        r, [](const Layout &l) { return "values=" + fmt(storageIndices(l)); });
  }
  if (op == "broadcast")
    return describe(broadcastShapes(a.list("a"), a.list("b"), "broadcast"),
                    shapeFmt);
  if (op == "reduce")
    return describe(reduceShape(a.list("sizes"), a.list("dims"),
                                a.num("keepdim") != 0, "reduce"),
                    shapeFmt);
  if (op == "contig")
    return {true, isContiguous(x) ? "true" : "false"};
  if (op == "overlap")
    return {true, hasInternalOverlap(x) ? "true" : "false"};
  ADD_FAILURE() << "unknown op in golden file: " << c.line;
  return {false, ""};
}

class LayoutGolden : public ::testing::TestWithParam<const char *> {};

TEST_P(LayoutGolden, MatchesPyTorch) {
  const std::string op = GetParam();
  int checked = 0;
  for (const GoldenCase &c : goldenCases()) {
    if (c.op != op)
      continue;
    ++checked;
    auto [ok, got] = runCase(c);
    if (c.expected.rfind("ok ", 0) == 0) {
      std::string want = c.expected.substr(3);
      EXPECT_TRUE(ok && got == want)
          << "case: " << c.line << "\n  strata: " << (ok ? "ok " : "error ")
          << got;
    } else {
      ASSERT_EQ(c.expected.rfind("error ", 0), 0u) << c.line;
      std::string want = c.expected.substr(6);
      EXPECT_TRUE(!ok && got.rfind(op + ": ", 0) == 0 &&
                  got.find(want) != std::string::npos)
          << "case: " << c.line << "\n  strata: " << (ok ? "ok " : "error ")
          << got;
    }
  }
  // Guards against a truncated or misnamed golden file.
  EXPECT_GE(checked, 20) << "too few golden cases for " << op;
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, LayoutGolden,
    ::testing::Values("view", "reshape", "flatten", "permute", "transpose", "t",
                      "slice", "select", "narrow", "expand", "squeeze",
                      "unsqueeze", "as_strided", "diagonal", "unfold", "flip",
                      "broadcast", "reduce", "contig", "overlap"),
    [](const ::testing::TestParamInfo<const char *> &info) {
      return std::string(info.param);
    });

TEST(LayoutGoldenFile, EveryLineHasAKnownOp) {
  static const std::set<std::string> known = {
      "view",    "reshape",   "flatten",    "permute",  "transpose",
      "t",       "slice",     "select",     "narrow",   "expand",
      "squeeze", "unsqueeze", "as_strided", "diagonal", "unfold",
      "flip",    "broadcast", "reduce",     "contig",   "overlap"};
  EXPECT_GE(goldenCases().size(), 1000u);
  for (const GoldenCase &c : goldenCases())
    EXPECT_TRUE(known.count(c.op)) << c.line;
}

bool distinct(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

/// Checks a layout against the oracle: same sizes, same storage indices in
/// the same order, and bounds that agree with those indices.
void expectSame(const Layout &l, const Nd &o, const std::string &what) {
  ASSERT_EQ(l.sizes, o.shape) << what;
  ASSERT_EQ(l.sizes.size(), l.strides.size()) << what;
  ASSERT_EQ(storageIndices(l), o.data) << what << "\n  layout " << fmt(l);
  ASSERT_EQ(l.numel(), static_cast<int64_t>(o.data.size())) << what;
  if (!o.data.empty()) {
    auto [lo, hi] = std::minmax_element(o.data.begin(), o.data.end());
    EXPECT_EQ(indexRange(l), std::make_pair(*lo, *hi)) << what;
    EXPECT_EQ(requiredStorageSize(l), *hi + 1) << what;
  } else {
    EXPECT_EQ(requiredStorageSize(l), 0) << what;
  }
}

/// A layout and its oracle array, advanced together through a chain.
struct Pair {
  Layout layout;
  Nd oracle;
  std::string trace;

  template <typename R> bool apply(R r, Nd next, const std::string &step) {
    trace += " -> " + step;
    EXPECT_TRUE(r.ok()) << trace << ": " << r.error();
    if (!r.ok())
      return false;
    layout = *r;
    oracle = std::move(next);
    expectSame(layout, oracle, trace);
    return !::testing::Test::HasFatalFailure();
  }
};

Pair root(Layout l) {
  Nd o = materialize(l);
  return Pair{l, o, "root " + fmt(l)};
}

//===--- Fixed chains -----------------------------------------------------===//

TEST(LayoutOracle, LongChainPermuteSliceSelectUnsqueezeExpandTranspose) {
  Pair p = root(contiguous(Shape{2, 3, 4, 5}, 7));
  ASSERT_TRUE(p.apply(permute(p.layout, Shape{3, 1, -4, 2}),
                      oPermute(p.oracle, Shape{3, 1, 0, 2}), "permute"));
  EXPECT_EQ(p.layout, L(Shape{5, 3, 2, 4}, Shape{1, 20, 60, 5}, 7));
  ASSERT_TRUE(p.apply(slice(p.layout, 0, 1, std::nullopt, 2),
                      oSlice(p.oracle, 0, 1, std::nullopt, 2), "slice 1::2"));
  EXPECT_EQ(p.layout, L(Shape{2, 3, 2, 4}, Shape{2, 20, 60, 5}, 8));
  ASSERT_TRUE(
      p.apply(select(p.layout, 1, -1), oSelect(p.oracle, 1, 2), "select"));
  ASSERT_TRUE(p.apply(unsqueeze(p.layout, 1),
                      oReshape(p.oracle, Shape{2, 1, 2, 4}), "unsqueeze"));
  ASSERT_TRUE(p.apply(expand(p.layout, Shape{3, 2, 6, 2, 4}),
                      oExpand(p.oracle, Shape{3, 2, 6, 2, 4}), "expand"));
  EXPECT_TRUE(hasInternalOverlap(p.layout));
  ASSERT_TRUE(p.apply(transpose(p.layout, 0, -1), oTranspose(p.oracle, 0, 4),
                      "transpose"));
  ASSERT_TRUE(p.apply(flip(p.layout, Shape{1, 3}), oFlip(p.oracle, Shape{1, 3}),
                      "flip"));
  ASSERT_TRUE(p.apply(diagonal(p.layout, -1, 1, 3),
                      oDiagonal(p.oracle, -1, 1, 3), "diagonal"));
  ASSERT_TRUE(
      p.apply(unfold(p.layout, 0, 2, 1), oUnfold(p.oracle, 0, 2, 1), "unfold"));
  EXPECT_TRUE(checkInStorage(p.layout, 7 + 120, "chain").ok());
}

TEST(LayoutOracle, ChainThroughNegativeStrides) {
  Pair p = root(contiguous(Shape{4, 6}));
  ASSERT_TRUE(p.apply(flip(p.layout, Shape{0, 1}), oFlip(p.oracle, Shape{0, 1}),
                      "flip"));
  EXPECT_EQ(p.layout, L(Shape{4, 6}, Shape{-6, -1}, 23));
  // Fully flipped contiguous data is one chunk, so view still works.
  ASSERT_TRUE(p.apply(view(p.layout, Shape{3, 8}),
                      oReshape(p.oracle, Shape{3, 8}), "view"));
  EXPECT_EQ(p.layout, L(Shape{3, 8}, Shape{-8, -1}, 23));
  ASSERT_TRUE(p.apply(slice(p.layout, 1, -5, std::nullopt, 2),
                      oSlice(p.oracle, 1, -5, std::nullopt, 2), "slice"));
  ASSERT_TRUE(p.apply(narrow(p.layout, 0, 1, 2), oSlice(p.oracle, 0, 1, 3, 1),
                      "narrow"));
  EXPECT_TRUE(checkInStorage(p.layout, 24, "chain").ok());
  Result<Layout> v = view(p.layout, Shape{6});
  EXPECT_FALSE(v.ok());
  EXPECT_FALSE(expressible(oReshape(p.oracle, Shape{6})));
}

//===--- Randomized chains ------------------------------------------------===//

struct ChainGen {
  std::mt19937_64 rng;
  explicit ChainGen(uint64_t seed) : rng(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[uniform(0, static_cast<int64_t>(v.size()) - 1)];
  }

  /// A random valid root: contiguous, strided, or padded; any rank <= 4.
  Layout randomRoot() {
    int64_t rank = uniform(0, 4);
    Shape sizes, strides;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(chance(0.05) ? 0 : uniform(1, 5));
    if (chance(0.5)) {
      strides = contiguousStrides(sizes);
    } else {
      for (int64_t d = 0; d < rank; ++d)
        strides.push_back(uniform(0, 9));
    }
    return L(sizes, strides, uniform(0, 4));
  }

  /// A shape with `n` elements: a random factorization, or a merge/split of
  /// neighbouring dims of `sizes` (views that often succeed).
  Shape viewShape(const Shape &sizes, int64_t n) {
    Shape out;
    if (chance(0.4) && sizes.size() >= 2) {
      size_t i = uniform(0, sizes.size() - 2);
      out.assign(sizes.begin(), sizes.begin() + i);
      out.push_back(sizes[i] * sizes[i + 1]);
      out.insert(out.end(), sizes.begin() + i + 2, sizes.end());
    } else if (n == 0) {
      out = {0, uniform(0, 3)};
    } else {
      int64_t m = n;
      while (m > 1) {
        std::vector<int64_t> divs;
        for (int64_t d = 2; d <= m; ++d)
          if (m % d == 0)
            divs.push_back(d);
        int64_t d = pick(divs);
        out.push_back(d);
        m /= d;
      }
    }
    for (int64_t k = uniform(0, 2); k > 0; --k)
      out.insert(out.begin() + uniform(0, out.size()), 1);
    return out;
  }

  /// One random valid op, applied to both sides. Returns false to stop.
  bool step(Pair &p) {
    const Shape &s = p.layout.sizes;
    int64_t r = p.layout.dim();
    auto anyDim = [&] { return uniform(0, std::max<int64_t>(r, 1) - 1); };
    auto negate = [&](int64_t d, int64_t rank) {
      return chance(0.3) ? d - std::max<int64_t>(rank, 1) : d;
    };
    switch (uniform(0, 13)) {
    case 0: { // view, or reshape when it must copy
      Shape shape = viewShape(s, p.layout.numel());
      Nd next = oReshape(p.oracle, shape);
      Result<Layout> v = view(p.layout, shape);
      Result<MaybeView> re = reshape(p.layout, shape);
      EXPECT_TRUE(re.ok()) << re.error();
      if (!v) {
        EXPECT_NE(v.error().find("view size is not compatible"),
                  std::string::npos)
            << v.error();
        EXPECT_TRUE(re && re->needsCopy && re->layout == contiguous(shape, 0))
            << p.trace;
        // For distinct indices, PyTorch's rule fails only when no strides
        // exist at all.
        if (distinct(p.oracle.data)) {
          EXPECT_FALSE(expressible(next))
              << p.trace << " -> view " << fmt(shape) << " failed";
        }
        return true;
      }
      EXPECT_TRUE(re && !re->needsCopy && re->layout == *v) << p.trace;
      return p.apply(v, next, "view " + fmt(shape));
    }
    case 1: {
      if (r == 0)
        return true;
      Shape dims(r);
      std::iota(dims.begin(), dims.end(), 0);
      std::shuffle(dims.begin(), dims.end(), rng);
      Shape asGiven = dims;
      for (int64_t &d : asGiven)
        d = negate(d, r);
      return p.apply(permute(p.layout, asGiven), oPermute(p.oracle, dims),
                     "permute " + fmt(asGiven));
    }
    case 2: {
      if (r == 0)
        return true;
      int64_t d0 = anyDim(), d1 = anyDim();
      return p.apply(transpose(p.layout, negate(d0, r), d1),
                     oTranspose(p.oracle, d0, d1), "transpose");
    }
    case 3: {
      if (r == 0)
        return true;
      int64_t d = anyDim(), n = s[d];
      auto bound = [&]() -> std::optional<int64_t> {
        if (chance(0.2))
          return std::nullopt;
        return uniform(-n - 2, n + 2);
      };
      std::optional<int64_t> start = bound(), end = bound();
      int64_t stepBy = uniform(1, 4);
      return p.apply(slice(p.layout, negate(d, r), start, end, stepBy),
                     oSlice(p.oracle, d, start, end, stepBy), "slice");
    }
    case 4: {
      if (r == 0)
        return true;
      int64_t d = anyDim();
      if (s[d] == 0)
        return true;
      int64_t i = uniform(0, s[d] - 1);
      return p.apply(select(p.layout, d, chance(0.3) ? i - s[d] : i),
                     oSelect(p.oracle, d, i), "select");
    }
    case 5: {
      if (r == 0)
        return true;
      int64_t d = anyDim(), start = uniform(0, s[d]);
      int64_t length = uniform(0, s[d] - start);
      return p.apply(narrow(p.layout, d, start, length),
                     oSlice(p.oracle, d, start, start + length, 1), "narrow");
    }
    case 6: {
      Shape target;
      for (int64_t k = uniform(0, 1); k > 0; --k)
        target.push_back(uniform(1, 3));
      for (int64_t v : s)
        target.push_back(v == 1 ? uniform(0, 3) : v);
      if (product(target) > 3000)
        return true;
      Shape given = target;
      size_t lead = target.size() - s.size();
      for (size_t d = lead; d < given.size(); ++d)
        if (chance(0.3) && s[d - lead] == given[d])
          given[d] = -1;
      return p.apply(expand(p.layout, given), oExpand(p.oracle, target),
                     "expand " + fmt(given));
    }
    case 7: {
      Shape dims, shape;
      for (int64_t d = 0; d < r; ++d)
        if (chance(0.5))
          dims.push_back(negate(d, r));
      std::shuffle(dims.begin(), dims.end(), rng);
      bool all = dims.empty(); // no dims: every size-1 dim
      for (int64_t d = 0; d < r; ++d) {
        bool named = all || std::count(dims.begin(), dims.end(), d) ||
                     std::count(dims.begin(), dims.end(), d - r);
        if (!(named && s[d] == 1))
          shape.push_back(s[d]);
      }
      return p.apply(squeeze(p.layout, dims), oReshape(p.oracle, shape),
                     "squeeze " + fmt(dims));
    }
    case 8: {
      int64_t d = uniform(0, r);
      Shape shape = s;
      shape.insert(shape.begin() + d, 1);
      return p.apply(unsqueeze(p.layout, negate(d, r + 1)),
                     oReshape(p.oracle, shape), "unsqueeze");
    }
    case 9: {
      int64_t a = anyDim(), b = anyDim();
      if (a > b)
        std::swap(a, b);
      Shape shape(s.begin(), s.begin() + std::min<int64_t>(a, r));
      if (r > 0) {
        shape.push_back(product(Shape(s.begin() + a, s.begin() + b + 1)));
        shape.insert(shape.end(), s.begin() + b + 1, s.end());
      } else {
        shape = {1};
      }
      Result<MaybeView> f = flatten(p.layout, negate(a, r), b);
      if (f && f->needsCopy) {
        EXPECT_EQ(f->layout, contiguous(shape, 0)) << p.trace;
        if (distinct(p.oracle.data)) {
          EXPECT_FALSE(expressible(oReshape(p.oracle, shape))) << p.trace;
        }
        return true;
      }
      Result<Layout> asLayout =
          f ? Result<Layout>(f->layout) : Result<Layout>::failure(f.error());
      return p.apply(asLayout, oReshape(p.oracle, shape), "flatten");
    }
    case 10: {
      if (r < 2)
        return true;
      int64_t d1 = anyDim(), d2 = anyDim();
      if (d1 == d2)
        return true;
      int64_t offset = uniform(-4, 4);
      return p.apply(diagonal(p.layout, offset, d1, negate(d2, r)),
                     oDiagonal(p.oracle, offset, d1, d2), "diagonal");
    }
    case 11: {
      if (r == 0)
        return true;
      int64_t d = anyDim(), size = uniform(0, s[d]), by = uniform(1, 3);
      return p.apply(unfold(p.layout, d, size, by),
                     oUnfold(p.oracle, d, size, by), "unfold");
    }
    case 12: {
      Shape dims, given;
      for (int64_t d = 0; d < r; ++d)
        if (chance(0.5)) {
          dims.push_back(d);
          given.push_back(negate(d, r));
        }
      return p.apply(flip(p.layout, given), oFlip(p.oracle, dims),
                     "flip " + fmt(given));
    }
    default: { // t()
      if (r > 2)
        return true;
      return p.apply(t(p.layout), r < 2 ? p.oracle : oTranspose(p.oracle, 0, 1),
                     "t");
    }
    }
  }
};

TEST(LayoutOracle, RandomViewChains) {
  ChainGen gen(0x5157a7a);
  int64_t ops = 0;
  for (int chain = 0; chain < 2500; ++chain) {
    Layout start = gen.randomRoot();
    int64_t storage = requiredStorageSize(start) + gen.uniform(0, 3);
    Result<Layout> rooted =
        asStrided(start.sizes, start.strides, start.offset, storage);
    ASSERT_TRUE(rooted.ok()) << rooted.error();
    Pair p = root(*rooted);
    for (int64_t k = gen.uniform(1, 8); k > 0; --k, ++ops) {
      if (!gen.step(p) || HasFailure())
        FAIL() << "chain " << chain << ": " << p.trace;
      // Every view stays inside the storage of its root.
      ASSERT_TRUE(checkInStorage(p.layout, storage, "chain").ok()) << p.trace;
    }
  }
  EXPECT_GT(ops, 8000);
}

//===--- Hand-written rules -----------------------------------------------===//

TEST(LayoutRules, TransposeOfContiguousCannotBeViewed) {
  Layout a = contiguous(Shape{3, 4});
  Result<Layout> at = t(a);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->sizes, (Shape{4, 3}));
  EXPECT_EQ(at->strides, (Shape{1, 4}));
  EXPECT_EQ(storageIndices(*select(*select(*at, 0, 1), 0, 2)),
            (std::vector<int64_t>{9}));
  Result<Layout> v = view(*at, Shape{12});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error(),
            "view: view size is not compatible with input tensor's size and "
            "stride (at least one dimension spans across two contiguous "
            "subspaces). Use .reshape(...) instead.");
  Result<MaybeView> r = reshape(*at, Shape{12});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->needsCopy);
  EXPECT_EQ(r->layout, L(Shape{12}, Shape{1}, 0));
  EXPECT_EQ(contiguous(at->sizes), L(Shape{4, 3}, Shape{3, 1}));
}

TEST(LayoutRules, SliceOffsetsAndClamping) {
  Layout a = contiguous(Shape{10});
  EXPECT_EQ(*slice(a, 0, 2, 5, 1), L(Shape{3}, Shape{1}, 2));
  EXPECT_EQ(*slice(a, 0, -3, std::nullopt, 1), L(Shape{3}, Shape{1}, 7));
  EXPECT_EQ(*slice(a, 0, -100, 100, 3), L(Shape{4}, Shape{3}, 0));
  EXPECT_EQ(*slice(a, 0, 7, 2, 1), L(Shape{0}, Shape{1}, 7));
  EXPECT_EQ(*slice(a, 0, 12, 20, 1), L(Shape{0}, Shape{1}, 10));
  EXPECT_EQ(*slice(a, 0, 1, std::nullopt, 4), L(Shape{3}, Shape{4}, 1));
  Result<Layout> bad = slice(a, 0, 0, 5, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().rfind("slice: slice step must be positive", 0), 0u);
  EXPECT_FALSE(slice(a, 0, 0, 5, -1).ok());
  EXPECT_EQ(slice(a, 1, 0, 5, 1).error(),
            "slice: Dimension out of range (expected to be in range of [-1, "
            "0], but got 1)");
  EXPECT_EQ(slice(L(Shape{}, Shape{}, 3), 0, 0, 1, 1).error(),
            "slice: slice() cannot be applied to a 0-dim tensor.");
  // A huge step must not overflow the stride silently.
  EXPECT_FALSE(
      slice(L(Shape{5}, Shape{1 << 20}), 0, 0, 5, int64_t{1} << 50).ok());
}

TEST(LayoutRules, ViewComputeStride) {
  // Size-1 dims of any stride never split a chunk.
  EXPECT_EQ(*view(L(Shape{2, 1, 2}, Shape{2, 9, 1}), Shape{4}),
            L(Shape{4}, Shape{1}));
  // Leading size-1 dims take numel * base, trailing ones the base stride.
  EXPECT_EQ(*view(contiguous(Shape{2, 2}, 5), Shape{1, 4, 1}),
            L(Shape{1, 4, 1}, Shape{4, 1, 1}, 5));
  // Two chunks: rows of a column slice.
  Layout rows = L(Shape{4, 2, 3}, Shape{10, 3, 1}, 0);
  EXPECT_EQ(*view(rows, Shape{4, 6}), L(Shape{4, 6}, Shape{10, 1}));
  EXPECT_EQ(*view(rows, Shape{2, 2, 6}), L(Shape{2, 2, 6}, Shape{20, 10, 1}));
  EXPECT_FALSE(view(rows, Shape{8, 3}).ok());
  EXPECT_FALSE(view(rows, Shape{24}).ok());
  // Stride 0 is its own chunk.
  EXPECT_EQ(*view(L(Shape{4, 3}, Shape{0, 1}), Shape{2, 2, 3}),
            L(Shape{2, 2, 3}, Shape{0, 0, 1}));
  EXPECT_FALSE(view(L(Shape{4, 3}, Shape{0, 1}), Shape{12}).ok());
  // 0-dim input: every new dim gets stride 1.
  EXPECT_EQ(*view(L(Shape{}, Shape{}, 4), Shape{1, 1}),
            L(Shape{1, 1}, Shape{1, 1}, 4));
  EXPECT_EQ(*view(L(Shape{1}, Shape{7}, 4), Shape{}), L(Shape{}, Shape{}, 4));
}

TEST(LayoutRules, ViewOfZeroSizeTensors) {
  Layout e = L(Shape{3, 0, 2}, Shape{5, 7, 11}, 1);
  // Same shape keeps the strides; any other shape gets resize strides.
  EXPECT_EQ(*view(e, Shape{3, 0, 2}), e);
  EXPECT_EQ(*view(e, Shape{2, 0, 3}), L(Shape{2, 0, 3}, Shape{3, 3, 1}, 1));
  EXPECT_EQ(*view(e, Shape{4, -1}), L(Shape{4, 0}, Shape{1, 1}, 1));
  EXPECT_EQ(view(e, Shape{0, -1}).error(),
            "view: cannot reshape tensor of 0 elements into shape [0, -1] "
            "because the unspecified dimension size -1 can be any value and "
            "is ambiguous");
  EXPECT_TRUE(isContiguous(e));
  EXPECT_FALSE(hasInternalOverlap(L(Shape{0, 3}, Shape{3, 0})));
  EXPECT_EQ(requiredStorageSize(e), 0);
  EXPECT_TRUE(storageIndices(e).empty());
  // An empty view fits any storage, as in PyTorch.
  EXPECT_TRUE(checkInStorage(L(Shape{0}, Shape{1}, 100), 1, "x").ok());
  EXPECT_TRUE(asStrided(Shape{0, 3}, Shape{1, 5}, 50, 12).ok());
}

TEST(LayoutRules, InferSize) {
  EXPECT_EQ(*inferSize(Shape{2, -1, 3}, 12, "view"), (Shape{2, 2, 3}));
  EXPECT_EQ(*inferSize(Shape{}, 1, "view"), Shape{});
  EXPECT_EQ(inferSize(Shape{5, 3}, 12, "view").error(),
            "view: shape '[5, 3]' is invalid for input of size 12");
  EXPECT_EQ(inferSize(Shape{-1, -1}, 12, "view").error(),
            "view: only one dimension can be inferred");
  EXPECT_EQ(inferSize(Shape{-2, 6}, 12, "reshape").error(),
            "reshape: invalid shape dimension -2");
  EXPECT_FALSE(inferSize(Shape{-1, 5}, 12, "view").ok());
  // A product that overflows int64 is a mismatch, not undefined behaviour.
  int64_t big = int64_t{1} << 40;
  EXPECT_FALSE(inferSize(Shape{big, big, big}, 12, "view").ok());
  EXPECT_FALSE(inferSize(Shape{big, big, -1}, 12, "view").ok());
  EXPECT_EQ(*inferSize(Shape{big, big, big, 0}, 0, "view"),
            (Shape{big, big, big, 0}));
}

TEST(LayoutRules, ContiguityQueries) {
  EXPECT_EQ(contiguousStrides(Shape{2, 0, 3}), (Shape{3, 3, 1}));
  EXPECT_EQ(contiguousStrides(Shape{2, 1, 3}), (Shape{3, 3, 1}));
  EXPECT_EQ(contiguousStrides(Shape{}), Shape{});
  EXPECT_EQ(contiguous(Shape{4}, 3), L(Shape{4}, Shape{1}, 3));
  // Size-1 dims are ignored, whatever their stride.
  EXPECT_TRUE(isContiguous(L(Shape{1, 3}, Shape{99, 1})));
  EXPECT_TRUE(isContiguous(L(Shape{3, 1}, Shape{1, -5})));
  EXPECT_TRUE(isContiguous(L(Shape{2, 1, 3}, Shape{3, 0, 1}, 8)));
  EXPECT_TRUE(isContiguous(L(Shape{}, Shape{}, 2)));
  EXPECT_FALSE(isContiguous(L(Shape{3, 2}, Shape{1, 3})));
  EXPECT_FALSE(isContiguous(L(Shape{3}, Shape{2})));
  EXPECT_FALSE(isContiguous(L(Shape{3}, Shape{-1}, 2)));
  EXPECT_TRUE(hasInternalOverlap(L(Shape{2, 3}, Shape{0, 1})));
  EXPECT_FALSE(hasInternalOverlap(L(Shape{1, 3}, Shape{0, 1})));
  // Overlap without a zero stride is "too hard" in PyTorch, not "yes".
  EXPECT_FALSE(hasInternalOverlap(L(Shape{3, 2}, Shape{1, 1})));
}

TEST(LayoutRules, StorageBoundsWithNegativeStrides) {
  Layout f = L(Shape{3, 4}, Shape{-4, -1}, 11); // flip of arange(12).view(3, 4)
  EXPECT_EQ(indexRange(f), std::make_pair(int64_t{0}, int64_t{11}));
  EXPECT_EQ(requiredStorageSize(f), 12);
  EXPECT_EQ(storageIndices(L(Shape{3}, Shape{-2}, 5)),
            (std::vector<int64_t>{5, 3, 1}));
  EXPECT_TRUE(checkInStorage(f, 12, "flip").ok());
  Result<Layout> low = checkInStorage(L(Shape{4}, Shape{-1}, 2), 12, "flip");
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().rfind("flip: ", 0), 0u);
  EXPECT_NE(low.error().find("storage index -1"), std::string::npos);
  EXPECT_NE(low.error().find("out of bounds for storage of size 12"),
            std::string::npos);
  Result<Layout> high = checkInStorage(L(Shape{4}, Shape{1}, 10), 12, "view");
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.error(),
            "view: sizes [4], strides [1], storage offset 10 requiring a "
            "storage size of 14 elements are out of bounds for storage of "
            "size 12 elements");
  EXPECT_EQ(storageIndices(L(Shape{}, Shape{}, 6)), (std::vector<int64_t>{6}));
}

TEST(LayoutRules, AsStrided) {
  EXPECT_EQ(*asStrided(Shape{3}, Shape{1}, 2, 10), L(Shape{3}, Shape{1}, 2));
  EXPECT_EQ(asStrided(Shape{4}, Shape{-1}, 3, 12).error(),
            "as_strided: Negative strides are not supported at the moment, "
            "got strides: [-1]");
  EXPECT_NE(asStrided(Shape{4}, Shape{1}, 10, 12)
                .error()
                .find("out of bounds for storage of size 12"),
            std::string::npos);
  EXPECT_EQ(asStrided(Shape{4}, Shape{1}, -1, 12).error(),
            "as_strided: invalid storage offset -1");
  EXPECT_NE(asStrided(Shape{4}, Shape{1, 1}, 0, 12)
                .error()
                .find("mismatch in length"),
            std::string::npos);
  EXPECT_FALSE(asStrided(Shape{-1}, Shape{1}, 0, 12).ok());
  int64_t big = int64_t{1} << 62;
  EXPECT_FALSE(asStrided(Shape{big, 4}, Shape{big, 1}, 0, 12).ok());
  EXPECT_FALSE(asStrided(Shape{3}, Shape{big}, big, 12).ok());
}

TEST(LayoutRules, WrapDimAndMessages) {
  EXPECT_EQ(*wrapDim(-1, 3, "x"), 2);
  EXPECT_EQ(*wrapDim(0, 0, "x"), 0);
  EXPECT_EQ(*wrapDim(-1, 0, "x"), 0);
  EXPECT_EQ(wrapDim(1, 0, "x").error(),
            "x: Dimension out of range (expected to be in range of [-1, 0], "
            "but got 1)");
  EXPECT_EQ(transpose(contiguous(Shape{3, 4}), 0, 2).error(),
            "transpose: Dimension out of range (expected to be in range of "
            "[-2, 1], but got 2)");
  EXPECT_EQ(formatList(Shape{}), "[]");
  EXPECT_EQ(formatList(Shape{3, -1, 0}), "[3, -1, 0]");
  EXPECT_EQ(t(contiguous(Shape{2, 2, 2})).error(),
            "t: t() expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST(LayoutRules, BroadcastAndReduce) {
  EXPECT_EQ(*broadcastShapes(Shape{3, 1}, Shape{1, 4}, "add"), (Shape{3, 4}));
  EXPECT_EQ(*broadcastShapes(Shape{}, Shape{2, 3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(*broadcastShapes(Shape{0, 3}, Shape{1}, "add"), (Shape{0, 3}));
  EXPECT_EQ(broadcastShapes(Shape{2, 3}, Shape{4}, "add").error(),
            "add: The size of tensor a (3) must match the size of tensor b "
            "(4) at non-singleton dimension 1");
  EXPECT_EQ(*reduceShape(Shape{2, 3, 4}, Shape{-1, 0}, false, "sum"),
            (Shape{3}));
  EXPECT_EQ(*reduceShape(Shape{2, 3, 4}, Shape{1}, true, "sum"),
            (Shape{2, 1, 4}));
  EXPECT_EQ(*reduceShape(Shape{2, 3}, Shape{}, true, "sum"), (Shape{1, 1}));
  EXPECT_EQ(*reduceShape(Shape{2, 3}, Shape{}, false, "sum"), Shape{});
  EXPECT_EQ(*reduceShape(Shape{}, Shape{0}, true, "sum"), Shape{});
  EXPECT_EQ(reduceShape(Shape{3, 4}, Shape{1, -1}, false, "sum").error(),
            "sum: dim 1 appears multiple times in the list of dims");
}

TEST(LayoutRules, ExpandSqueezeUnsqueeze) {
  Layout a = contiguous(Shape{3});
  EXPECT_EQ(*expand(a, Shape{2, 3}), L(Shape{2, 3}, Shape{0, 1}));
  EXPECT_EQ(*expand(a, Shape{1, 3}), L(Shape{1, 3}, Shape{3, 1}));
  EXPECT_EQ(*expand(L(Shape{}, Shape{}, 5), Shape{3, 1}),
            L(Shape{3, 1}, Shape{0, 0}, 5));
  EXPECT_EQ(expand(a, Shape{2, 4}).error(),
            "expand: The expanded size of the tensor (4) must match the "
            "existing size (3) at non-singleton dimension 1.  Target sizes: "
            "[2, 4].  Tensor sizes: [3]");
  EXPECT_EQ(expand(contiguous(Shape{3, 4}), Shape{4}).error(),
            "expand: the number of sizes provided (1) must be greater or "
            "equal to the number of dimensions in the tensor (2)");
  int64_t big = int64_t{1} << 40;
  EXPECT_FALSE(expand(L(Shape{1}, Shape{1}), Shape{big, big}).ok());

  Layout s = L(Shape{1, 3, 1, 2, 1}, Shape{17, 2, 5, 1, 3}, 2);
  EXPECT_EQ(*squeeze(s), L(Shape{3, 2}, Shape{2, 1}, 2));
  EXPECT_EQ(*squeeze(s, Shape{0, -1, 1}), L(Shape{3, 1, 2}, Shape{2, 5, 1}, 2));
  EXPECT_EQ(squeeze(s, Shape{0, -5}).error(),
            "squeeze: dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(*squeeze(L(Shape{}, Shape{}, 1), Shape{-1}),
            L(Shape{}, Shape{}, 1));

  Layout m = L(Shape{3, 4}, Shape{1, 3}, 0);
  EXPECT_EQ(*unsqueeze(m, 0), L(Shape{1, 3, 4}, Shape{3, 1, 3}));
  EXPECT_EQ(*unsqueeze(m, 1), L(Shape{3, 1, 4}, Shape{1, 12, 3}));
  EXPECT_EQ(*unsqueeze(m, -1), L(Shape{3, 4, 1}, Shape{1, 3, 1}));
  EXPECT_FALSE(unsqueeze(m, 3).ok());
}

TEST(LayoutRules, FlattenDiagonalUnfold) {
  Layout m = contiguous(Shape{2, 3, 4}, 1);
  EXPECT_EQ(*flatten(m, 0, -1), (MaybeView{L(Shape{24}, Shape{1}, 1), false}));
  Result<MaybeView> ft = flatten(*transpose(m, 0, 2), 1, 2);
  ASSERT_TRUE(ft.ok());
  EXPECT_EQ(*ft, (MaybeView{L(Shape{4, 6}, Shape{6, 1}, 0), true}));
  EXPECT_EQ(*flatten(L(Shape{}, Shape{}, 3), 0, -1),
            (MaybeView{L(Shape{1}, Shape{1}, 3), false}));
  EXPECT_EQ(flatten(m, 2, 1).error(),
            "flatten: flatten() has invalid args: start_dim cannot come after "
            "end_dim");

  Layout sq = contiguous(Shape{3, 4});
  EXPECT_EQ(*diagonal(sq, 1, 0, 1), L(Shape{3}, Shape{5}, 1));
  EXPECT_EQ(*diagonal(sq, -2, 0, 1), L(Shape{1}, Shape{5}, 8));
  EXPECT_EQ(*diagonal(sq, 5, 0, 1), L(Shape{0}, Shape{5}, 0));
  EXPECT_EQ(diagonal(sq, 0, 1, -1).error(),
            "diagonal: diagonal dimensions cannot be identical 1, -1");

  EXPECT_EQ(*unfold(contiguous(Shape{12}), 0, 4, 3),
            L(Shape{3, 4}, Shape{3, 1}));
  EXPECT_EQ(*unfold(L(Shape{}, Shape{}, 2), 0, 1, 1), L(Shape{1}, Shape{1}, 2));
  EXPECT_EQ(unfold(sq, 0, 4, 1).error(),
            "unfold: maximum size for tensor at dimension 0 is 3 but size is "
            "4");
  EXPECT_EQ(unfold(sq, 0, 2, 0).error(), "unfold: step is 0 but must be > 0");
}

TEST(LayoutRules, FlipUsesNegativeStrides) {
  Layout m = contiguous(Shape{3, 4});
  Result<Layout> f = flip(m, Shape{0});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, L(Shape{3, 4}, Shape{-4, 1}, 8));
  EXPECT_EQ(*flip(*f, Shape{-2}), m); // flipping twice is the identity
  EXPECT_EQ(*flip(m, Shape{}), m);
  EXPECT_EQ(*flip(L(Shape{2, 0}, Shape{0, 1}, 4), Shape{0, 1}),
            L(Shape{2, 0}, Shape{0, 1}, 4));
  EXPECT_EQ(*flip(L(Shape{}, Shape{}, 4), Shape{0}), L(Shape{}, Shape{}, 4));
  EXPECT_EQ(flip(m, Shape{1, -1}).error(),
            "flip: dim 1 appears multiple times in the list of dims");
  // A flipped layout is out of reach of as_strided but still checkable.
  EXPECT_TRUE(checkInStorage(*f, 12, "flip").ok());
  EXPECT_FALSE(asStrided(f->sizes, f->strides, f->offset, 12).ok());
}

TEST(LayoutRules, PermuteSelectNarrowErrors) {
  Layout m = contiguous(Shape{3, 4});
  EXPECT_EQ(permute(m, Shape{0, 0})
                .error()
                .rfind("permute: duplicate dims are not allowed.", 0),
            0u);
  EXPECT_NE(permute(m, Shape{0})
                .error()
                .find("input.dim() = 2 is not equal to len(dims) = 1"),
            std::string::npos);
  EXPECT_EQ(select(m, 0, 3).error(),
            "select: select(): index 3 out of range for tensor of size [3, 4] "
            "at dimension 0");
  EXPECT_EQ(*select(m, -1, -1), L(Shape{3}, Shape{4}, 3));
  EXPECT_EQ(narrow(m, 1, 2, 3).error(),
            "narrow: start (2) + length (3) exceeds dimension size (4).");
  EXPECT_EQ(*narrow(m, 1, -1, 1), L(Shape{3, 1}, Shape{4, 1}, 3));
  EXPECT_EQ(*narrow(m, 1, 4, 0), L(Shape{3, 0}, Shape{4, 1}, 4));
}

} // namespace
