// A caching allocator for the memory a static plan does not cover: blocks carved from large
// segments of a DeviceMemory, cached after free instead of going back to the device.
//
//   tessera::memory::HostMemory host;
//   tessera::memory::CachingAllocator allocator(host);
//   TS_ASSIGN_OR_RETURN(void* p, allocator.Allocate(3000));   // a 3072-byte block
//   TS_RETURN_IF_ERROR(allocator.Free(p));                    // cached, not returned
//   allocator.EmptyCache();                                   // wholly free segments go back
//   double f = allocator.stats().fragmentation;
//
// How it works (details in docs/allocators.md):
// - Requests are rounded to size classes (size_class.h): multiples of 512 B up to 1 MiB (the
//   small pool), four classes per power of two above (the large pool). The pools never share
//   segments, so small blocks cannot fragment the segments that large ones need.
// - Allocate takes the best fit, the smallest free block that is large enough, and splits off
//   the remainder when it is worth keeping. The small pool finds it in segregated free lists
//   with a bitmap (segregated_bins.h, constant time); the large pool in a set ordered by
//   (size, address), lowest address first among equals. No fit: a new segment from the back-end.
// - Free merges the block with free neighbours of the same segment (coalescing).
// - Out of memory from the back-end: release every wholly free cached segment and retry once,
//   then ResourceExhausted naming the request and the statistics.
// - Freeing a pointer that is not live (double free, foreign pointer) is InvalidArgument naming
//   the address; the allocator's state is unchanged.
// Every block is aligned to kMinBlock (512 B). Not thread-safe: use one per thread or stream.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/memory/device_memory.h"
#include "tessera/memory/pointer_map.h"
#include "tessera/memory/segregated_bins.h"
#include "tessera/memory/size_class.h"

namespace tessera::memory {

struct CachingAllocatorStats {
  int64_t bytes_in_use = 0;         // sum of live blocks (after rounding)
  int64_t bytes_requested = 0;      // sum of live requests (before rounding)
  int64_t bytes_reserved = 0;       // sum of segments held from the back-end
  int64_t peak_bytes_in_use = 0;
  int64_t peak_bytes_reserved = 0;
  int64_t num_segments = 0;
  int64_t num_live_allocations = 0;
  int64_t num_free_blocks = 0;      // cached free blocks, both pools
  int64_t largest_free_block = 0;   // bytes; 0 when nothing is free
  // 1 - largest_free_block / (bytes_reserved - bytes_in_use): 0 when the free bytes form one
  // block (or there are none), approaching 1 when they are scattered in many small pieces.
  double fragmentation = 0.0;
  int64_t num_alloc_calls = 0;      // successful Allocate calls
  int64_t num_free_calls = 0;       // successful Free calls
  int64_t num_segment_allocs = 0;   // back-end allocations (cache misses)
  int64_t num_segment_frees = 0;    // segments returned to the back-end
  int64_t num_oom_retries = 0;      // times the cache was emptied to retry a failed allocation
};

class CachingAllocator {
 public:
  explicit CachingAllocator(DeviceMemory& memory);
  // Returns every segment to the back-end; pointers still live become dangling.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // `bytes` > 0 (InvalidArgument otherwise). The result is aligned to kMinBlock.
  absl::StatusOr<void*> Allocate(int64_t bytes);
  absl::Status Free(void* ptr);
  // Returns wholly free segments to the back-end; the bytes released.
  int64_t EmptyCache();

  // Computed on demand (largest_free_block and fragmentation look at the free lists).
  CachingAllocatorStats stats() const;
  // The block size serving a live pointer (its size class, or larger when not split), or
  // InvalidArgument when `ptr` is not live.
  absl::StatusOr<int64_t> BlockSize(const void* ptr) const;
  DeviceMemory& memory() const { return memory_; }

 private:
  struct Block {
    char* ptr = nullptr;
    int64_t size = 0;
    int64_t requested = 0;  // 0 when free
    bool allocated = false;
    bool small = false;     // which pool
    Block* prev = nullptr;  // neighbours in the same segment, by address
    Block* next = nullptr;
    Block* bin_prev = nullptr;  // links in the small pool's free lists
    Block* bin_next = nullptr;
  };
  struct BySizeThenAddress {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  using FreeSet = std::set<Block*, BySizeThenAddress>;

  absl::StatusOr<Block*> NewSegment(bool small, int64_t rounded, int64_t bytes);
  Block* TakeBlock(Block* block, int64_t rounded, int64_t bytes);
  Block* MergeWithNeighbours(Block* block);
  void InsertFree(Block* block);
  void EraseFree(Block* block);
  Block* NewBlockStruct();
  void ReleaseBlockStruct(Block* block);

  DeviceMemory& memory_;
  SegregatedBins<Block> small_free_{kMinBlock, kSmallSegment};
  FreeSet large_free_;
  PointerMap<Block> live_;  // live blocks by address
  // Set nodes taken out by erasures are kept and reused by insertions (C++17 node handles), so
  // after warm-up Allocate and Free do not call the system allocator.
  std::vector<FreeSet::node_type> spare_set_nodes_;
  std::vector<Block*> segments_;  // the first block of each segment (stable for its life)
  CachingAllocatorStats stats_;   // counters; the free-list fields are filled by stats()
  // Block structs come from chunks and are recycled through a free list, so Allocate and Free
  // do not create or destroy them with new/delete.
  std::vector<std::unique_ptr<Block[]>> block_chunks_;
  Block* spare_blocks_ = nullptr;  // linked through `next`
};

}  // namespace tessera::memory
