#include "tessera/memory/caching_allocator.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

char* Alloc(CachingAllocator& a, int64_t bytes) {
  absl::StatusOr<void*> p = a.Allocate(bytes);
  EXPECT_TRUE(p.ok()) << p.status();
  return static_cast<char*>(p.value_or(nullptr));
}

TEST(SizeClassTest, RoundsSmallTo512AndLargeToQuarterPowersOfTwo) {
  EXPECT_EQ(RoundToSizeClass(1), 512);
  EXPECT_EQ(RoundToSizeClass(512), 512);
  EXPECT_EQ(RoundToSizeClass(513), 1024);
  EXPECT_EQ(RoundToSizeClass(1 * kMiB), 1 * kMiB);
  EXPECT_EQ(RoundToSizeClass(1 * kMiB + 1), 1 * kMiB + 256 * kKiB);  // 1.25 MiB
  EXPECT_EQ(RoundToSizeClass(3 * kMiB), 3 * kMiB);                    // 1.5 * 2 MiB
  EXPECT_EQ(RoundToSizeClass(5 * kMiB + 1), 6 * kMiB);                // 1.5 * 4 MiB
  EXPECT_EQ(RoundToSizeClass(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(RoundToSizeClass(100 * kMiB), 112 * kMiB);                // 1.75 * 64 MiB
  EXPECT_EQ(SegmentSizeFor(512), 2 * kMiB);
  EXPECT_EQ(SegmentSizeFor(1 * kMiB), 2 * kMiB);
  EXPECT_EQ(SegmentSizeFor(6 * kMiB), 20 * kMiB);
  EXPECT_EQ(SegmentSizeFor(12 * kMiB), 12 * kMiB);
}

TEST(CachingAllocatorTest, AlignsAndRejectsBadSizes) {
  HostMemory host;
  CachingAllocator a(host);
  for (int64_t bytes : {1, 100, 513, 4000, 70000, 3 * 1024 * 1024 + 7}) {
    char* p = Alloc(a, bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kMinBlock, 0u) << bytes;
    EXPECT_EQ(*a.BlockSize(p), RoundToSizeClass(bytes)) << bytes;
  }
  EXPECT_EQ(a.Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.Allocate(-5).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.Allocate(INT64_MAX).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(CachingAllocatorTest, SplitsOneSegmentAndMergesFreedNeighbours) {
  HostMemory host;
  CachingAllocator a(host);
  char* pa = Alloc(a, 1000);  // 1024
  char* pb = Alloc(a, 2000);  // 2048
  char* pc = Alloc(a, 3000);  // 3072
  EXPECT_EQ(pb, pa + 1024);   // carved in order from one 2 MiB segment
  EXPECT_EQ(pc, pb + 2048);
  EXPECT_EQ(a.stats().num_segments, 1);
  EXPECT_EQ(a.stats().num_free_blocks, 1);  // the tail
  EXPECT_EQ(a.stats().largest_free_block, 2 * kMiB - 6144);

  // Free B then A: one merged 3072-byte block before C, plus the tail.
  ASSERT_TRUE(a.Free(pb).ok());
  EXPECT_EQ(a.stats().num_free_blocks, 2);
  ASSERT_TRUE(a.Free(pa).ok());
  EXPECT_EQ(a.stats().num_free_blocks, 2);
  // Best fit: a 3072 request takes the merged block (exact), not the big tail.
  char* pd = Alloc(a, 3072);
  EXPECT_EQ(pd, pa);
  EXPECT_EQ(a.stats().num_free_blocks, 1);

  // Free C (merges with the tail), then D: the whole segment is one free block again.
  ASSERT_TRUE(a.Free(pc).ok());
  EXPECT_EQ(a.stats().num_free_blocks, 1);
  EXPECT_EQ(a.stats().largest_free_block, 2 * kMiB - 3072);
  ASSERT_TRUE(a.Free(pd).ok());
  EXPECT_EQ(a.stats().num_free_blocks, 1);
  EXPECT_EQ(a.stats().largest_free_block, 2 * kMiB);
  EXPECT_EQ(a.stats().num_segment_allocs, 1);
}

TEST(CachingAllocatorTest, MergesBothSidesAtOnce) {
  HostMemory host;
  CachingAllocator a(host);
  char* p[4];
  for (char*& q : p) q = Alloc(a, 512 * kKiB);  // four blocks fill the 2 MiB segment
  EXPECT_EQ(a.stats().num_free_blocks, 0);
  ASSERT_TRUE(a.Free(p[0]).ok());
  ASSERT_TRUE(a.Free(p[2]).ok());
  EXPECT_EQ(a.stats().num_free_blocks, 2);
  ASSERT_TRUE(a.Free(p[1]).ok());  // joins p[0] and p[2]
  EXPECT_EQ(a.stats().num_free_blocks, 1);
  EXPECT_EQ(a.stats().largest_free_block, 1536 * kKiB);
  // A 1.5 MiB request is large-pool and does not take the small pool's block.
  char* big = Alloc(a, 1536 * kKiB);
  EXPECT_EQ(a.stats().num_segments, 2);
  EXPECT_NE(big, p[0]);
}

// Fragmentation = 1 - largest free block / free bytes, computed by hand.
TEST(CachingAllocatorTest, FragmentationOnCraftedSequence) {
  HostMemory host;
  CachingAllocator a(host);
  std::vector<char*> p;
  for (int i = 0; i < 8; ++i) p.push_back(Alloc(a, 256 * kKiB));  // fill one 2 MiB segment
  EXPECT_EQ(a.stats().fragmentation, 0.0);                         // nothing free
  for (int i : {0, 2, 4, 5, 6}) ASSERT_TRUE(a.Free(p[i]).ok());
  // Free pieces: 256 KiB, 256 KiB, 768 KiB (4-6 merged): 1280 KiB free, largest 768 KiB.
  CachingAllocatorStats s = a.stats();
  EXPECT_EQ(s.num_free_blocks, 3);
  EXPECT_EQ(s.largest_free_block, 768 * kKiB);
  EXPECT_EQ(s.bytes_reserved - s.bytes_in_use, 1280 * kKiB);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 768.0 / 1280.0);  // 0.4
  ASSERT_TRUE(a.Free(p[3]).ok());  // 2..6 merge: 1280 KiB + 256 KiB in two pieces
  EXPECT_DOUBLE_EQ(a.stats().fragmentation, 1.0 - 1280.0 / 1536.0);
  ASSERT_TRUE(a.Free(p[1]).ok());  // 0..6 merge: one piece
  EXPECT_DOUBLE_EQ(a.stats().fragmentation, 0.0);
}

TEST(CachingAllocatorTest, InUseReservedPeakAndEmptyCache) {
  HostMemory host;
  CachingAllocator a(host);
  char* small = Alloc(a, 1000);
  char* large = Alloc(a, 3 * kMiB);
  CachingAllocatorStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 1024 + 3 * kMiB);
  EXPECT_EQ(s.bytes_requested, 1000 + 3 * kMiB);
  EXPECT_EQ(s.bytes_reserved, 2 * kMiB + 20 * kMiB);
  EXPECT_EQ(host.bytes_allocated(), s.bytes_reserved);
  EXPECT_EQ(s.num_segments, 2);
  EXPECT_EQ(s.num_live_allocations, 2);
  ASSERT_TRUE(a.Free(large).ok());
  char* small2 = Alloc(a, 2048);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 1024 + 2048);
  EXPECT_EQ(s.peak_bytes_in_use, 1024 + 3 * kMiB);
  EXPECT_EQ(s.num_segment_allocs, 2);  // served from the cache
  // The large segment is wholly free and goes back; the small one holds live blocks.
  EXPECT_EQ(a.EmptyCache(), 20 * kMiB);
  s = a.stats();
  EXPECT_EQ(s.bytes_reserved, 2 * kMiB);
  EXPECT_EQ(s.peak_bytes_reserved, 22 * kMiB);
  EXPECT_EQ(s.num_segments, 1);
  EXPECT_EQ(host.bytes_allocated(), 2 * kMiB);
  ASSERT_TRUE(a.Free(small).ok());
  ASSERT_TRUE(a.Free(small2).ok());
  EXPECT_EQ(a.EmptyCache(), 2 * kMiB);
  EXPECT_EQ(a.stats().bytes_reserved, 0);
  EXPECT_EQ(a.stats().num_free_blocks, 0);
  EXPECT_EQ(host.bytes_allocated(), 0);
}

TEST(CachingAllocatorTest, LargeRequestsGetTheirOwnSegment) {
  HostMemory host;
  CachingAllocator a(host);
  char* p = Alloc(a, 64 * kMiB);
  EXPECT_EQ(a.stats().bytes_reserved, 64 * kMiB);
  ASSERT_TRUE(a.Free(p).ok());
  // A smaller large request reuses the cached 64 MiB block, splitting it.
  char* q = Alloc(a, 12 * kMiB);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.stats().largest_free_block, 52 * kMiB);
  EXPECT_EQ(a.stats().num_segment_allocs, 1);
}

