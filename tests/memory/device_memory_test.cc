#include "tessera/memory/device_memory.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::memory {
namespace {

using ::testing::HasSubstr;

TEST(HostMemoryTest, AlignsAndCountsBytes) {
  HostMemory host;
  EXPECT_EQ(host.name(), "host");
  EXPECT_EQ(host.capacity(), DeviceMemory::kUnlimited);
  int64_t expected = 0;
  for (int64_t alignment : {1, 8, 64, 512, 4096}) {
    absl::StatusOr<void*> p = host.Allocate(100 + alignment, alignment);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % alignment, 0u) << alignment;
    expected += 100 + alignment;
    EXPECT_EQ(host.bytes_allocated(), expected);
  }
  EXPECT_EQ(host.num_allocations(), 5);
}

TEST(HostMemoryTest, OutOfMemoryNamesRequestAndAvailable) {
  HostMemory host(/*capacity=*/1000);
  absl::StatusOr<void*> a = host.Allocate(600, 64);
  ASSERT_TRUE(a.ok());
  absl::StatusOr<void*> b = host.Allocate(500, 64);
  ASSERT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(), HasSubstr("500 bytes"));
  EXPECT_THAT(b.status().message(), HasSubstr("400 bytes available"));
  EXPECT_THAT(b.status().message(), HasSubstr("capacity of 1000"));
  // Exactly what is left still fits.
  EXPECT_TRUE(host.Allocate(400, 64).ok());
  EXPECT_EQ(host.bytes_allocated(), 1000);
}

TEST(HostMemoryTest, RejectsBadRequests) {
  HostMemory host;
  EXPECT_EQ(host.Allocate(0, 64).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(host.Allocate(-8, 64).status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status bad_align = host.Allocate(64, 48).status();
  EXPECT_EQ(bad_align.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_align.message(), HasSubstr("alignment 48"));
  EXPECT_EQ(host.bytes_allocated(), 0);
}

TEST(HostMemoryTest, FreeOfUnknownOrFreedPointerIsAnError) {
  HostMemory host;
  void* p = *host.Allocate(256, 256);
  EXPECT_TRUE(host.Free(p).ok());
  absl::Status again = host.Free(p);
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(again.message(), HasSubstr(absl::StrFormat("%p", p)));
  int local = 0;
  EXPECT_EQ(host.Free(&local).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(host.bytes_allocated(), 0);
}

TEST(DeviceAllocationTest, FreesOnDestructionAndMoves) {
  HostMemory host;
  {
    absl::StatusOr<DeviceAllocation> a = DeviceAllocation::Create(host, 4096, 256);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->size(), 4096);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 256, 0u);
    EXPECT_EQ(host.bytes_allocated(), 4096);
    DeviceAllocation moved = std::move(*a);
    EXPECT_EQ(a->data(), nullptr);
    EXPECT_EQ(moved.size(), 4096);
    DeviceAllocation other = *DeviceAllocation::Create(host, 100, 64);
    EXPECT_EQ(host.bytes_allocated(), 4196);
    other = std::move(moved);  // frees the 100 bytes, takes over the 4096
    EXPECT_EQ(host.bytes_allocated(), 4096);
  }
  EXPECT_EQ(host.bytes_allocated(), 0);
  EXPECT_EQ(host.num_allocations(), 0);
}

TEST(DeviceAllocationTest, PropagatesOutOfMemory) {
  HostMemory host(/*capacity=*/100);
  absl::StatusOr<DeviceAllocation> a = DeviceAllocation::Create(host, 101, 64);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(a.status().message(), HasSubstr("101 bytes"));
}

}  // namespace
}  // namespace tessera::memory
