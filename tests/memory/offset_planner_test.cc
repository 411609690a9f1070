// The offset planner on hand cases with known optimal arenas, bad input and determinism.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;

OffsetPlan PlanAndCheck(const std::vector<Buffer>& buffers, OffsetPlanOptions options = {}) {
  absl::StatusOr<OffsetPlan> plan = PlanOffsets(buffers, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  absl::Status check = CheckOffsets(buffers, *plan);
  EXPECT_TRUE(check.ok()) << check;
  return *plan;
}

TEST(OffsetPlannerTest, EmptyListNeedsNoArena) {
  OffsetPlan plan = PlanAndCheck({});
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_EQ(plan.lower_bound, 0);
  EXPECT_TRUE(plan.proven_optimal);
}

TEST(OffsetPlannerTest, DisjointLifetimesShareOffsetZero) {
  OffsetPlan plan = PlanAndCheck({{.id = 7, .start = 0, .end = 2, .size = 100},
                                  {.id = 8, .start = 2, .end = 4, .size = 60}});
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(plan.arena_bytes, 100);
  EXPECT_EQ(plan.lower_bound, 100);
  EXPECT_TRUE(plan.proven_optimal);
}

TEST(OffsetPlannerTest, OverlappingLifetimesStack) {
  OffsetPlan plan = PlanAndCheck({{.id = 0, .start = 0, .end = 3, .size = 10},
                                  {.id = 1, .start = 1, .end = 4, .size = 30}});
  EXPECT_EQ(plan.arena_bytes, 40);
  EXPECT_EQ(plan.lower_bound, 40);
  EXPECT_EQ(plan.offsets[1], 0);  // the larger first
  EXPECT_EQ(plan.offsets[0], 30);
}

// Greedy-by-size puts the 4-byte buffer (live throughout) at 0 and the short 3-byte buffers
// above it; the optimum 6 needs the long buffer at the top. Known optimal arena: 6.
TEST(OffsetPlannerTest, BeatsGreedyOnAKnownTrap) {
  std::vector<Buffer> buffers = {{.id = 0, .start = 0, .end = 2, .size = 3},
                                 {.id = 1, .start = 1, .end = 3, .size = 3},
                                 {.id = 2, .start = 2, .end = 4, .size = 3},
                                 {.id = 3, .start = 0, .end = 1, .size = 2},
                                 {.id = 4, .start = 3, .end = 4, .size = 2}};
  OffsetPlan plan = PlanAndCheck(buffers);
  EXPECT_EQ(plan.lower_bound, 6);
  EXPECT_EQ(plan.arena_bytes, 6);
  EXPECT_TRUE(plan.proven_optimal);
}

TEST(OffsetPlannerTest, KeepsAlignment) {
  OffsetPlan plan = PlanAndCheck({{.id = 0, .start = 0, .end = 2, .size = 10},
                                  {.id = 1, .start = 0, .end = 2, .size = 64, .alignment = 64}});
  EXPECT_EQ(plan.offsets[1] % 64, 0);
  EXPECT_EQ(plan.lower_bound, 74);
  EXPECT_GE(plan.arena_bytes, 74);
}

std::vector<Buffer> RandomTrace(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t start = std::uniform_int_distribution<int64_t>(0, 200)(rng);
    const int64_t length = std::uniform_int_distribution<int64_t>(1, 30)(rng);
    const int64_t size = std::uniform_int_distribution<int64_t>(1, 1000)(rng);
    buffers.push_back({.id = i, .start = start, .end = start + length, .size = size});
  }
  return buffers;
}

TEST(OffsetPlannerTest, RandomTracesAreValidAndNoWorseThanGreedy) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::vector<Buffer> buffers = RandomTrace(300, seed);
    OffsetPlan plan = PlanAndCheck(buffers, {.time_limit_s = 60, .max_iterations = 300});
    OffsetPlan greedy = PlanAndCheck(buffers, {.greedy_only = true});
    EXPECT_LE(plan.arena_bytes, greedy.arena_bytes);
    EXPECT_EQ(greedy.arena_bytes, greedy.greedy_arena_bytes);
    EXPECT_GE(plan.arena_bytes, plan.lower_bound);
  }
}

TEST(OffsetPlannerTest, DeterministicForASeed) {
  std::vector<Buffer> buffers = RandomTrace(200, 42);
  OffsetPlanOptions options = {.time_limit_s = 60, .seed = 3, .max_iterations = 500};
  OffsetPlan first = PlanAndCheck(buffers, options);
  OffsetPlan second = PlanAndCheck(buffers, options);
  EXPECT_EQ(first.offsets, second.offsets);
  EXPECT_EQ(first.arena_bytes, second.arena_bytes);
}

// Lowest-fit decoding of one ordering, written independently of the planner: each buffer at the
// lowest aligned offset clear of the buffers before it that are live at the same time.
int64_t LowestFitArena(const std::vector<Buffer>& buffers, const std::vector<int>& order) {
  std::vector<int64_t> offset(buffers.size(), -1);
  int64_t arena = 0;
  for (int i : order) {
    const Buffer& b = buffers[i];
    int64_t candidate = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int j : order) {
        const Buffer& o = buffers[j];
        if (offset[j] < 0 || o.end <= b.start || b.end <= o.start) continue;
        if (candidate < offset[j] + o.size && offset[j] < candidate + b.size) {
          candidate = (offset[j] + o.size + b.alignment - 1) / b.alignment * b.alignment;
          moved = true;
        }
      }
    }
    offset[i] = candidate;
    arena = std::max(arena, candidate + b.size);
  }
  return arena;
}

