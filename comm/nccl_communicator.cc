// The NCCL back-end (built with CUDA): a Communicator wrapping an ncclComm_t, collectives on
// its own CUDA stream, buffers in device memory. Every wait polls the stream and NCCL's async
// error with a deadline; on timeout the NCCL communicator is aborted (ncclCommAbort) so no
// kernel keeps waiting on a dead peer. NCCL cannot say which peer failed, so errors name the
// call and this rank. With CommOptions::host_buffers the caller's buffers are host memory: each
// call stages them through a pinned host block and a device block of a per-rank pool, all on
// the stream, and copies the result out when it has finished (Execute, or the handle's Wait).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/backends_impl.h"
#include "tessera/comm/communicator_impl.h"

namespace tessera::comm::internal {
namespace {

using base::CudaStatus;

absl::Status NcclStatus(ncclResult_t code, absl::string_view call) {
  if (code == ncclSuccess || code == ncclInProgress) return absl::OkStatus();
  const std::string message = absl::StrCat(call, " failed: ", ncclGetErrorString(code));
  if (code == ncclInvalidArgument || code == ncclInvalidUsage) {
    return absl::InvalidArgumentError(message);
  }
  return absl::UnavailableError(message);  // system or remote errors: a peer or the link
}

#define TS_NCCL_OK(call) TS_RETURN_IF_ERROR(NcclStatus((call), #call))

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kInt64: return ncclInt64;
  }
  return ncclFloat32;
}

ncclRedOp_t NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAverage: return ncclAvg;
    case ReduceOp::kMax: return ncclMax;
  }
  return ncclSum;
}

// A pinned host block and a device block of the same size: where a host-buffer call's data
// passes through on its way to and from the GPU.
struct StagingBlock {
  char* host = nullptr;
  char* device = nullptr;
  size_t bytes = 0;
};

// The NCCL communicator, its stream, a small device buffer for headers and the staging blocks
// of host-buffer calls (RAII).
struct NcclResources {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int64_t* headers = nullptr;  // device: (size + 1) headers of 4 int64
  bool aborted = false;
  absl::Mutex staging_mutex;
  std::vector<StagingBlock> free_staging;     // blocks no call holds
  std::vector<StagingBlock> retired_staging;  // blocks of failed calls, freed at the end

