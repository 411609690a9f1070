// The CUDA device-memory back-end: cudaMalloc/cudaFree behind memory::DeviceMemory, so the arena
// and the caching allocator serve GPU memory exactly as they serve host memory in tests.
// Built only when nvcc is found (Tessera::memory_cuda); on machines without a GPU every call
// returns the CUDA error as a Status. The one owner of CUDA device memory: everything else
// (the CUDA kernels' scratch included) allocates through it, usually as a DeviceAllocation.
//
//   TS_ASSIGN_OR_RETURN(auto gpu, tessera::memory::CudaMemory::Create(/*device=*/0));
//   tessera::memory::CachingAllocator cache(*gpu);
//   TS_ASSIGN_OR_RETURN(void* p, cache.Allocate(1 << 20));
//
//   TS_ASSIGN_OR_RETURN(auto block, tessera::memory::DeviceAllocation::Create(*gpu, 4096, 256));
//   TS_RETURN_IF_ERROR(tessera::memory::CopyToDevice(host.data(), 4096, block));
//   TS_RETURN_IF_ERROR(tessera::memory::CopyToHost(block, 4096, host.data()));
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "tessera/memory/device_memory.h"

namespace tessera::memory {

class CudaMemory : public DeviceMemory {
 public:
  // Memory of CUDA device `device`. `capacity` caps what this back-end hands out at once
  // (kUnlimited: whatever the device has; cudaMalloc reports the real out-of-memory).
  static absl::StatusOr<std::unique_ptr<CudaMemory>> Create(int device,
                                                            int64_t capacity = kUnlimited);
  ~CudaMemory() override;  // frees whatever is still allocated
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  // Alignments up to 256 come from cudaMalloc itself; larger ones over-allocate and round up.
  absl::StatusOr<void*> Allocate(int64_t bytes, int64_t alignment) override;
  absl::Status Free(void* ptr) override;

  absl::string_view name() const override { return "cuda"; }
  int64_t capacity() const override { return capacity_; }
  int64_t bytes_allocated() const override { return bytes_allocated_; }
  int device() const { return device_; }

 private:
  struct Block {
    void* base;     // what cudaMalloc returned
    int64_t bytes;  // as requested
  };
  CudaMemory(int device, int64_t capacity) : device_(device), capacity_(capacity) {}

  int device_;
  int64_t capacity_;
  int64_t bytes_allocated_ = 0;
  std::unordered_map<void*, Block> blocks_;  // by aligned pointer
};

// Synchronous copies (cudaMemcpy) of the first `bytes` of a CUDA allocation from or to host
// memory. OutOfRange when `bytes` exceeds the allocation's size.
absl::Status CopyToDevice(const void* host, int64_t bytes, const DeviceAllocation& device);
absl::Status CopyToHost(const DeviceAllocation& device, int64_t bytes, void* host);

}  // namespace tessera::memory
