// Starting ranks: threads of this process, MPI processes, or NCCL GPUs, chosen by back-end.
//
//   // Threads (the default; nothing to launch):
//   absl::Status s = tessera::comm::RunOnThreads(4, [](tessera::comm::Communicator& comm) {
//     return comm.Barrier();
//   });
//
//   // MPI (run as `mpiexec -n 4 prog`): this process is one rank.
//   int main(int argc, char** argv) {
//     auto mpi = tessera::comm::MpiSession::Start(&argc, &argv);   // MPI_Init_thread
//     auto comm = tessera::comm::CreateCommunicator({.backend = Backend::kMpi});
//     ...
//   }
//
//   // Either, by back-end (what tessera-bench-comm does): `thread_ranks` threads for
//   // kThread and kNccl on one machine, this process's rank for kMpi.
//   TS_RETURN_IF_ERROR(tessera::comm::RunRanks(options, /*thread_ranks=*/4, fn));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm {

using RankFunction = std::function<absl::Status(Communicator&)>;

// InvalidArgument naming the field for a timeout <= 0, chunk_bytes < 0, pipeline_depth < 1 or
// async_threads < 1; Unimplemented for a back-end not compiled in (CompiledBackends()).
absl::Status ValidateOptions(const CommOptions& options);

// OK when RunOnThreads could start `ranks` ranks of options.backend now: the options are valid,
// ranks >= 1, and for kNccl `ranks` GPUs are visible (FailedPrecondition saying how many are).
// Lets a program refuse before its setup work, not after.
absl::Status CheckThreadRanks(const CommOptions& options, int ranks);

// Runs fn on `ranks` threads, each with its own communicator of options.backend: kThread
// (shared memory) or kNccl (thread r drives GPU r; needs `ranks` GPUs). Returns OK when every
// rank returned OK, otherwise the first error in time, prefixed with its rank.
absl::Status RunOnThreads(int ranks, const RankFunction& fn, CommOptions options = {});

// This process as one rank of a multi-process job: kMpi, or kNccl bootstrapped over MPI (GPU
// = rank % GPUs). Needs an MpiSession. kThread gives a communicator of size 1.
absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const CommOptions& options);

// kThread/kNccl: RunOnThreads(thread_ranks, fn); kMpi: fn once with CreateCommunicator.
absl::Status RunRanks(const CommOptions& options, int thread_ranks, const RankFunction& fn);

// Like RunRanks, but every rank gets `channels` communicators over the same ranks, each with its
// own sequence of collectives and its own traffic(): one thread may drive each without ordering
// its calls against the others'. The hybrid runtime issues activation collectives on one while
// gradient buckets all-reduce on another (exec/hybrid_worker.h). On kNccl (threads, GPU r for
// rank r) each channel is its own NCCL communicator; all ranks must use the channels in the same
// order, as NCCL needs of communicators that share a GPU.
using ChannelsFunction = std::function<absl::Status(absl::Span<Communicator* const> channels)>;
absl::Status RunRanksWithChannels(const CommOptions& options, int thread_ranks, int channels,
                                  const ChannelsFunction& fn);

// MPI for the life of the object: MPI_Init_thread(MPI_THREAD_MULTIPLE) unless MPI is already
// initialized, MPI_Finalize at destruction if it initialized it. Unimplemented without MPICH.
class MpiSession {
 public:
  static absl::StatusOr<std::unique_ptr<MpiSession>> Start(int* argc, char*** argv);
  ~MpiSession();
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

 private:
  MpiSession() = default;
  bool finalize_ = false;
  int world_rank_ = 0;
  int world_size_ = 1;
};

}  // namespace tessera::comm
