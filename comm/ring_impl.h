// Ring collectives over a Transport (internal).
//
//   RingContext ctx{transport, call, /*tag=*/call.sequence, options.timeout, /*depth=*/4};
//   TS_RETURN_IF_ERROR(ExchangeHeaders(ctx));            // every rank agrees, or InvalidArgument
//   RingPlan plan = AllReducePlan(call.count, P, rank, chunk_elems);
//   TS_RETURN_IF_ERROR(RunRingPipeline(ctx, plan, RingBuffers{...}));
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tessera/comm/communicator_impl.h"
#include "tessera/comm/ring_plan_impl.h"
#include "tessera/comm/transport_impl.h"

namespace tessera::comm::internal {

struct RingContext {
  Transport& transport;
  const Call& call;
  Lane lane = Lane::kCollective;
  int64_t tag = 0;
  absl::Duration timeout = absl::Seconds(60);
  int depth = 4;  // receives posted ahead
  // Counts what is sent (Communicator::traffic); null in unit tests of the ring pieces.
  std::function<void(int64_t bytes, bool header)> count_sent;
  void Sent(int64_t bytes, bool header) const {
    if (count_sent) count_sent(bytes, header);
  }
};

// Element addresses for a plan: input[offset], work[offset] and output[offset - output_shift].
struct RingBuffers {
  const char* input = nullptr;
  char* work = nullptr;
  char* output = nullptr;
  int64_t output_shift = 0;
};

// Runs a plan: posts the initial sends, then takes the items in arrival order with `depth`
// receives in flight, reducing and forwarding each chunk as it arrives.
absl::Status RunRingPipeline(const RingContext& ctx, const RingPlan& plan,
                             const RingBuffers& buffers);

// Sends this rank's {kind, op, dtype, count, sequence, root} to every peer and checks theirs:
// all ranks see all headers, so all of them return the same InvalidArgument on a mismatch.
// Doubles as the barrier.
absl::Status ExchangeHeaders(const RingContext& ctx);

// Waits for `request` (a message to or from `peer`) until now + timeout; errors name this
// rank, the call and the peer, and say what to check.
absl::Status WaitFor(const RingContext& ctx, TransportRequest& request, int peer, bool sending);

}  // namespace tessera::comm::internal
