// The communication back-ends, as one typed name: what CommOptions::backend holds, what a
// Communicator says it is, and what the tools parse from their command lines.
//
//   TS_ASSIGN_OR_RETURN(Backend b, ParseBackend("mpi"));
//   BackendName(b);                // "mpi"
//   RanksAreThreads(b);            // false: each rank is a process of an MPI job
//   for (Backend c : CompiledBackends()) ...   // thread always; mpi, nccl when built with them
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tessera::comm {

enum class Backend : uint8_t {
  kThread,  // ranks are threads of this process; collectives through shared memory
  kMpi,     // this process is one rank of an MPI job (MPICH)
  kNccl,    // ranks are threads of this process, rank r on GPU r (CUDA builds)
};

absl::string_view BackendName(Backend backend);  // "thread", "mpi", "nccl"
// InvalidArgument naming `name` and listing every back-end name.
absl::StatusOr<Backend> ParseBackend(absl::string_view name);
// Every back-end name, in enum order (for command-line choices).
std::vector<std::string> AllBackendNames();
// The back-ends compiled into this build: kThread always, kMpi with MPICH, kNccl with CUDA.
std::vector<Backend> CompiledBackends();
// kThread and kNccl: every rank is a thread of this process; kMpi: one rank per process.
inline bool RanksAreThreads(Backend backend) { return backend != Backend::kMpi; }

}  // namespace tessera::comm
