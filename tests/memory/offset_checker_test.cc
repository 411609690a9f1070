// The independent checker: passes good plans, names the buffers of bad ones.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/memory/offset_checker.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;

const std::vector<Buffer> kBuffers = {{.id = 10, .start = 0, .end = 4, .size = 100},
                                      {.id = 11, .start = 2, .end = 6, .size = 50},
                                      {.id = 12, .start = 4, .end = 8, .size = 100}};

TEST(OffsetCheckerTest, PassesAValidPlan) {
  // 10 and 12 are never live together, so they share offset 0.
  OffsetPlan plan = {.offsets = {0, 100, 0}, .arena_bytes = 150, .lower_bound = 150};
  EXPECT_TRUE(CheckOffsets(kBuffers, plan).ok()) << CheckOffsets(kBuffers, plan);
}

TEST(OffsetCheckerTest, CatchesOverlapOfBuffersLiveTogether) {
  OffsetPlan plan = {.offsets = {0, 60, 0}, .arena_bytes = 150, .lower_bound = 150};
  absl::Status status = CheckOffsets(kBuffers, plan);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("buffers 10 and 11"));
  EXPECT_THAT(status.message(), HasSubstr("[60, 110)"));
}

TEST(OffsetCheckerTest, HalfOpenLifetimesDoNotConflict) {
  // 10 ends at 4 when 12 starts: same offset is fine.
  OffsetPlan plan = {.offsets = {0, 100, 0}, .arena_bytes = 150, .lower_bound = 150};
  ASSERT_TRUE(CheckOffsets(kBuffers, plan).ok());
  plan.offsets = {0, 100, 60};  // 12 now overlaps 11 at steps [4, 6)
  plan.arena_bytes = 160;
  EXPECT_THAT(CheckOffsets(kBuffers, plan).message(), HasSubstr("buffers 11 and 12"));
}

TEST(OffsetCheckerTest, CatchesArenaTooSmallAndBadAlignment) {
  OffsetPlan plan = {.offsets = {0, 100, 0}, .arena_bytes = 149, .lower_bound = 150};
  EXPECT_THAT(CheckOffsets(kBuffers, plan).message(), HasSubstr("buffer 11: ends at byte 150"));
  std::vector<Buffer> aligned = kBuffers;
  aligned[1].alignment = 64;
  plan.arena_bytes = 150;
  EXPECT_THAT(CheckOffsets(aligned, plan).message(), HasSubstr("alignment 64"));
}

TEST(OffsetCheckerTest, CatchesWrongLowerBoundAndOffsetCount) {
  OffsetPlan plan = {.offsets = {0, 100, 0}, .arena_bytes = 150, .lower_bound = 120};
  EXPECT_THAT(CheckOffsets(kBuffers, plan).message(), HasSubstr("peak live bytes 150"));
  plan.offsets = {0, 100};
  EXPECT_THAT(CheckOffsets(kBuffers, plan).message(), HasSubstr("2 offsets for 3 buffers"));
}

}  // namespace
}  // namespace tessera::memory

namespace tessera::memory {
namespace {

TEST(BusiestStepTest, FirstStepWithTheMostLiveBytesFreesBeforeAllocations) {
  // Live bytes per step: 0: 10, 1: 10 + 30 = 40, 2: 30 + 5 = 35 (buffer 0 ended), 3: 40, 4: 0.
  const std::vector<Buffer> buffers = {{.id = 0, .start = 0, .end = 2, .size = 10},
                                       {.id = 1, .start = 1, .end = 4, .size = 30},
                                       {.id = 2, .start = 2, .end = 3, .size = 5},
                                       {.id = 3, .start = 3, .end = 4, .size = 10}};
  const BusiestStep busiest = FindBusiestStep(buffers);
  EXPECT_EQ(busiest.step, 1);  // the tie at step 3 comes later
  EXPECT_EQ(busiest.live_bytes, 40);
  EXPECT_EQ(LiveBytesLowerBound(buffers), 40);
  EXPECT_EQ(FindBusiestStep({}).live_bytes, 0);
}

}  // namespace
}  // namespace tessera::memory