TEST(CachingAllocatorTest, OutOfMemoryEmptiesCacheRetriesThenFails) {
  HostMemory host(/*capacity=*/20 * kMiB);
  CachingAllocator a(host);
  ASSERT_TRUE(a.Free(Alloc(a, 1000)).ok());  // caches a 2 MiB small segment
  EXPECT_EQ(a.stats().bytes_reserved, 2 * kMiB);
  // 5 MiB needs a 20 MiB segment: only 18 MiB left, so the cache is emptied and it retries.
  char* p = Alloc(a, 5 * kMiB);
  ASSERT_NE(p, nullptr);
  CachingAllocatorStats s = a.stats();
  EXPECT_EQ(s.num_oom_retries, 1);
  EXPECT_EQ(s.num_segment_frees, 1);
  EXPECT_EQ(s.bytes_reserved, 20 * kMiB);
  // 15 MiB rounds to 16 MiB: the 15 MiB remainder is too small and the device is full.
  absl::StatusOr<void*> q = a.Allocate(15 * kMiB);
  ASSERT_EQ(q.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(q.status().message(), HasSubstr("allocating 15 MiB"));
  EXPECT_THAT(q.status().message(), HasSubstr("size class 16 MiB"));
  EXPECT_THAT(q.status().message(), HasSubstr("5 MiB in use"));
  EXPECT_THAT(q.status().message(), HasSubstr("20 MiB reserved"));
  EXPECT_EQ(a.stats().bytes_in_use, 5 * kMiB);  // unchanged
  EXPECT_EQ(a.stats().num_oom_retries, 2);
  // The remainder still serves what fits.
  EXPECT_NE(Alloc(a, 14 * kMiB), nullptr);
}

TEST(CachingAllocatorTest, DoubleFreeAndForeignPointersAreErrors) {
  HostMemory host;
  CachingAllocator a(host);
  char* p = Alloc(a, 4096);
  char* q = Alloc(a, 4096);
  ASSERT_TRUE(a.Free(p).ok());
  CachingAllocatorStats before = a.stats();
  absl::Status twice = a.Free(p);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr(absl::StrFormat("%p", static_cast<void*>(p))));
  EXPECT_EQ(a.Free(q + 512).code(), absl::StatusCode::kInvalidArgument);  // inside a block
  int local = 0;
  EXPECT_EQ(a.Free(&local).code(), absl::StatusCode::kInvalidArgument);
  CachingAllocatorStats after = a.stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.num_free_blocks, before.num_free_blocks);
  EXPECT_EQ(after.num_free_calls, before.num_free_calls);
  EXPECT_TRUE(a.Free(q).ok());  // still works
  EXPECT_EQ(a.stats().num_free_blocks, 1);
}

