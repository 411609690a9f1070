// The base of the hybrid runtime's NodeKernels that run collectives on a rank's activation
// channel (distributed_dense.h, layout_node.h): what they sent and how long they were blocked,
// for the report.
//
//   class MyLayer : public CollectiveKernel {
//     ... TS_RETURN_IF_ERROR(Counted([&] { return comm_.AllReduce(v, comm::ReduceOp::kSum); }));
//   };
//   kernel->traffic_bytes();    // payload sent so far
//   kernel->blocked_seconds();  // time spent in its collectives so far
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <memory>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/node_kernel.h"

namespace tessera::exec {

class CollectiveKernel : public NodeKernel {
 public:
  explicit CollectiveKernel(comm::Communicator& comm) : comm_(comm) {}
  virtual int64_t traffic_bytes() const { return traffic_bytes_; }
  virtual double blocked_seconds() const { return blocked_s_; }

 protected:
  // Runs `collective`, adding what it sent to traffic_bytes() and its time to blocked_seconds().
  template <typename F>
  absl::Status Counted(F collective) {
    const int64_t before = comm_.traffic().payload_bytes;
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = collective();
    blocked_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    traffic_bytes_ += comm_.traffic().payload_bytes - before;
    return s;
  }

  // The node's state on `backend` (made on first use); FailedPrecondition naming the node
  // unless the back-end keeps its memory on the host, where the collectives stage operands.
  absl::StatusOr<NodeState*> HostState(const graph::Node& node, Backend& backend) {
    if (absl::Status s = RequireHostMemory(node, backend); !s.ok()) return s;
    if (state_ == nullptr) state_ = backend.NewNodeState();
    return state_.get();
  }

  comm::Communicator& comm_;
  std::vector<float> scratch_;  // the axis collectives' staging (axis_collectives.h)
  std::unique_ptr<NodeState> state_;

 private:
  int64_t traffic_bytes_ = 0;
  double blocked_s_ = 0;
};

}  // namespace tessera::exec
