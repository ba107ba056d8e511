//===- LruCacheTest.cpp - the one eviction policy of strata's caches ------===//
//
// strata/Runtime/LruCache.h: lookups and inserts make a key the most
// recently used, the least recently used goes first, the bound holds after
// every insert and capacity change, and evicted values reach the caller.
//
//===----------------------------------------------------------------------===//
#include "strata/Runtime/LruCache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using strata::runtime::LruCache;

namespace {

using Keys = std::vector<std::string>;

TEST(LruCache, EvictsTheLeastRecentlyUsed) {
  LruCache<std::string, int> c(3);
  c.insert("a", 1);
  c.insert("b", 2);
  c.insert("c", 3);
  EXPECT_EQ(c.keys(), (Keys{"c", "b", "a"}));
  ASSERT_NE(c.find("a"), nullptr); // a is now the most recently used
  EXPECT_EQ(c.keys(), (Keys{"a", "c", "b"}));
  std::vector<int> evicted;
  c.insert("d", 4, &evicted);
  EXPECT_EQ(evicted, std::vector<int>{2});
  EXPECT_EQ(c.find("b"), nullptr);
  EXPECT_EQ(c.keys(), (Keys{"d", "a", "c"}));
  EXPECT_EQ(c.size(), 3);
  EXPECT_EQ(c.evictions(), 1);
}

TEST(LruCache, PeekLeavesTheOrder) {
  LruCache<std::string, int> c(2);
  c.insert("a", 1);
  c.insert("b", 2);
  ASSERT_NE(c.peek("a"), nullptr);
  EXPECT_EQ(*c.peek("a"), 1);
  c.insert("c", 3); // a was not touched: it goes
  EXPECT_EQ(c.peek("a"), nullptr);
  EXPECT_EQ(c.keys(), (Keys{"c", "b"}));
}

TEST(LruCache, InsertReplacesAndTouches) {
  LruCache<std::string, int> c(2);
  c.insert("a", 1);
  c.insert("b", 2);
  std::vector<int> old;
  EXPECT_EQ(c.insert("a", 10, &old), 10);
  EXPECT_EQ(old, std::vector<int>{1});
  EXPECT_EQ(c.keys(), (Keys{"a", "b"}));
  EXPECT_EQ(c.size(), 2);
  EXPECT_EQ(c.evictions(), 0);
}

TEST(LruCache, TheBoundHoldsAcrossCapacityChanges) {
  LruCache<int, int> c(8);
  for (int i = 0; i < 20; ++i) {
    c.insert(i, i * i);
    EXPECT_LE(c.size(), 8);
  }
  EXPECT_EQ(c.evictions(), 12);
  std::vector<int> evicted;
  c.setCapacity(3, &evicted);
  EXPECT_EQ(c.size(), 3);
  EXPECT_EQ(evicted.size(), 5u);
  EXPECT_EQ(evicted.front(), 12 * 12); // least recently used first
  EXPECT_EQ(c.keys(), (std::vector<int>{19, 18, 17}));
  c.setCapacity(0); // at least one
  EXPECT_EQ(c.capacity(), 1);
  EXPECT_EQ(c.keys(), (std::vector<int>{19}));
}

TEST(LruCache, EraseAndClearHandValuesBack) {
  LruCache<int, std::shared_ptr<int>> c(4);
  auto value = std::make_shared<int>(5);
  c.insert(1, value);
  c.insert(2, std::make_shared<int>(6));
  EXPECT_TRUE(c.erase(1));
  EXPECT_FALSE(c.erase(1));
  EXPECT_EQ(value.use_count(), 1); // the cache let go of it
  std::vector<std::shared_ptr<int>> dropped;
  c.clear(&dropped);
  EXPECT_EQ(c.size(), 0);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(*dropped[0], 6);
  EXPECT_EQ(c.evictions(), 0); // erase and clear are not evictions
}

} // namespace
