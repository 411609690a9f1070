// The NCCL back-end (built with CUDA): a Communicator wrapping an ncclComm_t, collectives on
// its own CUDA stream, buffers in device memory. Every wait polls the stream and NCCL's async
// error with a deadline; on timeout the NCCL communicator is aborted (ncclCommAbort) so no
// kernel keeps waiting on a dead peer. NCCL cannot say which peer failed, so errors name the
// call and this rank.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/backends_impl.h"
#include "tessera/comm/communicator_impl.h"

namespace tessera::comm::internal {
namespace {

absl::Status CudaStatus(cudaError_t code, absl::string_view call) {
  if (code == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed: ", cudaGetErrorString(code)));
}

absl::Status NcclStatus(ncclResult_t code, absl::string_view call) {
  if (code == ncclSuccess || code == ncclInProgress) return absl::OkStatus();
  const std::string message = absl::StrCat(call, " failed: ", ncclGetErrorString(code));
  if (code == ncclInvalidArgument || code == ncclInvalidUsage) {
    return absl::InvalidArgumentError(message);
  }
  return absl::UnavailableError(message);  // system or remote errors: a peer or the link
}

#define TS_CUDA_OK(call) TS_RETURN_IF_ERROR(CudaStatus((call), #call))
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

// The NCCL communicator, its stream and a small device buffer for headers (RAII).
struct NcclResources {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int64_t* headers = nullptr;  // device: (size + 1) headers of 4 int64
  bool aborted = false;

  ~NcclResources() {
    cudaSetDevice(device);
    if (comm != nullptr) {
      if (aborted) {
        ncclCommAbort(comm);
      } else {
        ncclCommDestroy(comm);
      }
    }
    if (headers != nullptr) cudaFree(headers);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

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
                 std::string what)
      : r_(std::move(r)), event_(event), deadline_(absl::Now() + timeout), what_(std::move(what)) {}
  ~NcclEventState() override { cudaEventDestroy(event_); }
  absl::Status Wait() override {
    absl::MutexLock lock(&mutex_);
    if (!waited_) {
      cudaSetDevice(r_->device);
      status_ = PollUntil(*r_, deadline_, what_, [this] { return cudaEventQuery(event_); });
      waited_ = true;
    }
    return status_;
  }
  bool Done() const override { return cudaEventQuery(event_) != cudaErrorNotReady; }

 private:
  std::shared_ptr<NcclResources> r_;
  cudaEvent_t event_;
  absl::Time deadline_;
  std::string what_;
  absl::Mutex mutex_;
  bool waited_ = false;
  absl::Status status_;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(int rank, int size, CommOptions options, std::shared_ptr<NcclResources> r)
      : Communicator(rank, size, std::move(options)), r_(std::move(r)) {}
  ~NcclCommunicator() override { JoinAsyncThreads(); }
  absl::string_view backend() const override { return "nccl"; }

 protected:
  absl::Status Execute(const Call& call) override {
    TS_RETURN_IF_ERROR(Enqueue(call));
    return PollUntil(*r_, absl::Now() + options().timeout, Where(call),
                     [this] { return cudaStreamQuery(r_->stream); });
  }
  CommHandle ExecuteAsync(const Call& call) override {
    absl::Status status = Enqueue(call);
    cudaEvent_t event = nullptr;
    if (status.ok()) status = CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    if (status.ok()) status = CudaStatus(cudaEventRecord(event, r_->stream), "cudaEventRecord");
    if (!status.ok()) {
      auto failed = std::make_shared<PromiseState>();
      failed->Finish(status);
      return CommHandle(failed);
    }
    return CommHandle(std::make_shared<NcclEventState>(r_, event, options().timeout, Where(call)));
  }

 private:
  std::string Where(const Call& call) const {
    return absl::StrCat("rank ", rank(), ": ", Describe(call));
  }
  absl::Status CheckHeaders(const Call& call);
  absl::Status Enqueue(const Call& call);
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
  TS_CUDA_OK(cudaMemcpyAsync(d_mine, mine, sizeof(mine), cudaMemcpyHostToDevice, r_->stream));
  TS_NCCL_OK(ncclAllGather(d_mine, r_->headers, 4, ncclInt64, r_->comm, r_->stream));
  TS_CUDA_OK(cudaMemcpyAsync(all.data(), r_->headers, all.size() * sizeof(int64_t),
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

absl::Status NcclCommunicator::Enqueue(const Call& call) {
  if (r_->comm == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(Where(call), ": the NCCL communicator was aborted"));
  }
  TS_CUDA_OK(cudaSetDevice(r_->device));
  const ncclDataType_t type = NcclType(call.dtype);
  const size_t n = static_cast<size_t>(call.count);
  if (call.kind != CallKind::kSend && call.kind != CallKind::kRecv) {
    TS_RETURN_IF_ERROR(CheckHeaders(call));
  }
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
      TS_CUDA_OK(cudaMemcpyAsync(out + rank() * block, in + rank() * block, block,
                                 cudaMemcpyDeviceToDevice, r_->stream));
      break;
    }
    case CallKind::kBarrier:
      break;  // the header all-gather above already waited for every rank
  }
  CountNcclTraffic(call);
  return absl::OkStatus();
}

}  // namespace

bool NcclCompiled() { return true; }

int NcclDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

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
  TS_CUDA_OK(cudaSetDevice(device));
  TS_CUDA_OK(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
  TS_CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&r->headers), 4 * (size + 1) * sizeof(int64_t)));
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
