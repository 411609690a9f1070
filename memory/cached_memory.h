// A DeviceMemory served by a caching allocator: what a back-end hands to code that allocates and
// frees as it goes (the CUDA kernels' scratch, optimizer state, the training program's storage),
// so that after the first step nothing reaches the device allocator (cudaMalloc, cudaFree).
//
//   TS_ASSIGN_OR_RETURN(auto gpu, memory::CudaMemory::Create(0));
//   memory::CachedMemory cached(*gpu);
//   TS_ASSIGN_OR_RETURN(auto block, memory::DeviceAllocation::Create(cached, 1 << 20, 256));
//   cached.stats().num_segment_allocs;   // cudaMalloc calls so far
//
// Blocks are aligned to 512 bytes (caching_allocator.h); a larger alignment is InvalidArgument.
// A freed block is reused at once: on a device with one stream, work enqueued later runs later,
// so reuse needs no wait (the rule PyTorch's allocator follows per stream). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/memory/caching_allocator.h"
#include "tessera/memory/device_memory.h"

namespace tessera::memory {

class CachedMemory : public DeviceMemory {
 public:
  // `backing` must outlive this; every segment goes back to it on destruction.
  explicit CachedMemory(DeviceMemory& backing);

  absl::StatusOr<void*> Allocate(int64_t bytes, int64_t alignment) override;
  absl::Status Free(void* ptr) override;

  absl::string_view name() const override { return name_; }  // "cached <backing>"
  int64_t capacity() const override { return backing_.capacity(); }
  int64_t bytes_allocated() const override { return cache_.stats().bytes_requested; }
  CachingAllocatorStats stats() const { return cache_.stats(); }

 private:
  DeviceMemory& backing_;
  CachingAllocator cache_;
  std::string name_;
};

}  // namespace tessera::memory
