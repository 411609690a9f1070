// Built without CUDA: the "nccl" back-end says so.
#include "absl/status/status.h"
#include "tessera/comm/backends_impl.h"

namespace tessera::comm::internal {
namespace {
absl::Status NoNccl() {
  return absl::UnimplementedError(
      "this build has no NCCL back-end (it is compiled when CUDA is found); use thread or mpi");
}
}  // namespace

bool NcclCompiled() { return false; }
int NcclDeviceCount() { return 0; }
absl::StatusOr<std::string> NcclUniqueId() { return NoNccl(); }
absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(int, int, const std::string&,
                                                                     int, const CommOptions&) {
  return NoNccl();
}
absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicatorOverMpi(const CommOptions&) {
  return NoNccl();
}

}  // namespace tessera::comm::internal
