// A Communicator whose collectives are our pipelined rings over a point-to-point Transport
// (internal; the thread and MPI back-ends are this class over their transports).
//
//   auto comm =
//       std::make_unique<RingCommunicator>(world.Endpoint(rank), options, Backend::kThread);
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tessera/comm/communicator.h"
#include "tessera/comm/communicator_impl.h"
#include "tessera/comm/transport_impl.h"

namespace tessera::comm::internal {

struct RingContext;

class RingCommunicator : public Communicator {
 public:
  // `on_destroy` runs after the async threads are joined (the thread world marks the rank gone).
  RingCommunicator(std::unique_ptr<Transport> transport, CommOptions options, Backend backend,
                   std::function<void()> on_destroy = nullptr);
  ~RingCommunicator() override;
  Backend backend() const override { return backend_; }

 protected:
  absl::Status Execute(const Call& call) override;

 private:
  // The ring context of `call`, counting what it sends in traffic().
  RingContext Context(const Call& call);
  absl::Status ExecuteCall(const Call& call);
  absl::Status AllReduce(const Call& call);
  absl::Status ReduceScatter(const Call& call);
  absl::Status AllGather(const Call& call);
  absl::Status Broadcast(const Call& call);
  absl::Status AllToAll(const Call& call);
  absl::Status Send(const Call& call);
  absl::Status Recv(const Call& call);

  std::unique_ptr<Transport> transport_;
  Backend backend_;
  std::function<void()> on_destroy_;
};

}  // namespace tessera::comm::internal
