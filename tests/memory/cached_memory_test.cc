// CachedMemory (memory/cached_memory.h): a DeviceMemory whose frees go to a cache, so repeated
// allocations of a step reach the backing memory only once.
#include "tessera/memory/cached_memory.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "absl/strings/match.h"

namespace tessera::memory {
namespace {

TEST(CachedMemoryTest, RepeatedAllocationsReachTheBackingOnce) {
  HostMemory host;
  CachedMemory cached(host);
  EXPECT_EQ(cached.name(), "cached host");
  for (int step = 0; step < 5; ++step) {
    auto a = DeviceAllocation::Create(cached, 3000, 256);
    auto b = DeviceAllocation::Create(cached, 1 << 20, 64);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 256, 0u);
    EXPECT_EQ(cached.bytes_allocated(), 3000 + (1 << 20));
  }
  EXPECT_EQ(cached.bytes_allocated(), 0);
  EXPECT_EQ(cached.stats().num_alloc_calls, 10);
  EXPECT_LE(cached.stats().num_segment_allocs, 2);  // one per pool, kept
  EXPECT_EQ(host.num_allocations(), cached.stats().num_segments);
}

TEST(CachedMemoryTest, RefusesWhatTheCacheCannotServe) {
  HostMemory host;
  CachedMemory cached(host);
  auto aligned = cached.Allocate(100, 4096);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(aligned.status().message(), "4096")) << aligned.status();
  EXPECT_FALSE(cached.Allocate(0, 64).ok());
  int not_ours = 0;
  EXPECT_EQ(cached.Free(&not_ours).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CachedMemoryTest, OutOfMemoryNamesTheRequest) {
  HostMemory host(/*capacity=*/1 << 20);
  CachedMemory cached(host);
  EXPECT_EQ(cached.capacity(), 1 << 20);
  auto big = cached.Allocate(8 << 20, 64);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted) << big.status();
}

}  // namespace
}  // namespace tessera::memory
