// Back-end entry points used by the factory in launch.cc (internal). Each has a real
// implementation when its library was found at build time (MPICH: mpi_backend.cc; CUDA with
// NCCL: nccl_communicator.cc) and otherwise a stub returning Unimplemented (*_stub.cc).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm::internal {

bool MpiCompiled();
// This process as one rank of the MPI job (MPI must be initialized with MPI_THREAD_MULTIPLE).
absl::StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(const CommOptions& options);

bool NcclCompiled();
int NcclDeviceCount();  // 0 without a GPU or driver
absl::StatusOr<std::string> NcclUniqueId();
absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(int rank, int size,
                                                                     const std::string& unique_id,
                                                                     int device,
                                                                     const CommOptions& options);
// NCCL ranks bootstrapped over MPI: rank 0's unique id is broadcast with MPI_Bcast.
absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicatorOverMpi(
    const CommOptions& options);

}  // namespace tessera::comm::internal
