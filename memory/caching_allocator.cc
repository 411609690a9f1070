#include "tessera/memory/caching_allocator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/check.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"

namespace tessera::memory {
namespace {

constexpr int64_t kBlockChunk = 256;  // Block structs allocated at a time

// The remainder of a split block is kept as its own free block only when it is worth it: any
// multiple of kMinBlock in the small pool, more than kSmallLimit in the large pool (smaller
// slivers stay with the block, so the large pool is not littered with unusable pieces).
bool ShouldSplit(bool small, int64_t remainder) {
  return small ? remainder >= kMinBlock : remainder > kSmallLimit;
}

}  // namespace

CachingAllocator::CachingAllocator(DeviceMemory& memory) : memory_(memory) {
}

CachingAllocator::~CachingAllocator() {
  for (Block* head : segments_) {
    int64_t size = 0;
    for (Block* b = head; b != nullptr; b = b->next) size += b->size;
    absl::Status status = memory_.Free(head->ptr);
    TS_CHECK(status.ok()) << "segment of " << size << " bytes: " << status;
  }
}

CachingAllocator::Block* CachingAllocator::NewBlockStruct() {
  if (spare_blocks_ == nullptr) {
    block_chunks_.push_back(std::make_unique<Block[]>(kBlockChunk));
    Block* chunk = block_chunks_.back().get();
    for (int64_t i = 0; i < kBlockChunk; ++i) {
      chunk[i].next = spare_blocks_;
      spare_blocks_ = &chunk[i];
    }
  }
  Block* block = spare_blocks_;
  spare_blocks_ = block->next;
  *block = Block{};
  return block;
}

void CachingAllocator::ReleaseBlockStruct(Block* block) {
  block->next = spare_blocks_;
  spare_blocks_ = block;
}

void CachingAllocator::InsertFree(Block* block) {
  if (block->small) {
    small_free_.Insert(block);
  } else if (spare_set_nodes_.empty()) {
    large_free_.insert(block);
  } else {
    FreeSet::node_type node = std::move(spare_set_nodes_.back());
    spare_set_nodes_.pop_back();
    node.value() = block;
    large_free_.insert(std::move(node));
  }
}

void CachingAllocator::EraseFree(Block* block) {
  if (block->small) {
    small_free_.Remove(block);
  } else {
    spare_set_nodes_.push_back(large_free_.extract(block));
  }
}

absl::StatusOr<void*> CachingAllocator::Allocate(int64_t bytes) {
  if (bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "caching allocator: cannot allocate ", base::HumanBytesExact(bytes),
        "; ask for at least 1 byte"));
  }
  if (bytes > kMaxRequest) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "caching allocator: request of ", base::HumanBytesExact(bytes),
        " exceeds the largest supported (", base::HumanBytesExact(kMaxRequest), ")"));
  }
  const int64_t rounded = RoundToSizeClass(bytes);
  const bool small = rounded <= kSmallLimit;
  // Best fit: the smallest free block of at least `rounded` bytes (in the large pool, the
  // lowest address among equals).
  Block* block = nullptr;
  if (small) {
    block = small_free_.FindBestFit(rounded);
    if (block != nullptr) small_free_.Remove(block);
  } else {
    Block key;
    key.size = rounded;
    if (auto it = large_free_.lower_bound(&key); it != large_free_.end()) {
      block = *it;
      spare_set_nodes_.push_back(large_free_.extract(it));
    }
  }
  if (block == nullptr) {
    TS_ASSIGN_OR_RETURN(block, NewSegment(small, rounded, bytes));
  }
  block = TakeBlock(block, rounded, bytes);
  live_.Insert(block->ptr, block);
  return block->ptr;
}

