// Ring schedules, step by step. P ranks in a ring: rank r receives only from prev = r - 1 and
// sends only to next = r + 1 (mod P). The message is cut into P segments and each segment into
// chunks; a chunk is forwarded as soon as it is reduced, so chunks of consecutive steps flow
// around the ring at the same time (the pipeline). Segment arithmetic is mod P.
#include <algorithm>

#include "tessera/base/check.h"
#include "tessera/comm/ring_plan_impl.h"

namespace tessera::comm::internal {
namespace {

int Mod(int64_t x, int p) { return static_cast<int>(((x % p) + p) % p); }

}  // namespace

Range SegmentRange(int64_t count, int size, int index) {
  TS_CHECK(size > 0 && index >= 0 && index < size) << index << " of " << size;
  const int64_t base = count / size, extra = count % size;
  return Range{index * base + std::min<int64_t>(index, extra), base + (index < extra ? 1 : 0)};
}

std::vector<Range> Chunks(Range segment, int64_t chunk_elems) {
  TS_CHECK(chunk_elems > 0) << chunk_elems;
  std::vector<Range> out;
  for (int64_t done = 0; done < segment.count; done += chunk_elems) {
    out.push_back(Range{segment.offset + done, std::min(chunk_elems, segment.count - done)});
  }
  return out;
}

int64_t ChooseChunkElements(int64_t count, int size, int64_t element_bytes, int64_t chunk_bytes) {
  TS_CHECK(element_bytes > 0 && size > 0);
  if (chunk_bytes <= 0) {
    const int64_t segment_bytes = (count + size - 1) / size * element_bytes;
    chunk_bytes = std::clamp(segment_bytes / kTargetChunksPerSegment, kMinChunkBytes,
                             kMaxChunkBytes);
  }
  return std::max<int64_t>(1, chunk_bytes / element_bytes);
}

// Reduce-scatter: afterwards rank r holds the reduction of segment r.
//   step 0:      send my segment r - 1 to next; receive segment r - 2 from prev and add my own
//                values of it (the partial sum of two ranks);
//   step s:      forward the partial sum received at step s - 1 (segment r - s - 1) and receive
//                segment r - s - 2, whose partial sum now covers s + 2 ranks;
//   step P - 2:  the segment received is r itself, complete: it goes to the output.
// Chunk by chunk, "forward" happens right after each chunk is reduced, not after the segment.
RingPlan ReduceScatterPlan(int64_t count, int size, int rank, int64_t chunk_elems) {
  RingPlan plan;
  if (size == 1) return plan;
  plan.initial_sends = Chunks(SegmentRange(count, size, Mod(rank - 1, size)), chunk_elems);
  for (int step = 0; step <= size - 2; ++step) {
    const bool last = step == size - 2;
    for (Range chunk : Chunks(SegmentRange(count, size, Mod(rank - step - 2, size)), chunk_elems)) {
      plan.items.push_back(RingItem{chunk, /*reduce=*/true, /*final=*/last, /*forward=*/!last});
    }
  }
  return plan;
}

// All-gather: rank r starts with (only) segment r complete.
//   step 0:      send segment r to next; receive segment r - 1 from prev into place;
//   step s:      forward what arrived at step s - 1 (segment r - s) and receive segment r - s - 1;
//   step P - 2:  the last segment, r + 1, arrives; nothing is forwarded (next already has it).
RingPlan AllGatherPlan(int64_t count, int size, int rank, int64_t chunk_elems) {
  RingPlan plan;
  if (size == 1) return plan;
  plan.initial_sends = Chunks(SegmentRange(count, size, rank), chunk_elems);
  plan.initial_from_output = true;
  for (int step = 0; step <= size - 2; ++step) {
    for (Range chunk : Chunks(SegmentRange(count, size, Mod(rank - step - 1, size)), chunk_elems)) {
      plan.items.push_back(RingItem{chunk, /*reduce=*/false, /*final=*/false,
                                    /*forward=*/step < size - 2});
    }
  }
  return plan;
}

// All-reduce = reduce-scatter + all-gather, as one pipeline: the last reduce-scatter step's
// complete chunks are sent on at once (they are all-gather's step-0 sends), so the all-gather
// starts while the reduce-scatter is still finishing. Rank r moves 2 (P - 1) / P of the message.
RingPlan AllReducePlan(int64_t count, int size, int rank, int64_t chunk_elems) {
  RingPlan plan = ReduceScatterPlan(count, size, rank, chunk_elems);
  if (size == 1) return plan;
  for (RingItem& item : plan.items) {
    if (item.final) item.forward = true;  // all-gather step 0: send my complete segment r
  }
  RingPlan gather = AllGatherPlan(count, size, rank, chunk_elems);
  plan.items.insert(plan.items.end(), gather.items.begin(), gather.items.end());
  return plan;
}

// Broadcast: the root sends every chunk to next; each other rank receives it in place and
// forwards it unless next is the root. Chunks stream, so all ranks are busy after P - 1 chunks.
RingPlan BroadcastPlan(int64_t count, int size, int rank, int root, int64_t chunk_elems) {
  RingPlan plan;
  if (size == 1) return plan;
  const Range all{0, count};
  if (rank == root) {
    plan.initial_sends = Chunks(all, chunk_elems);
    plan.initial_from_output = true;
    return plan;
  }
  const bool forward = Mod(rank + 1, size) != root;
  for (Range chunk : Chunks(all, chunk_elems)) {
    plan.items.push_back(RingItem{chunk, /*reduce=*/false, /*final=*/false, forward});
  }
  return plan;
}

}  // namespace tessera::comm::internal