  ~NcclResources() {
    cudaSetDevice(device);
    if (comm != nullptr) {
      if (aborted) {
        ncclCommAbort(comm);
      } else {
        ncclCommDestroy(comm);
      }
    }
    for (const std::vector<StagingBlock>* blocks : {&free_staging, &retired_staging}) {
      for (const StagingBlock& b : *blocks) {
        cudaFreeHost(b.host);
        cudaFree(b.device);
      }
    }
    if (headers != nullptr) cudaFree(headers);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // The smallest free block of at least `bytes`, else a new one (a call that needs more than
  // any block so far allocates; the blocks are reused from call to call).
  absl::StatusOr<StagingBlock> TakeStaging(size_t bytes) {
    {
      absl::MutexLock lock(&staging_mutex);
      auto best = free_staging.end();
      for (auto it = free_staging.begin(); it != free_staging.end(); ++it) {
        if (it->bytes >= bytes && (best == free_staging.end() || it->bytes < best->bytes)) best = it;
      }
      if (best != free_staging.end()) {
        const StagingBlock b = *best;
        free_staging.erase(best);
        return b;
      }
    }
    StagingBlock b{.bytes = bytes};
    TS_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    TS_RETURN_IF_ERROR(CudaStatus(cudaMallocHost(reinterpret_cast<void**>(&b.host), bytes),
                                  "cudaMallocHost (staging host buffers)"));
    const cudaError_t d = cudaMalloc(reinterpret_cast<void**>(&b.device), bytes);
    if (d != cudaSuccess) {
      cudaFreeHost(b.host);
      return CudaStatus(d, "cudaMalloc (staging host buffers)");
    }
    return b;
  }
  // `reusable` is false after a failure, when the stream may still use the block.
  void GiveStaging(const StagingBlock& b, bool reusable) {
    absl::MutexLock lock(&staging_mutex);
    (reusable ? free_staging : retired_staging).push_back(b);
  }
};

// Bytes a call reads from its input and writes to its output (Call's count conventions).
std::pair<size_t, size_t> CallBytes(const Call& call, int ranks) {
  const size_t one = static_cast<size_t>(call.count) * DTypeSize(call.dtype);
  const size_t all = one * static_cast<size_t>(ranks);
  switch (call.kind) {
    case CallKind::kAllReduce:
    case CallKind::kBroadcast: return {one, one};
    case CallKind::kReduceScatter: return {all, one};
    case CallKind::kAllGather: return {one, all};
    case CallKind::kAllToAll: return {all, all};
    case CallKind::kSend: return {one, 0};
    case CallKind::kRecv: return {0, one};
    case CallKind::kBarrier: return {0, 0};
  }
  return {0, 0};
}

// What a host-buffer call does once its stream work has ended: copy the result from the pinned
// block into the caller's buffer (only when it succeeded) and return the block to the pool.
using FinishFn = std::function<void(bool ok)>;

// Polls `done` until it is true, NCCL reports an error, or the deadline passes (then aborts).
absl::Status PollUntil(NcclResources& r, absl::Time deadline, const std::string& what,
                       const std::function<cudaError_t()>& query) {
  while (true) {
    const cudaError_t q = query();
    if (q == cudaSuccess) return absl::OkStatus();
    if (q != cudaErrorNotReady) return CudaStatus(q, what);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(r.comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      r.aborted = true;
      return NcclStatus(async, absl::StrCat(what, " (NCCL asynchronous error)"));
    }
    if (absl::Now() >= deadline) {
      r.aborted = true;
      ncclCommAbort(r.comm);
      r.comm = nullptr;
      return absl::DeadlineExceededError(absl::StrCat(
          what, ": NCCL did not finish in time: a peer died, stopped answering or has not made "
                "this call (the NCCL communicator was aborted; CommOptions::timeout sets the "
                "limit)"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

class NcclEventState : public HandleState {
 public:
  NcclEventState(std::shared_ptr<NcclResources> r, cudaEvent_t event, absl::Duration timeout,
                 std::string what, FinishFn finish)
      : r_(std::move(r)), event_(event), deadline_(absl::Now() + timeout), what_(std::move(what)),
        finish_(std::move(finish)) {}
  ~NcclEventState() override {
    Wait().IgnoreError();  // a staged result is copied out and its block returned
    cudaEventDestroy(event_);
  }
  absl::Status Wait() override {
    absl::MutexLock lock(&mutex_);
    if (!waited_) {
      cudaSetDevice(r_->device);
      status_ = PollUntil(*r_, deadline_, what_, [this] { return cudaEventQuery(event_); });
      if (finish_) finish_(status_.ok());
      waited_ = true;
    }
    return status_;
  }
  // A host-buffer call is done once its result is in the caller's buffer: when the event has
  // passed, this copies it there (what Wait would do) before saying so.
  bool Done() const override {
    if (cudaEventQuery(event_) == cudaErrorNotReady) return false;
    if (finish_) const_cast<NcclEventState*>(this)->Wait().IgnoreError();
    return true;
  }

 private:
  std::shared_ptr<NcclResources> r_;
  cudaEvent_t event_;
  absl::Time deadline_;
  std::string what_;
  FinishFn finish_;  // empty for device buffers
  absl::Mutex mutex_;
  bool waited_ = false;
  absl::Status status_;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(int rank, int size, CommOptions options, std::shared_ptr<NcclResources> r)
      : Communicator(rank, size, std::move(options)), r_(std::move(r)) {}
  ~NcclCommunicator() override { JoinAsyncThreads(); }
  Backend backend() const override { return Backend::kNccl; }

 protected:
  absl::Status Execute(const Call& call) override {
    FinishFn finish;
    if (absl::Status enqueued = Enqueue(call, &finish); !enqueued.ok()) {
      ReleaseAfterFailure(finish);
      return enqueued;
    }
    const absl::Status status = PollUntil(*r_, absl::Now() + options().timeout, Where(call),
                                          [this] { return cudaStreamQuery(r_->stream); });
    if (finish) finish(status.ok());
    return status;
  }
  CommHandle ExecuteAsync(const Call& call) override {
    FinishFn finish;
    absl::Status status = Enqueue(call, &finish);
    cudaEvent_t event = nullptr;
    if (status.ok()) status = CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    if (status.ok()) status = CudaStatus(cudaEventRecord(event, r_->stream), "cudaEventRecord");
    if (!status.ok()) {
      if (event != nullptr) cudaEventDestroy(event);
      ReleaseAfterFailure(finish);
      auto failed = std::make_shared<PromiseState>();
      failed->Finish(status);
      return CommHandle(failed);
    }
    return CommHandle(std::make_shared<NcclEventState>(r_, event, options().timeout, Where(call),
                                                       std::move(finish)));
  }

 private:
  std::string Where(const Call& call) const {
    return absl::StrCat("rank ", rank(), ": ", Describe(call));
  }
  // A staged call that failed to enqueue: its block may still be in the stream's hands, so it
  // is retired (freed with the communicator), not reused.
  static void ReleaseAfterFailure(const FinishFn& finish) {
    if (finish) finish(false);
  }
  absl::Status CheckHeaders(const Call& call);
  // Checks the headers (collectives), then puts the call on the stream; for host buffers, its
  // staging too, and sets *finish to what must run once the stream has passed it.
  absl::Status Enqueue(const Call& call, FinishFn* finish);
  absl::Status EnqueueStaged(const Call& call, FinishFn* finish);
  absl::Status Post(const Call& call);  // the NCCL calls themselves, on device buffers
  // NCCL's transfers are opaque: count what its ring algorithms send (Traffic's comment).
  void CountNcclTraffic(const Call& call) {
    const int64_t p = size(), bytes = call.count * DTypeSize(call.dtype);
    if (call.kind != CallKind::kSend && call.kind != CallKind::kRecv && p > 1) {
      CountSent(4 * sizeof(int64_t) * (p - 1), /*header=*/true);  // CheckHeaders' all-gather
    }
    switch (call.kind) {
      case CallKind::kAllReduce: CountSent(2 * (p - 1) * bytes / p, false); break;
      case CallKind::kReduceScatter:
      case CallKind::kAllGather: CountSent((p - 1) * bytes, false); break;  // count = one block
      case CallKind::kBroadcast: if (rank() == call.peer) CountSent(bytes, false); break;
      case CallKind::kAllToAll: CountSent((p - 1) * bytes, false); break;  // count = one block
      case CallKind::kSend: CountSent(bytes, false); break;
      default: break;
    }
  }

  std::shared_ptr<NcclResources> r_;
};

// All-gathers {kind, op, dtype, count} (and the sequence) over NCCL and compares on the host,
// so every rank returns the same InvalidArgument before any data moves.
absl::Status NcclCommunicator::CheckHeaders(const Call& call) {
  const int64_t mine[4] = {static_cast<int64_t>(call.kind) * 1000 + static_cast<int64_t>(call.op),
                           static_cast<int64_t>(call.dtype), call.count,
                           call.sequence * 1000 + (call.kind == CallKind::kBroadcast ? call.peer : 0)};
  std::vector<int64_t> all(4 * size());
  int64_t* d_mine = r_->headers + 4 * size();
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(d_mine, mine, sizeof(mine), cudaMemcpyHostToDevice, r_->stream));
  TS_NCCL_OK(ncclAllGather(d_mine, r_->headers, 4, ncclInt64, r_->comm, r_->stream));
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(all.data(), r_->headers, all.size() * sizeof(int64_t),
                                          cudaMemcpyDeviceToHost, r_->stream));
  TS_RETURN_IF_ERROR(PollUntil(*r_, absl::Now() + options().timeout, Where(call),
                               [this] { return cudaStreamQuery(r_->stream); }));
  for (int peer = 0; peer < size(); ++peer) {
    if (std::memcmp(&all[4 * peer], mine, sizeof(mine)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(call), ": rank ", peer, " called a different collective (count ",
          all[4 * peer + 2], ", dtype code ", all[4 * peer + 1],
          "); every rank must make the same calls in the same order with the same count, "
          "dtype, op and root. No data was exchanged"));
    }
  }
  return absl::OkStatus();
}

absl::Status NcclCommunicator::Enqueue(const Call& call, FinishFn* finish) {
  if (r_->comm == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(Where(call), ": the NCCL communicator was aborted"));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(r_->device));
  if (call.kind != CallKind::kSend && call.kind != CallKind::kRecv) {
    TS_RETURN_IF_ERROR(CheckHeaders(call));
  }
  TS_RETURN_IF_ERROR(options().host_buffers ? EnqueueStaged(call, finish) : Post(call));
  CountNcclTraffic(call);
  return absl::OkStatus();
}

// Host input -> pinned block (a memcpy here) -> device block (on the stream); the collective
// between device blocks; device -> pinned (on the stream). *finish copies pinned -> host output.
// In-place calls (all-reduce, broadcast) use one region; the others an input and an output one.
absl::Status NcclCommunicator::EnqueueStaged(const Call& call, FinishFn* finish) {
  const auto [in_bytes, out_bytes] = CallBytes(call, size());
  if (in_bytes == 0 && out_bytes == 0) {  // nothing moves: NCCL still sees device pointers
    Call empty = call;
    empty.input = r_->headers;
    empty.output = r_->headers;
    return Post(empty);
  }
  const bool in_place = call.kind == CallKind::kAllReduce || call.kind == CallKind::kBroadcast;
  const size_t out_offset = in_place ? 0 : in_bytes;
  TS_ASSIGN_OR_RETURN(StagingBlock block,
                      r_->TakeStaging(std::max(in_bytes, out_offset + out_bytes)));
  Call staged = call;
  staged.input = in_bytes > 0 ? block.device : nullptr;
  staged.output = out_bytes > 0 ? block.device + out_offset : nullptr;
  absl::Status status;
  if (in_bytes > 0) {
    std::memcpy(block.host, call.input, in_bytes);
    status = CudaStatus(cudaMemcpyAsync(block.device, block.host, in_bytes, cudaMemcpyHostToDevice,
                                        r_->stream), "cudaMemcpyAsync (staging in)");
  }
  if (status.ok()) status = Post(staged);
  if (status.ok() && out_bytes > 0) {
    status = CudaStatus(cudaMemcpyAsync(block.host + out_offset, block.device + out_offset,
                                        out_bytes, cudaMemcpyDeviceToHost, r_->stream),
                        "cudaMemcpyAsync (staging out)");
  }
  std::shared_ptr<NcclResources> r = r_;
  *finish = [r, block, out = static_cast<char*>(call.output), out_offset,
             out_bytes = out_bytes](bool ok) {
    if (ok && out_bytes > 0) std::memcpy(out, block.host + out_offset, out_bytes);
    r->GiveStaging(block, /*reusable=*/ok);
  };
  return status;  // on failure the caller runs (*finish)(false)
}

absl::Status NcclCommunicator::Post(const Call& call) {
  const ncclDataType_t type = NcclType(call.dtype);
  const size_t n = static_cast<size_t>(call.count);
  switch (call.kind) {
    case CallKind::kAllReduce:
      TS_NCCL_OK(ncclAllReduce(call.input, call.output, n, type, NcclOp(call.op), r_->comm, r_->stream));
      break;
    case CallKind::kReduceScatter:
      TS_NCCL_OK(ncclReduceScatter(call.input, call.output, n, type, NcclOp(call.op), r_->comm, r_->stream));
      break;
    case CallKind::kAllGather:
      TS_NCCL_OK(ncclAllGather(call.input, call.output, n, type, r_->comm, r_->stream));
      break;
    case CallKind::kBroadcast:
      TS_NCCL_OK(ncclBroadcast(call.input, call.output, n, type, call.peer, r_->comm, r_->stream));
      break;
    case CallKind::kSend:
      TS_NCCL_OK(ncclSend(call.input, n, type, call.peer, r_->comm, r_->stream));
      break;
    case CallKind::kRecv:
      TS_NCCL_OK(ncclRecv(call.output, n, type, call.peer, r_->comm, r_->stream));
      break;
    case CallKind::kAllToAll: {  // grouped point-to-point, as NCCL's documentation shows
      const size_t block = n * DTypeSize(call.dtype);
      const char* in = static_cast<const char*>(call.input);
      char* out = static_cast<char*>(call.output);
      TS_NCCL_OK(ncclGroupStart());
      ncclResult_t posted = ncclSuccess;
      for (int peer = 0; peer < size() && posted == ncclSuccess; ++peer) {
        if (peer == rank()) continue;
        posted = ncclSend(in + peer * block, n, type, peer, r_->comm, r_->stream);
        if (posted == ncclSuccess) {
          posted = ncclRecv(out + peer * block, n, type, peer, r_->comm, r_->stream);
        }
      }
      const ncclResult_t ended = ncclGroupEnd();  // always closes the group it opened
      TS_NCCL_OK(posted);
      TS_NCCL_OK(ended);
      TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out + rank() * block, in + rank() * block, block,
                                              cudaMemcpyDeviceToDevice, r_->stream));
      break;
    }
    case CallKind::kBarrier:
      break;  // the header all-gather above already waited for every rank
  }
  return absl::OkStatus();
}

}  // namespace

