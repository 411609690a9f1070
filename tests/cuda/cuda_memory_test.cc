// The CUDA device-memory back-end. Compiled whenever nvcc is found; the tests that need a GPU
// skip, saying so, where none is present (as on CI machines).
#include "tessera/memory/cuda/cuda_memory.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <vector>

#include "tessera/exec/cuda/kernels.h"
#include "tessera/memory/caching_allocator.h"

namespace tessera::memory {
namespace {

#define SKIP_WITHOUT_GPU()                                                               \
  if (exec::cuda::CudaDeviceCount() == 0) {                                              \
    GTEST_SKIP() << "no GPU present: the CUDA memory back-end is compiled here but not run"; \
  }

TEST(CudaMemoryTest, WithoutAGpuCreateFailsWithAStatusNotACrash) {
  if (exec::cuda::CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  auto memory = CudaMemory::Create(0);
  ASSERT_FALSE(memory.ok());
  EXPECT_FALSE(memory.status().message().empty());
}

TEST(CudaMemoryTest, RejectsAMissingDevice) {
  SKIP_WITHOUT_GPU();
  auto memory = CudaMemory::Create(exec::cuda::CudaDeviceCount());
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

}  // namespace
}  // namespace tessera::memory
