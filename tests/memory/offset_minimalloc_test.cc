// Every MiniMalloc challenging case planned, checked and compared with the README's figures.
#include <cstdio>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tessera/memory/buffer_csv.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::memory {
namespace {

constexpr int64_t kBestKnown = 1048576;

std::string CaseDir() { return std::string(TESSERA_SOURCE_DIR) + "/../shared/data/minimalloc"; }

// The README's lower bounds (largest total of live bytes at any moment).
const std::map<std::string, int64_t>& ReadmeLowerBounds() {
  static const auto* bounds = new std::map<std::string, int64_t>{
      {"A", 1048576}, {"B", 1048576}, {"C", 1039360}, {"D", 986112}, {"E", 1048576}, {"F", 1048576},
      {"G", 1048576}, {"H", 1048576}, {"I", 1048576}, {"J", 989184}, {"K", 1048576}};
  return *bounds;
}

class MiniMallocCase : public ::testing::TestWithParam<std::string> {};

// A fixed budget of 250,000 iterations (orderings decoded plus exact-search nodes; a few seconds
// in a Release build) makes the result the same on every run; the time limit is only a backstop.
// With it every case packs within the best known arena (the goal; its target was 1.05x),
// and every case but D and J reaches its lower bound, which proves the packing optimal. D and J
// end below the best known arena (their lower bounds are 6% below it).
TEST_P(MiniMallocCase, PacksWithinTheBestKnownArenaAndChecks) {
  const std::string path = CaseDir() + "/" + GetParam() + ".1048576.csv";
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "MiniMalloc cases not found at " << path;
  }
  absl::StatusOr<BufferTable> table = ReadBufferCsv(path);
  ASSERT_TRUE(table.ok()) << table.status();
  const std::vector<Buffer>& buffers = table->buffers;
  absl::StatusOr<OffsetPlan> plan =
      PlanOffsets(buffers, {.time_limit_s = 600.0, .max_iterations = 250000});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->lower_bound, ReadmeLowerBounds().at(GetParam()));
  EXPECT_TRUE(CheckOffsets(buffers, *plan).ok()) << CheckOffsets(buffers, *plan);
  EXPECT_GE(plan->arena_bytes, plan->lower_bound);
  EXPECT_LE(plan->arena_bytes, kBestKnown);
  if (GetParam() != "D" && GetParam() != "J") {
    EXPECT_EQ(plan->arena_bytes, plan->lower_bound);
    EXPECT_TRUE(plan->proven_optimal);
  }
  EXPECT_LE(plan->iterations, 250000);
  // The README: plain greedy needs 1.29x to 1.44x the lower bound.
  EXPECT_GE(plan->greedy_arena_bytes, plan->lower_bound * 128 / 100);
  std::printf(
      "case %s: arena %lld (%.4fx best known), greedy %lld, lower bound %lld, %lld iterations\n",
      GetParam().c_str(), static_cast<long long>(plan->arena_bytes),
      double(plan->arena_bytes) / kBestKnown, static_cast<long long>(plan->greedy_arena_bytes),
      static_cast<long long>(plan->lower_bound), static_cast<long long>(plan->iterations));
}

// Case D never proves its arena optimal, so the budget ends the search in the middle of the exact
// search: the same budget gives the same offsets.
TEST(MiniMallocDeterminismTest, SameBudgetSameOffsets) {
  absl::StatusOr<BufferTable> table = ReadBufferCsv(CaseDir() + "/D.1048576.csv");
  if (!table.ok()) GTEST_SKIP() << table.status();
  const OffsetPlanOptions options = {.time_limit_s = 600.0, .seed = 5, .max_iterations = 30000};
  absl::StatusOr<OffsetPlan> first = PlanOffsets(table->buffers, options);
  absl::StatusOr<OffsetPlan> second = PlanOffsets(table->buffers, options);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(first->proven_optimal);
  EXPECT_EQ(first->iterations, 30000);
  EXPECT_EQ(first->offsets, second->offsets);
  EXPECT_EQ(first->arena_bytes, second->arena_bytes);
}

INSTANTIATE_TEST_SUITE_P(AllCases, MiniMallocCase,
                         ::testing::Values("A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"));

}  // namespace
}  // namespace tessera::memory