bool NcclCompiled() { return true; }

int NcclDeviceCount() { return base::CudaDeviceCount(); }

absl::StatusOr<std::string> NcclUniqueId() {
  ncclUniqueId id;
  TS_NCCL_OK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof(id.internal));
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(int rank, int size,
                                                                     const std::string& unique_id,
                                                                     int device,
                                                                     const CommOptions& options) {
  ncclUniqueId id;
  if (unique_id.size() != sizeof(id.internal)) {
    return absl::InvalidArgumentError(absl::StrCat("NCCL unique id has ", unique_id.size(),
                                                   " bytes, expected ", sizeof(id.internal)));
  }
  std::memcpy(id.internal, unique_id.data(), sizeof(id.internal));
  auto r = std::make_shared<NcclResources>();
  r->device = device;
  TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
  TS_CUDA_RETURN_IF_ERROR(
      cudaMalloc(reinterpret_cast<void**>(&r->headers), 4 * (size + 1) * sizeof(int64_t)));
  TS_NCCL_OK(ncclCommInitRank(&r->comm, size, id, rank));
  std::unique_ptr<Communicator> comm =
      std::make_unique<NcclCommunicator>(rank, size, options, std::move(r));
  return comm;
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicatorOverMpi(
    const CommOptions& options) {
  TS_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> mpi, CreateMpiCommunicator(options));
  const int devices = NcclDeviceCount();
  if (devices == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", mpi->rank(), ": the nccl back-end needs a GPU and none is visible; use mpi"));
  }
  std::vector<int64_t> id(sizeof(ncclUniqueId) / sizeof(int64_t), 0);
  if (mpi->rank() == 0) {
    TS_ASSIGN_OR_RETURN(const std::string fresh, NcclUniqueId());
    std::memcpy(id.data(), fresh.data(), fresh.size());
  }
  TS_RETURN_IF_ERROR(mpi->Broadcast(id, 0));  // rank 0's id to everyone, over MPI
  return CreateNcclCommunicator(mpi->rank(), mpi->size(),
                                std::string(reinterpret_cast<const char*>(id.data()),
                                            sizeof(ncclUniqueId)),
                                mpi->rank() % devices, options);
}

}  // namespace tessera::comm::internal
