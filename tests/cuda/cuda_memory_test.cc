// The CUDA device-memory back-end. Compiled whenever nvcc is found; the tests that need a GPU
// skip, saying so, where none is present (as on CI machines).
#include "tessera/memory/cuda/cuda_memory.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/base/cuda/cuda_status.h"
#include "tessera/memory/caching_allocator.h"

namespace tessera::memory {
namespace {

#define SKIP_WITHOUT_GPU()                                                               \
  if (base::CudaDeviceCount() == 0) {                                                    \
    GTEST_SKIP() << "no GPU present: the CUDA memory back-end is compiled here but not run"; \
  }

TEST(CudaMemoryTest, WithoutAGpuCreateFailsWithAStatusNotACrash) {
  if (base::CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  auto memory = CudaMemory::Create(0);
  ASSERT_FALSE(memory.ok());
  EXPECT_FALSE(memory.status().message().empty());
}

TEST(CudaMemoryTest, RejectsAMissingDevice) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(base::CudaDeviceCount());
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("does not exist"), std::string::npos);
}

TEST(CudaMemoryTest, AllocatesAlignedMemoryThatHoldsData) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(0);
  ASSERT_TRUE(memory.ok()) << memory.status();
  for (int64_t alignment : {1, 256, 4096}) {
    auto p = (*memory)->Allocate(1000, alignment);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % alignment, 0u);
    std::vector<char> in(1000, 7), out(1000, 0);
    ASSERT_EQ(cudaMemcpy(*p, in.data(), 1000, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(out.data(), *p, 1000, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(in, out);
    EXPECT_EQ((*memory)->bytes_allocated(), 1000);
    ASSERT_TRUE((*memory)->Free(*p).ok());
  }
  EXPECT_EQ((*memory)->bytes_allocated(), 0);
}

TEST(CudaMemoryTest, BudgetAndDoubleFreeAreErrors) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(0, /*capacity=*/1 << 20);
  ASSERT_TRUE(memory.ok()) << memory.status();
  auto too_big = (*memory)->Allocate(2 << 20, 256);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  auto p = (*memory)->Allocate(4096, 256);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*memory)->Free(*p).ok());
  EXPECT_EQ((*memory)->Free(*p).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CudaMemoryTest, CachingAllocatorServesGpuMemory) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(0);
  ASSERT_TRUE(memory.ok()) << memory.status();
  CachingAllocator cache(**memory);
  auto a = cache.Allocate(1 << 20);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(cache.Free(*a).ok());
  auto b = cache.Allocate(1 << 20);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);  // served from the cache, no second cudaMalloc
  ASSERT_TRUE(cache.Free(*b).ok());
}

TEST(CudaMemoryTest, CopiesRoundTripThroughADeviceAllocation) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(0);
  ASSERT_TRUE(memory.ok()) << memory.status();
  auto block = DeviceAllocation::Create(**memory, 64, 256);
  ASSERT_TRUE(block.ok()) << block.status();
  std::vector<char> in(64), out(64, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<char>(3 * i + 1);
  ASSERT_TRUE(CopyToDevice(in.data(), 64, *block).ok());
  ASSERT_TRUE(CopyToHost(*block, 48, out.data()).ok());  // a prefix
  EXPECT_TRUE(std::equal(in.begin(), in.begin() + 48, out.begin()));
  EXPECT_EQ(out[48], 0);
}

// The size check comes before any CUDA call, so it is tested on any allocation, GPU or not.
TEST(CudaMemoryTest, CopiesLargerThanTheAllocationAreOutOfRange) {
  HostMemory host;
  auto block = DeviceAllocation::Create(host, 16, 16);
  ASSERT_TRUE(block.ok()) << block.status();
  std::vector<char> data(17);
  const absl::Status in = CopyToDevice(data.data(), 17, *block);
  EXPECT_EQ(in.code(), absl::StatusCode::kOutOfRange) << in;
  EXPECT_NE(in.message().find("17 bytes"), std::string::npos) << in;
  EXPECT_NE(in.message().find("holds 16 bytes"), std::string::npos) << in;
  EXPECT_EQ(CopyToHost(*block, 17, data.data()).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CopyToHost(*block, -1, data.data()).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(CopyToHost(*block, 0, data.data()).ok());  // nothing to copy: no CUDA call
}

}  // namespace
}  // namespace tessera::memory
