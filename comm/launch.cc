// The back-end factory: names to communicators, and the thread launcher.
#include "tessera/comm/launch.h"

#include <atomic>
#include <thread>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "tessera/base/setting_error.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/backends_impl.h"
#include "tessera/comm/ring_communicator_impl.h"
#include "tessera/comm/thread_world_impl.h"

namespace tessera::comm {
namespace {

// Collects the first failure in time across rank threads.
class FirstError {
 public:
  void Record(int rank, const absl::Status& status) {
    if (status.ok()) return;
    absl::MutexLock lock(&mutex_);
    if (!first_.ok()) return;
    const std::string prefix = absl::StrCat("rank ", rank, ":");
    first_ = absl::StartsWith(status.message(), prefix)
                 ? status
                 : base::WithPrefix(status, absl::StrCat(prefix, " "));
  }
  absl::Status Get() {
    absl::MutexLock lock(&mutex_);
    return first_;
  }

 private:
  absl::Mutex mutex_;
  absl::Status first_;
};

// Runs fn on `ranks` threads. Thread r first makes its `channels` communicators, make(r, c) in
// channel order (the same order on every rank, as NCCL's initialisation needs), then calls fn
// with them. Returns OK when every rank returned OK, else the first error in time.
using MakeChannel =
    std::function<absl::StatusOr<std::unique_ptr<Communicator>>(int rank, int channel)>;
absl::Status RunChannelThreads(int ranks, int channels, const MakeChannel& make,
                               const ChannelsFunction& fn) {
  FirstError errors;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      std::vector<std::unique_ptr<Communicator>> owned;
      std::vector<Communicator*> comms;
      for (int c = 0; c < channels; ++c) {
        absl::StatusOr<std::unique_ptr<Communicator>> comm = make(rank, c);
        if (!comm.ok()) return errors.Record(rank, comm.status());
        comms.push_back(comm->get());
        owned.push_back(*std::move(comm));
      }
      // Recorded before the communicators go (a thread rank departs then): an error that makes
      // peers fail comes first.
      errors.Record(rank, fn(comms));
    });
  }
  for (std::thread& t : threads) t.join();
  return errors.Get();
}

// FailedPrecondition unless `ranks` GPUs are visible (the nccl back-end's one per rank-thread).
absl::Status CheckGpus(int ranks) {
  const int devices = internal::NcclDeviceCount();
  if (devices < ranks) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the nccl back-end needs one GPU per rank: ", ranks, " ranks but ", devices,
        " GPU(s) visible; use the thread back-end or fewer ranks"));
  }
  return absl::OkStatus();
}

// Thread r drives GPU r with `channels` NCCL communicators, one NCCL unique id each.
absl::Status RunNcclThreads(int ranks, int channels, const ChannelsFunction& fn,
                            const CommOptions& options) {
  TS_RETURN_IF_ERROR(CheckGpus(ranks));
  std::vector<std::string> ids;
  for (int c = 0; c < channels; ++c) {
    TS_ASSIGN_OR_RETURN(std::string id, internal::NcclUniqueId());
    ids.push_back(std::move(id));
  }
  return RunChannelThreads(ranks, channels, [&](int rank, int c) {
    return internal::CreateNcclCommunicator(rank, ranks, ids[c], rank, options);
  }, fn);
}

// Thread r holds one ring communicator per channel, each channel its own shared-memory world.
absl::Status RunThreadChannels(int ranks, int channels, const ChannelsFunction& fn,
                               const CommOptions& options) {
  std::vector<std::unique_ptr<internal::ThreadWorld>> worlds;
  for (int c = 0; c < channels; ++c) worlds.push_back(std::make_unique<internal::ThreadWorld>(ranks));
  return RunChannelThreads(ranks, channels, [&](int rank, int c) {
    internal::ThreadWorld* w = worlds[c].get();
    return absl::StatusOr<std::unique_ptr<Communicator>>(
        std::make_unique<internal::RingCommunicator>(w->Endpoint(rank), options, Backend::kThread,
                                                     [w, rank] { w->Depart(rank); }));
  }, fn);
}

}  // namespace

