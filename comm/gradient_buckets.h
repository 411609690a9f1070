// Gradient buckets: gradients fused into buckets that are all-reduced while backward still
// runs. Backward produces gradients in reverse order of the forward pass, so buckets are formed
// walking the registrations backwards: bucket 0 holds the last-registered gradients (ready
// first) and is small, so communication starts early; later buckets hold up to bucket_bytes.
//
//   tessera::comm::GradientBuckets buckets(comm, {.bucket_bytes = 25 << 20});
//   TS_ASSIGN_OR_RETURN(int w1, buckets.Register("fc1.w", grad_fc1_w));  // forward order
//   TS_ASSIGN_OR_RETURN(int w2, buckets.Register("fc2.w", grad_fc2_w));
//   for (int step = 0; step < steps; ++step) {
//     ... backward computes fc2.w's gradient ...
//     TS_RETURN_IF_ERROR(buckets.MarkReady(w2));   // its bucket may launch now
//     ... backward computes fc1.w's gradient ...
//     TS_RETURN_IF_ERROR(buckets.MarkReady(w1));
//     TS_RETURN_IF_ERROR(buckets.Finish());        // waits; gradients now hold the average
//   }
//
// A bucket is launched, on the buckets' communication thread, as soon as its last gradient is
// ready and every earlier bucket has been launched, so all ranks launch the same buckets in the
// same order (a static plan: nothing is negotiated at run time). Several buckets are in flight
// at once (up to the communicator's async_threads). Finish() launches buckets whose gradients
// were never marked ready (unused parameters: their values are reduced as they are), waits for
// all, and copies the results back. Every rank must register the same gradients (names, counts,
// dtypes) in the same order. While buckets are in flight, issue no other collective on the same
// communicator from another thread: collectives are numbered in call order (with
// launch_on_caller, the calling thread may issue its own between MarkReady calls).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm {

struct GradientBucketOptions {
  int64_t bucket_bytes = 25 << 20;       // capacity of every bucket but the first
  int64_t first_bucket_bytes = 1 << 20;  // capacity of bucket 0 (the first to be ready)
  ReduceOp op = ReduceOp::kAverage;
  // Start each bucket's all-reduce inside the MarkReady (or Finish) that completes it, on the
  // caller's thread, instead of on the buckets' thread: the bucket's place in the sequence of
  // collectives is then fixed by the caller's program order, so the caller may issue other
  // collectives between MarkReady calls (the hybrid runtime's activation collectives). The
  // caller pays the copy into the fused buffer; the all-reduce still runs asynchronously.
  bool launch_on_caller = false;
};

struct GradientBucket {
  std::vector<int> gradients;  // gradient ids, in the order they are expected to be ready
  int64_t count = 0;           // elements
  DType dtype = DType::kFloat32;
};

class GradientBuckets {
 public:
  explicit GradientBuckets(Communicator& comm, GradientBucketOptions options = {});
  ~GradientBuckets();  // waits for buckets in flight
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Registers a gradient buffer, in forward (parameter) order; returns its id (0, 1, ...).
  // FailedPrecondition once the buckets are formed (at the first MarkReady or Finish).
  absl::StatusOr<int> Register(absl::string_view name, DataView gradient);
  // The gradient's values are final for this step.
  absl::Status MarkReady(int id);
  // Waits for every bucket of the step and copies the reduced values back into the gradients.
  // Returns the first error of any bucket. The next step starts with nothing ready.
  absl::Status Finish();

  // The bucket layout (formed on first use).
  const std::vector<GradientBucket>& buckets();
  // Buckets launched so far in the current step, in launch order.
  std::vector<int> launched() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::comm
