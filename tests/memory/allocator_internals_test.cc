// The caching allocator's building blocks: segregated bins (small-pool best fit) and the
// open-addressing pointer map (live blocks).
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/memory/pointer_map.h"
#include "tessera/memory/segregated_bins.h"

namespace tessera::memory {
namespace {

struct Node {
  int64_t size = 0;
  Node* bin_prev = nullptr;
  Node* bin_next = nullptr;
};

TEST(SegregatedBinsTest, FindsSmallestSizeAtLeastTheRequest) {
  SegregatedBins<Node> bins(512, 2 << 20);
  EXPECT_EQ(bins.FindBestFit(1), nullptr);
  EXPECT_EQ(bins.LargestSize(), 0);
  Node a{1024}, b{64 * 512}, c{65 * 512}, d{2 << 20};  // c and d sit in later bitmap words
  for (Node* n : {&a, &b, &c, &d}) bins.Insert(n);
  EXPECT_EQ(bins.size(), 4);
  EXPECT_EQ(bins.FindBestFit(1), &a);
  EXPECT_EQ(bins.FindBestFit(1024), &a);
  EXPECT_EQ(bins.FindBestFit(1025), &b);  // rounds up to the next granule
  EXPECT_EQ(bins.FindBestFit(64 * 512 + 1), &c);
  EXPECT_EQ(bins.FindBestFit(65 * 512 + 1), &d);
  EXPECT_EQ(bins.LargestSize(), 2 << 20);
  bins.Remove(&d);
  EXPECT_EQ(bins.FindBestFit(65 * 512 + 1), nullptr);
  EXPECT_EQ(bins.LargestSize(), 65 * 512);
  bins.Remove(&b);
  EXPECT_EQ(bins.FindBestFit(1025), &c);
  EXPECT_EQ(bins.size(), 2);
}

TEST(SegregatedBinsTest, RandomAgainstMultiset) {
  SegregatedBins<Node> bins(512, 2 << 20);
  std::vector<Node> nodes(500);
  std::multiset<int64_t> sizes;
  std::vector<Node*> in;
  std::mt19937_64 rng(5);
  for (int op = 0; op < 5000; ++op) {
    if (in.size() < nodes.size() && (in.empty() || rng() % 2 == 0)) {
      Node* n = nullptr;
      for (Node& candidate : nodes) {
        if (candidate.size == 0) { n = &candidate; break; }
      }
      n->size = 512 * static_cast<int64_t>(1 + rng() % 4096);
      bins.Insert(n);
      sizes.insert(n->size);
      in.push_back(n);
    } else {
      const size_t i = rng() % in.size();
      bins.Remove(in[i]);
      sizes.erase(sizes.find(in[i]->size));
      in[i]->size = 0;
      in.erase(in.begin() + static_cast<int64_t>(i));
    }
    const int64_t want = 1 + static_cast<int64_t>(rng() % (2 << 20));
    Node* fit = bins.FindBestFit(want);
    auto expected = sizes.lower_bound(want);
    if (expected == sizes.end()) {
      ASSERT_EQ(fit, nullptr) << op;
    } else {
      ASSERT_NE(fit, nullptr) << op;
      ASSERT_EQ(fit->size, *expected) << op;
    }
    ASSERT_EQ(bins.LargestSize(), sizes.empty() ? 0 : *sizes.rbegin());
    ASSERT_EQ(bins.size(), static_cast<int64_t>(sizes.size()));
  }
}

TEST(PointerMapTest, RandomAgainstStdMap) {
  PointerMap<int> map;
  std::map<const void*, int*> reference;
  std::vector<int> values(4000);
  std::mt19937_64 rng(9);
  // Keys 512 apart, like blocks, from a small range so that inserts and erases collide.
  auto key = [](uint64_t k) { return reinterpret_cast<const void*>((k + 1) * 512); };
  for (int op = 0; op < 20000; ++op) {
    const uint64_t k = rng() % 3000;
    const bool present = reference.count(key(k)) > 0;
    if (!present && rng() % 3 != 0) {
      map.Insert(key(k), &values[k]);
      reference[key(k)] = &values[k];
    } else {
      ASSERT_EQ(map.Erase(key(k)), present) << op;
      reference.erase(key(k));
    }
    const uint64_t probe = rng() % 3000;
    auto it = reference.find(key(probe));
    ASSERT_EQ(map.Find(key(probe)), it == reference.end() ? nullptr : it->second) << op;
    ASSERT_EQ(map.size(), reference.size());
  }
  for (auto& [k, v] : reference) ASSERT_EQ(map.Find(k), v);  // every survivor still found
}

}  // namespace
}  // namespace tessera::memory