absl::Status RunRanksWithChannels(const CommOptions& options, int thread_ranks, int channels,
                                  const ChannelsFunction& fn) {
  TS_RETURN_IF_ERROR(ValidateOptions(options));
  if (channels < 1 || thread_ranks < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunRanksWithChannels: ranks and channels must be at least 1, got ", thread_ranks,
        " and ", channels));
  }
  switch (options.backend) {
    case Backend::kThread: return RunThreadChannels(thread_ranks, channels, fn, options);
    case Backend::kNccl: return RunNcclThreads(thread_ranks, channels, fn, options);
    case Backend::kMpi: break;
  }
  std::vector<std::unique_ptr<Communicator>> owned;
  std::vector<Communicator*> comms;
  for (int c = 0; c < channels; ++c) {
    TS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, CreateCommunicator(options));
    comms.push_back(comm.get());
    owned.push_back(std::move(comm));
  }
  absl::Status status = fn(comms);
  if (status.ok() || absl::StartsWith(status.message(), "rank ")) return status;
  return absl::Status(status.code(),
                      absl::StrCat("rank ", comms[0]->rank(), ": ", status.message()));
}

absl::Status ValidateOptions(const CommOptions& options) {
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("CommOptions.timeout must be positive, got ",
                                                   absl::FormatDuration(options.timeout)));
  }
  if (options.chunk_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CommOptions.chunk_bytes must be 0 (automatic) or positive, got ", options.chunk_bytes));
  }
  if (options.pipeline_depth < 1 || options.async_threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CommOptions.pipeline_depth and async_threads must be at least 1, got ",
        options.pipeline_depth, " and ", options.async_threads));
  }
  const std::vector<Backend> compiled = CompiledBackends();
  if (absl::c_linear_search(compiled, options.backend)) return absl::OkStatus();
  std::vector<std::string> names;
  for (Backend b : compiled) names.emplace_back(BackendName(b));
  return absl::UnimplementedError(absl::StrCat(
      "the ", BackendName(options.backend), " back-end is not compiled into this build (",
      options.backend == Backend::kMpi ? "MPICH was not found" : "CUDA/NCCL was not found",
      "); available: ", absl::StrJoin(names, ", ")));
}

absl::Status CheckThreadRanks(const CommOptions& options, int ranks) {
  TS_RETURN_IF_ERROR(ValidateOptions(options));
  if (ranks < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ranks must be at least 1, got ", ranks));
  }
  return options.backend == Backend::kNccl ? CheckGpus(ranks) : absl::OkStatus();
}

absl::Status RunOnThreads(int ranks, const RankFunction& fn, CommOptions options) {
  TS_RETURN_IF_ERROR(ValidateOptions(options));
  if (ranks < 1) {
    return absl::InvalidArgumentError(absl::StrCat("RunOnThreads: ranks must be at least 1, got ",
                                                   ranks));
  }
  const ChannelsFunction one = [&fn](absl::Span<Communicator* const> c) { return fn(*c[0]); };
  if (options.backend == Backend::kNccl) return RunNcclThreads(ranks, 1, one, options);
  if (options.backend != Backend::kThread) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunOnThreads runs the thread or nccl back-end, not '", BackendName(options.backend),
        "'; use RunRanks or CreateCommunicator for mpi"));
  }
  return RunThreadChannels(ranks, 1, one, options);
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateCommunicator(const CommOptions& options) {
  TS_RETURN_IF_ERROR(ValidateOptions(options));
  if (options.backend == Backend::kMpi) return internal::CreateMpiCommunicator(options);
  if (options.backend == Backend::kNccl) return internal::CreateNcclCommunicatorOverMpi(options);
  // Threads: a world of one rank, owned by the communicator.
  auto world = std::make_shared<internal::ThreadWorld>(1);
  std::unique_ptr<Communicator> comm = std::make_unique<internal::RingCommunicator>(
      world->Endpoint(0), options, Backend::kThread, [world] {});
  return comm;
}

absl::Status RunRanks(const CommOptions& options, int thread_ranks, const RankFunction& fn) {
  TS_RETURN_IF_ERROR(ValidateOptions(options));
  if (options.backend == Backend::kMpi) {
    TS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, CreateCommunicator(options));
    absl::Status status = fn(*comm);
    if (status.ok() || absl::StartsWith(status.message(), "rank ")) return status;
    return base::WithPrefix(status, absl::StrCat("rank ", comm->rank(), ": "));
  }
  return RunOnThreads(thread_ranks, fn, options);
}

}  // namespace tessera::comm
