// Ring schedules (internal): which chunks a rank receives from its previous rank, in order, and
// what it does with each; written once for reduce-scatter, all-gather, all-reduce and broadcast
// and run by RunRingPipeline (ring_pipeline.cc) over any Transport.
//
//   RingPlan plan = AllReducePlan(/*count=*/1000, /*size=*/4, /*rank=*/1, /*chunk_elems=*/64);
//   // plan.initial_sends: chunks of my own data sent at step 0
//   // plan.items: every chunk that arrives from rank 0, in arrival order
//
// Buffers are addressed by element offset into a buffer of the full message (size() segments).
// Segment i of a count-element message: the first count % P segments get one element more.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::comm::internal {

struct Range {
  int64_t offset = 0;  // elements from the start of the full buffer
  int64_t count = 0;
};

// Segment `index` of `count` elements cut into `size` segments.
Range SegmentRange(int64_t count, int size, int index);
// The chunks of a segment, each at most chunk_elems elements (none for an empty segment).
std::vector<Range> Chunks(Range segment, int64_t chunk_elems);
// Elements per chunk: chunk_bytes / element_bytes when chunk_bytes > 0, otherwise chosen from
// the message: about kTargetChunksPerSegment chunks per segment, between kMinChunkBytes and
// kMaxChunkBytes (so the receive buffers stay in cache and several chunks are in flight).
int64_t ChooseChunkElements(int64_t count, int size, int64_t element_bytes, int64_t chunk_bytes);
inline constexpr int64_t kTargetChunksPerSegment = 4;
inline constexpr int64_t kMinChunkBytes = 128 << 10;
inline constexpr int64_t kMaxChunkBytes = 512 << 10;

struct RingItem {
  Range range;
  bool reduce = false;   // arrives in a receive buffer and is combined with input[range]
  bool final = false;    // reduce: the sum is complete; it goes to output[range] (/P for average)
  bool forward = false;  // send the result (work or output) on to the next rank
};

struct RingPlan {
  std::vector<Range> initial_sends;  // sent from `input` (reduce-scatter) or `output` at step 0
  bool initial_from_output = false;
  std::vector<RingItem> items;       // arrivals from the previous rank, in order
};

RingPlan ReduceScatterPlan(int64_t count, int size, int rank, int64_t chunk_elems);
RingPlan AllGatherPlan(int64_t count, int size, int rank, int64_t chunk_elems);
RingPlan AllReducePlan(int64_t count, int size, int rank, int64_t chunk_elems);
RingPlan BroadcastPlan(int64_t count, int size, int rank, int root, int64_t chunk_elems);

}  // namespace tessera::comm::internal
