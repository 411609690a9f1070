// The point-to-point seam under the ring collectives (internal). A back-end (threads, MPI)
// provides non-blocking sends and receives matched by (source, lane, tag) in FIFO order; the
// ring algorithms in ring_*.cc are written once on top of it.
//
//   std::unique_ptr<TransportRequest> r = transport.Irecv(prev, Lane::kCollective, tag, buf, n);
//   std::unique_ptr<TransportRequest> s = transport.Isend(next, Lane::kCollective, tag, mine, n);
//   TS_RETURN_IF_ERROR(r->Wait(absl::Now() + timeout));   // DeadlineExceeded / Unavailable
//
// Destroying a request that has not completed cancels it: once the destructor returns the
// transport never touches that buffer again (MPI: as far as MPI_Cancel allows).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tessera::comm::internal {

// Collectives and user messages never match each other.
enum class Lane : int { kCollective = 0, kUser = 1 };

class TransportRequest {
 public:
  virtual ~TransportRequest() = default;
  // OK once the message is delivered (send) or has arrived (receive). DeadlineExceeded at the
  // deadline (the request stays pending), Unavailable when the peer is known to be gone,
  // InvalidArgument when a received message's size differs from the posted one.
  virtual absl::Status Wait(absl::Time deadline) = 0;
  // Non-blocking: true when Wait would return at once.
  virtual bool Test() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Largest tag the back-end can carry; callers use tag % (max_tag() + 1).
  virtual int64_t max_tag() const = 0;
  virtual std::unique_ptr<TransportRequest> Isend(int peer, Lane lane, int64_t tag,
                                                  const void* data, int64_t bytes) = 0;
  virtual std::unique_ptr<TransportRequest> Irecv(int peer, Lane lane, int64_t tag, void* data,
                                                  int64_t bytes) = 0;
};

}  // namespace tessera::comm::internal
