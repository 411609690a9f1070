// Built when MPICH was not found: the "mpi" back-end says so.
#include "absl/status/status.h"
#include "tessera/comm/backends_impl.h"
#include "tessera/comm/launch.h"

namespace tessera::comm {

absl::StatusOr<std::unique_ptr<MpiSession>> MpiSession::Start(int*, char***) {
  return absl::UnimplementedError(
      "this build has no MPI back-end (MPICH was not found when it was configured)");
}
MpiSession::~MpiSession() = default;

namespace internal {

bool MpiCompiled() { return false; }
absl::StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(const CommOptions&) {
  return absl::UnimplementedError(
      "this build has no MPI back-end (MPICH was not found when it was configured)");
}

}  // namespace internal
}  // namespace tessera::comm