// Seeded random allocations and frees: live blocks never overlap and stats stay consistent.
TEST(CachingAllocatorTest, RandomizedStress) {
  HostMemory host;
  CachingAllocator a(host);
  std::mt19937_64 rng(20240501);
  std::map<char*, int64_t> live;  // ptr -> requested bytes
  auto random_size = [&]() -> int64_t {
    const int kind = static_cast<int>(rng() % 100);
    if (kind < 90) return 1 + static_cast<int64_t>(rng() % (64 * kKiB));
    if (kind < 99) return kMiB + static_cast<int64_t>(rng() % (15 * kMiB));
    return 20 * kMiB + static_cast<int64_t>(rng() % (40 * kMiB));
  };
  for (int op = 0; op < 6000; ++op) {
    const bool allocate = live.empty() || rng() % 100 < 55;
    if (allocate) {
      const int64_t bytes = random_size();
      char* p = Alloc(a, bytes);
      ASSERT_NE(p, nullptr);
      const int64_t block = *a.BlockSize(p);
      ASSERT_GE(block, bytes);
      // Overlap: the neighbours in address order must end before p / start after p + block.
      auto next = live.lower_bound(p);
      if (next != live.end()) ASSERT_GE(next->first, p + block) << "op " << op;
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + *a.BlockSize(prev->first), p) << "op " << op;
      }
      live.emplace(p, bytes);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<int64_t>(rng() % live.size()));
      ASSERT_TRUE(a.Free(it->first).ok());
      live.erase(it);
    }
    if (op % 1000 == 999) a.EmptyCache();
    CachingAllocatorStats s = a.stats();
    int64_t requested = 0, in_use = 0;
    for (auto& [p, bytes] : live) {
      requested += bytes;
      in_use += *a.BlockSize(p);
    }
    ASSERT_EQ(s.bytes_requested, requested) << "op " << op;
    ASSERT_EQ(s.bytes_in_use, in_use) << "op " << op;
    ASSERT_EQ(s.num_live_allocations, static_cast<int64_t>(live.size()));
    ASSERT_EQ(s.bytes_reserved, host.bytes_allocated());
    ASSERT_EQ(s.num_segments, host.num_allocations());
    ASSERT_LE(s.bytes_in_use, s.bytes_reserved);
    ASSERT_GE(s.peak_bytes_in_use, s.bytes_in_use);
    ASSERT_LE(s.largest_free_block, s.bytes_reserved - s.bytes_in_use);
    ASSERT_GE(s.fragmentation, 0.0);
    ASSERT_LT(s.fragmentation, 1.0);
  }
  for (auto& [p, bytes] : live) ASSERT_TRUE(a.Free(p).ok());
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  a.EmptyCache();
  EXPECT_EQ(a.stats().bytes_reserved, 0);
  EXPECT_EQ(host.bytes_allocated(), 0);
}

}  // namespace
}  // namespace tessera::memory
