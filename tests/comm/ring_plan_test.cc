// Ring schedules: segments and chunks cover the message, and what rank r expects from rank
// r - 1 is exactly what r - 1 sends, in the same order (the invariant the pipeline relies on).
#include <gtest/gtest.h>

#include <vector>

#include "tessera/comm/ring_plan_impl.h"

namespace tessera::comm::internal {
namespace {

std::vector<std::pair<int64_t, int64_t>> Sent(const RingPlan& plan) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (Range r : plan.initial_sends) out.push_back({r.offset, r.count});
  for (const RingItem& it : plan.items) {
    if (it.forward) out.push_back({it.range.offset, it.range.count});
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> Received(const RingPlan& plan) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const RingItem& it : plan.items) out.push_back({it.range.offset, it.range.count});
  return out;
}

TEST(RingPlanTest, SegmentsPartitionTheMessageAndDifferByAtMostOne) {
  for (int p = 1; p <= 8; ++p) {
    for (int64_t count : {0, 1, 2, 7, 8, 9, 1000003}) {
      int64_t next = 0, smallest = count, largest = 0;
      for (int i = 0; i < p; ++i) {
        Range s = SegmentRange(count, p, i);
        EXPECT_EQ(s.offset, next);
        next += s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
      }
      EXPECT_EQ(next, count);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(RingPlanTest, ChunksCoverASegmentWithAShortLastChunk) {
  std::vector<Range> c = Chunks(Range{10, 25}, 10);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].offset, 10);
  EXPECT_EQ(c[2].offset, 30);
  EXPECT_EQ(c[2].count, 5);
  EXPECT_TRUE(Chunks(Range{4, 0}, 10).empty());
}

TEST(RingPlanTest, ChunkSizeFollowsTheMessageWithinBoundsAndHonoursTheOption) {
  // 64 MiB of float32 over 4 ranks: 16 MiB segments -> the largest chunk.
  EXPECT_EQ(ChooseChunkElements(16 << 20, 4, 4, 0), kMaxChunkBytes / 4);
  // A tiny message: the smallest chunk (one chunk per segment).
  EXPECT_EQ(ChooseChunkElements(100, 4, 4, 0), kMinChunkBytes / 4);
  // In between: about kTargetChunksPerSegment chunks per segment.
  const int64_t mid = ChooseChunkElements(1 << 19, 2, 4, 0);  // 1 MiB segments
  EXPECT_EQ(mid * 4, (int64_t{1} << 20) / kTargetChunksPerSegment);
  EXPECT_EQ(ChooseChunkElements(1000, 4, 8, 80), 10);
  EXPECT_EQ(ChooseChunkElements(1000, 4, 8, 3), 1);  // never zero
}

TEST(RingPlanTest, EachRankReceivesExactlyWhatItsPredecessorSends) {
  for (int p = 1; p <= 8; ++p) {
    for (int64_t count : {0, 1, 3, 17, 1000}) {
      for (int64_t chunk : {1, 3, 64}) {
        for (int r = 0; r < p; ++r) {
          const int prev = (r + p - 1) % p;
          EXPECT_EQ(Received(AllReducePlan(count, p, r, chunk)),
                    Sent(AllReducePlan(count, p, prev, chunk)))
              << "all-reduce p=" << p << " count=" << count << " rank=" << r;
          EXPECT_EQ(Received(ReduceScatterPlan(count * p, p, r, chunk)),
                    Sent(ReduceScatterPlan(count * p, p, prev, chunk)));
          EXPECT_EQ(Received(AllGatherPlan(count * p, p, r, chunk)),
                    Sent(AllGatherPlan(count * p, p, prev, chunk)));
          for (int root = 0; root < p; ++root) {
            if (r == root) continue;
            EXPECT_EQ(Received(BroadcastPlan(count, p, r, root, chunk)),
                      Sent(BroadcastPlan(count, p, prev, root, chunk)));
          }
        }
      }
    }
  }
}

TEST(RingPlanTest, AllReduceMovesTwoTimesPMinusOneOverPOfTheMessage) {
  const int p = 5;
  const int64_t count = 1000;
  for (int r = 0; r < p; ++r) {
    RingPlan plan = AllReducePlan(count, p, r, 7);
    int64_t received = 0, reduced = 0, finals = 0;
    for (const RingItem& it : plan.items) {
      received += it.range.count;
      if (it.reduce) reduced += it.range.count;
      if (it.final) finals += it.range.count;
    }
    EXPECT_EQ(received, 2 * count * (p - 1) / p);
    EXPECT_EQ(reduced, count * (p - 1) / p);
    EXPECT_EQ(finals, SegmentRange(count, p, r).count);  // rank r completes segment r
  }
}

TEST(RingPlanTest, OneRankMovesNothing) {
  EXPECT_TRUE(AllReducePlan(100, 1, 0, 8).items.empty());
  EXPECT_TRUE(AllReducePlan(100, 1, 0, 8).initial_sends.empty());
  EXPECT_TRUE(BroadcastPlan(100, 1, 0, 0, 8).initial_sends.empty());
}

}  // namespace
}  // namespace tessera::comm::internal
