//===- ShapeTest.cpp - Shape behaves as the std::vector it replaced -------===//
//
// Shape (strata/Layout/Shape.h) holds six elements inline and spills to
// the heap beyond: every operation is checked against std::vector<int64_t>
// on both sides of the spill, and the conversions code written for
// std::vector relies on.
//
//===----------------------------------------------------------------------===//
#include "strata/Layout/Shape.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <span>
#include <vector>

using strata::layout::Shape;

namespace {

std::vector<int64_t> asVector(const Shape &s) { return {s.begin(), s.end()}; }

TEST(Shape, BehavesAsAVectorAcrossTheInlineLimit) {
  for (size_t n : {0u, 1u, 5u, 6u, 7u, 13u}) {
    std::vector<int64_t> v(n);
    std::iota(v.begin(), v.end(), 10);
    Shape s(v.begin(), v.end());
    EXPECT_EQ(asVector(s), v);
    s.push_back(99);
    v.push_back(99);
    s.insert(s.begin(), -1);
    v.insert(v.begin(), -1);
    s.insert(s.begin() + 1, 2, 7);
    v.insert(v.begin() + 1, 2, 7);
    s.insert(s.end() - 1, {4, 5});
    v.insert(v.end() - 1, {4, 5});
    EXPECT_EQ(asVector(s), v) << n;
    s.erase(s.begin() + 2);
    v.erase(v.begin() + 2);
    s.erase(s.begin(), s.begin() + 2);
    v.erase(v.begin(), v.begin() + 2);
    EXPECT_EQ(asVector(s), v) << n;
    Shape copy = s, moved = std::move(copy);
    EXPECT_EQ(moved, s);
    EXPECT_TRUE(copy.empty());
    copy = moved;
    EXPECT_EQ(copy, s);
    s.resize(n + 9, 3);
    v.resize(n + 9, 3);
    EXPECT_EQ(asVector(s), v);
    s.pop_back();
    v.pop_back();
    EXPECT_EQ(s.back(), v.back());
    EXPECT_EQ(s.size(), v.size());
    Shape other = {1, 2};
    other.swap(s);
    EXPECT_EQ(asVector(other), v);
    EXPECT_EQ(s, (Shape{1, 2}));
  }
}

TEST(Shape, ConvertsAndComparesAsAVector) {
  std::vector<int64_t> v = {2, 3, 4};
  Shape s = v;                   // from a vector
  std::vector<int64_t> back = s; // to a vector
  EXPECT_EQ(back, v);
  EXPECT_TRUE(s == v && v == s);
  EXPECT_TRUE(s != (Shape{2, 3}));
  EXPECT_LT((Shape{2, 3}), s);
  EXPECT_LT(s, (Shape{2, 4}));
  std::span<const int64_t> view = s;
  EXPECT_EQ(view.size(), 3u);
  EXPECT_EQ(view.data(), s.data());
  EXPECT_EQ(Shape(3), (Shape{0, 0, 0}));
  EXPECT_EQ(Shape(2, 5), (Shape{5, 5}));
  std::map<Shape, int> keyed{{s, 1}, {Shape{1}, 2}};
  EXPECT_EQ(keyed.begin()->second, 2);
  EXPECT_THROW(s.at(3), std::out_of_range);
}

} // namespace