// The optimum: placing the buffers of an optimal packing in offset order, each at its lowest fit,
// puts none higher than in that packing, so the best ordering reaches it.
int64_t BruteForceOptimum(const std::vector<Buffer>& buffers) {
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = INT64_MAX;
  do {
    best = std::min(best, LowestFitArena(buffers, order));
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::vector<Buffer> SmallTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  for (int i = 0; i < 7; ++i) {
    const int64_t start = std::uniform_int_distribution<int64_t>(0, 6)(rng);
    const int64_t length = std::uniform_int_distribution<int64_t>(1, 4)(rng);
    const int64_t alignment = int64_t{1} << std::uniform_int_distribution<int>(0, 2)(rng);
    const int64_t size = std::uniform_int_distribution<int64_t>(1, 24)(rng);
    buffers.push_back(
        {.id = i, .start = start, .end = start + length, .size = size, .alignment = alignment});
  }
  return buffers;
}

// The exact search proves its result optimal (so it stops early) and the brute force agrees.
TEST(OffsetPlannerTest, SmallListsReachTheBruteForceOptimum) {
  int above_lower_bound = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<Buffer> buffers = SmallTrace(seed);
    OffsetPlan plan = PlanAndCheck(buffers, {.time_limit_s = 60, .max_iterations = 2000000});
    const int64_t optimum = BruteForceOptimum(buffers);
    EXPECT_EQ(plan.arena_bytes, optimum) << "seed " << seed;
    EXPECT_LT(plan.iterations, 2000000) << "seed " << seed << ": no proof within the budget";
    if (optimum > plan.lower_bound) ++above_lower_bound;
  }
  // Some of these lists cannot reach the lower bound, so the proofs were exercised.
  EXPECT_GT(above_lower_bound, 3);
}

// Cuts a time x bytes box into rectangles by random guillotine cuts: the rectangles, as buffers,
// pack exactly into the box, so the box height is the optimal arena (and the lower bound).
void Cut(int64_t t0, int64_t t1, int64_t b0, int64_t b1, int depth, std::mt19937_64& rng,
         std::vector<Buffer>& out) {
  const bool across_time = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  const int64_t extent = across_time ? t1 - t0 : b1 - b0;
  if (depth == 0 || extent < 2) {
    out.push_back({.id = int64_t(out.size()), .start = t0, .end = t1, .size = b1 - b0});
    return;
  }
  const int64_t at = std::uniform_int_distribution<int64_t>(1, extent - 1)(rng);
  if (across_time) {
    Cut(t0, t0 + at, b0, b1, depth - 1, rng, out);
    Cut(t0 + at, t1, b0, b1, depth - 1, rng, out);
  } else {
    Cut(t0, t1, b0, b0 + at, depth - 1, rng, out);
    Cut(t0, t1, b0 + at, b1, depth - 1, rng, out);
  }
}

TEST(OffsetPlannerTest, GuillotinePackingsReachTheirBoxHeight) {
  int greedy_above = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Buffer> buffers;
    Cut(0, 1000, 0, 4096, 7, rng, buffers);
    OffsetPlan plan = PlanAndCheck(buffers, {.time_limit_s = 60, .max_iterations = 200000});
    EXPECT_EQ(plan.lower_bound, 4096) << "seed " << seed;
    EXPECT_EQ(plan.arena_bytes, 4096) << "seed " << seed;
    EXPECT_TRUE(plan.proven_optimal) << "seed " << seed;
    if (plan.greedy_arena_bytes > 4096) ++greedy_above;
  }
  EXPECT_GE(greedy_above, 3);  // greedy alone misses most of them
}

TEST(OffsetPlannerTest, MixedAlignmentsStayAligned) {
  std::mt19937_64 rng(11);
  std::vector<Buffer> buffers = RandomTrace(150, 11);
  for (Buffer& b : buffers) b.alignment = int64_t{1} << std::uniform_int_distribution<int>(0, 8)(rng);
  OffsetPlan plan = PlanAndCheck(buffers, {.time_limit_s = 60, .max_iterations = 50000});
  OffsetPlan greedy = PlanAndCheck(buffers, {.greedy_only = true});
  EXPECT_LE(plan.arena_bytes, greedy.arena_bytes);
}

void ExpectInvalid(const std::vector<Buffer>& buffers, const std::string& a, const std::string& b) {
  absl::StatusOr<OffsetPlan> plan = PlanOffsets(buffers);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr(a));
  EXPECT_THAT(plan.status().message(), HasSubstr(b));
}

TEST(OffsetPlannerTest, BadInputNamesTheBufferAndValue) {
  const Buffer good = {.id = 1, .start = 0, .end = 1, .size = 8};
  ExpectInvalid({good, {.id = 17, .start = 0, .end = 1, .size = 0}}, "buffer 17", "size 0");
  ExpectInvalid({good, {.id = 18, .start = 0, .end = 1, .size = -5}}, "buffer 18", "size -5");
  ExpectInvalid({good, {.id = 19, .start = 4, .end = 4, .size = 8}}, "buffer 19", "end 4");
  ExpectInvalid({good, {.id = 20, .start = 0, .end = 1, .size = 8, .alignment = 48}},
                "buffer 20", "alignment 48");
  ExpectInvalid({good, {.id = 1, .start = 2, .end = 3, .size = 8}}, "buffer 1", "duplicate id");
}

}  // namespace
}  // namespace tessera::memory