// Asks the back-end for a segment; on ResourceExhausted, empties the cache and retries once.
absl::StatusOr<CachingAllocator::Block*> CachingAllocator::NewSegment(bool small, int64_t rounded,
                                                                      int64_t bytes) {
  const int64_t segment_size = SegmentSizeFor(rounded);
  absl::StatusOr<void*> ptr = memory_.Allocate(segment_size, kMinBlock);
  if (!ptr.ok() && absl::IsResourceExhausted(ptr.status())) {
    ++stats_.num_oom_retries;
    if (EmptyCache() > 0) ptr = memory_.Allocate(segment_size, kMinBlock);
  }
  if (!ptr.ok()) {
    if (!absl::IsResourceExhausted(ptr.status())) return ptr.status();
    const CachingAllocatorStats s = stats();
    return absl::ResourceExhaustedError(absl::StrCat(
        "caching allocator: out of memory allocating ", base::HumanBytesExact(bytes),
        " (size class ", base::HumanBytesExact(rounded), ", segment of ",
        base::HumanBytesExact(segment_size), ") on ", memory_.name(),
        " after emptying the cache: ", base::HumanBytesExact(s.bytes_in_use), " in use, ",
        base::HumanBytesExact(s.bytes_reserved), " reserved, largest free block ",
        base::HumanBytesExact(s.largest_free_block),
        "; free tensors or lower the batch. Back-end: ",
        ptr.status().message()));
  }
  Block* block = NewBlockStruct();
  block->ptr = static_cast<char*>(*ptr);
  block->size = segment_size;
  block->small = small;
  segments_.push_back(block);
  ++stats_.num_segments;
  ++stats_.num_segment_allocs;
  stats_.bytes_reserved += segment_size;
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return block;
}

// Marks a free block (already out of its free set) allocated, splitting off the remainder.
CachingAllocator::Block* CachingAllocator::TakeBlock(Block* block, int64_t rounded,
                                                     int64_t bytes) {
  const int64_t remainder = block->size - rounded;
  if (ShouldSplit(block->small, remainder)) {
    Block* rest = NewBlockStruct();
    rest->ptr = block->ptr + rounded;
    rest->size = remainder;
    rest->small = block->small;
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) block->next->prev = rest;
    block->next = rest;
    block->size = rounded;
    InsertFree(rest);
  }
  block->allocated = true;
  block->requested = bytes;
  ++stats_.num_alloc_calls;
  ++stats_.num_live_allocations;
  stats_.bytes_in_use += block->size;
  stats_.bytes_requested += bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return block;
}

absl::Status CachingAllocator::Free(void* ptr) {
  Block* block = live_.Find(ptr);
  if (block == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "caching allocator: free of %p, which is not a live allocation (freed twice, or not "
        "returned by this allocator)",
        ptr));
  }
  live_.Erase(ptr);
  ++stats_.num_free_calls;
  --stats_.num_live_allocations;
  stats_.bytes_in_use -= block->size;
  stats_.bytes_requested -= block->requested;
  block->allocated = false;
  block->requested = 0;
  block = MergeWithNeighbours(block);
  InsertFree(block);
  return absl::OkStatus();
}

// Coalesces a just-freed block with free neighbours of its segment; returns the merged block
// (not yet in a free set). The first block of a segment always survives a merge, so
// segments_ stays valid.
CachingAllocator::Block* CachingAllocator::MergeWithNeighbours(Block* block) {
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    EraseFree(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    ReleaseBlockStruct(next);
  }
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    EraseFree(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    ReleaseBlockStruct(block);
    block = prev;
  }
  return block;
}

int64_t CachingAllocator::EmptyCache() {
  int64_t released = 0;
  std::vector<Block*> kept;
  kept.reserve(segments_.size());
  for (Block* head : segments_) {
    if (head->allocated || head->next != nullptr) {
      kept.push_back(head);
      continue;
    }
    // A wholly free segment: one free block spanning it.
    EraseFree(head);
    absl::Status status = memory_.Free(head->ptr);
    TS_CHECK(status.ok()) << status;
    released += head->size;
    stats_.bytes_reserved -= head->size;
    --stats_.num_segments;
    ++stats_.num_segment_frees;
    ReleaseBlockStruct(head);
  }
  segments_ = std::move(kept);
  return released;
}

CachingAllocatorStats CachingAllocator::stats() const {
  CachingAllocatorStats s = stats_;
  s.num_free_blocks = small_free_.size() + static_cast<int64_t>(large_free_.size());
  s.largest_free_block = small_free_.LargestSize();
  if (!large_free_.empty()) {
    s.largest_free_block = std::max(s.largest_free_block, (*large_free_.rbegin())->size);
  }
  const int64_t free_bytes = s.bytes_reserved - s.bytes_in_use;
  s.fragmentation = free_bytes > 0 ? 1.0 - static_cast<double>(s.largest_free_block) /
                                               static_cast<double>(free_bytes)
                                   : 0.0;
  return s;
}

absl::StatusOr<int64_t> CachingAllocator::BlockSize(const void* ptr) const {
  const Block* block = live_.Find(ptr);
  if (block == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("caching allocator: %p is not a live allocation", ptr));
  }
  return block->size;
}

}  // namespace tessera::memory
