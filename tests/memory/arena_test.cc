#include "tessera/memory/arena.h"

#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;

TEST(ArenaTest, ServesOffsetsFromOneAlignedAllocation) {
  HostMemory host;
  absl::StatusOr<Arena> arena = Arena::Create(host, 1 << 20);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ(host.num_allocations(), 1);
  EXPECT_EQ(host.bytes_allocated(), 1 << 20);
  EXPECT_EQ(arena->size(), 1 << 20);
  char* base = static_cast<char*>(arena->base());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % Arena::kDefaultAlignment, 0u);
  EXPECT_EQ(*arena->At(0, 256), base);
  EXPECT_EQ(*arena->At(4096, 1000), base + 4096);
  EXPECT_EQ(*arena->At((1 << 20) - 8, 8), base + (1 << 20) - 8);  // the last bytes
  EXPECT_EQ(host.num_allocations(), 1);  // At never allocates
}

TEST(ArenaTest, BoundsErrorsNameOffsetBytesAndSize) {
  HostMemory host;
  Arena arena = *Arena::Create(host, 4096);
  absl::Status past = arena.At(4000, 200).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(past.message(), HasSubstr("4000"));
  EXPECT_THAT(past.message(), HasSubstr("200"));
  EXPECT_THAT(past.message(), HasSubstr("outside the arena of 4 KiB"));
  EXPECT_EQ(arena.At(0, 4097).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(arena.At(INT64_MAX, 2).status().code(), absl::StatusCode::kOutOfRange);  // no overflow
  EXPECT_EQ(arena.At(-1, 8).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(arena.At(0, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(arena.stats().requests_total, 0);  // failures are not counted
}

TEST(ArenaTest, StatisticsPerStepAndOverall) {
  HostMemory host;
  Arena arena = *Arena::Create(host, 10000);
  ASSERT_TRUE(arena.At(0, 100).ok());
  ASSERT_TRUE(arena.At(5000, 3000).ok());
  EXPECT_EQ(arena.stats().requests_this_step, 2);
  EXPECT_EQ(arena.stats().high_water_this_step, 8000);
  arena.Reset();
  EXPECT_EQ(arena.stats().steps, 1);
  EXPECT_EQ(arena.stats().requests_this_step, 0);
  EXPECT_EQ(arena.stats().high_water_this_step, 0);
  ASSERT_TRUE(arena.At(100, 400).ok());
  EXPECT_EQ(arena.stats().high_water_this_step, 500);
  EXPECT_EQ(arena.stats().high_water, 8000);
  EXPECT_EQ(arena.stats().requests_total, 3);
  EXPECT_EQ(arena.stats().size, 10000);
}

TEST(ArenaTest, CreateErrorsAndRelease) {
  HostMemory host(/*capacity=*/1000);
  absl::StatusOr<Arena> too_big = Arena::Create(host, 5000);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_big.status().message(), HasSubstr("arena of 4.88 KiB (5000 bytes)"));
  EXPECT_THAT(too_big.status().message(), HasSubstr("1000 bytes available"));
  EXPECT_EQ(Arena::Create(host, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Arena::Create(host, 64, 3).status().code(), absl::StatusCode::kInvalidArgument);
  {
    Arena arena = *Arena::Create(host, 1000, 64);
    EXPECT_EQ(host.bytes_allocated(), 1000);
    Arena moved = std::move(arena);
    EXPECT_EQ(host.bytes_allocated(), 1000);
  }
  EXPECT_EQ(host.bytes_allocated(), 0);  // the arena gives its memory back
}

}  // namespace
}  // namespace tessera::memory
