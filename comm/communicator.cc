// Communicator front end: argument checks, collective numbering, failure latching, handles.
#include "tessera/comm/communicator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator_impl.h"

namespace tessera::comm {
namespace {

using internal::Call;
using internal::CallKind;

absl::Status CheckView(const Call& call, absl::string_view what, const void* data, int64_t count,
                       DType dtype) {
  const std::string name = internal::Describe(call);
  if (!IsValidDType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", what, " has an unknown dtype ", static_cast<int>(dtype),
                     "; use float32, bfloat16 or int64"));
  }
  if (count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", what, " has a negative element count ", count));
  }
  if (count > 0 && data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", what, " is a null pointer with ", count, " elements"));
  }
  return absl::OkStatus();
}

// The names CollectiveEvent uses (costmodel/collective_cost.h's, for the collectives).
absl::string_view EventName(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce: return "all_reduce";
    case CallKind::kReduceScatter: return "reduce_scatter";
    case CallKind::kAllGather: return "all_gather";
    case CallKind::kBroadcast: return "broadcast";
    case CallKind::kSend: return "send";
    case CallKind::kRecv: return "recv";
    case CallKind::kAllToAll: return "all_to_all";
    case CallKind::kBarrier: return "barrier";
  }
  return "call";
}

// The observed call this thread is executing: CountSent adds its payload here. Back-ends count
// every send on the thread that executes the call.
struct ObservedCall {
  const Communicator* comm;
  int64_t payload_bytes;
};
thread_local ObservedCall* observed_call = nullptr;

}  // namespace

// ---- CommHandle ----

CommHandle::CommHandle() = default;
CommHandle::CommHandle(std::shared_ptr<internal::HandleState> state) : state_(std::move(state)) {}
CommHandle::CommHandle(CommHandle&&) noexcept = default;
CommHandle& CommHandle::operator=(CommHandle&& other) noexcept {
  if (this != &other) {
    if (state_ != nullptr) state_->Wait().IgnoreError();
    state_ = std::move(other.state_);
  }
  return *this;
}
CommHandle::~CommHandle() {
  if (state_ != nullptr) state_->Wait().IgnoreError();
}
absl::Status CommHandle::Wait() { return state_ == nullptr ? absl::OkStatus() : state_->Wait(); }
bool CommHandle::Done() const { return state_ == nullptr || state_->Done(); }

// ---- Communicator ----

Communicator::Communicator(int rank, int size, CommOptions options)
    : rank_(rank), size_(size), options_(std::move(options)) {}

Communicator::~Communicator() = default;

void Communicator::JoinAsyncThreads() {
  std::unique_ptr<internal::AsyncExecutor> executor;
  {
    absl::MutexLock lock(&mutex_);
    executor = std::move(executor_);
  }
  executor.reset();  // drains its queue and joins, outside our lock
}

absl::Status Communicator::Prepare(Call& call) {
  const bool collective = call.kind != CallKind::kSend && call.kind != CallKind::kRecv;
  if (!IsValidReduceOp(call.op)) {
    return absl::InvalidArgumentError(absl::StrCat(internal::CallName(call.kind),
                                                   ": unknown reduce op ",
                                                   static_cast<int>(call.op)));
  }
  if (call.kind == CallKind::kBroadcast && (call.peer < 0 || call.peer >= size_)) {
    return absl::InvalidArgumentError(absl::StrCat("broadcast: root ", call.peer,
                                                   " is not a rank of this communicator (0..",
                                                   size_ - 1, ")"));
  }
  if (!collective) {
    if (call.peer < 0 || call.peer >= size_ || call.peer == rank_) {
      return absl::InvalidArgumentError(absl::StrCat(
          internal::CallName(call.kind), ": peer ", call.peer, " is not another rank (this is rank ",
          rank_, " of ", size_, ")"));
    }
    if (call.tag < 0 || call.tag > kMaxTag) {
      return absl::InvalidArgumentError(absl::StrCat(internal::CallName(call.kind), ": tag ",
                                                     call.tag, " is outside [0, ", kMaxTag, "]"));
    }
  }
  absl::MutexLock lock(&mutex_);
  if (!failure_.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank_, ": the communicator is unusable after an earlier failure (",
        failure_.message(), "); start over with a new communicator"));
  }
  if (collective) call.sequence = next_sequence_++;
  return absl::OkStatus();
}

Traffic Communicator::traffic() const {
  return {.payload_bytes = payload_sent_.load(std::memory_order_relaxed),
          .header_bytes = header_sent_.load(std::memory_order_relaxed),
          .messages = messages_sent_.load(std::memory_order_relaxed),
          .busy_s = 1e-9 * static_cast<double>(busy_ns_.load(std::memory_order_relaxed))};
}

void Communicator::CountBusy(double seconds) {
  busy_ns_.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
}

void Communicator::CountSent(int64_t bytes, bool header) {
  (header ? header_sent_ : payload_sent_).fetch_add(bytes, std::memory_order_relaxed);
  messages_sent_.fetch_add(1, std::memory_order_relaxed);
  if (!header && observed_call != nullptr && observed_call->comm == this) {
    observed_call->payload_bytes += bytes;
  }
}

absl::Status Communicator::ExecuteObserved(const Call& call) {
  CollectiveObserver* observer = observer_.load(std::memory_order_acquire);
  if (observer == nullptr) return Execute(call);
  ObservedCall mine{this, 0};
  ObservedCall* outer = std::exchange(observed_call, &mine);
  CollectiveEvent event{.collective = EventName(call.kind), .sequence = call.sequence,
                        .start = std::chrono::steady_clock::now()};
  const absl::Status status = Execute(call);
  event.end = std::chrono::steady_clock::now();
  observed_call = outer;
  event.payload_bytes = mine.payload_bytes;
  event.ok = status.ok();
  observer->OnCollective(event);
  return status;
}

void Communicator::RecordFailure(const absl::Status& status) {
  // Disagreeing headers are seen by every rank alike, so the ranks stay in step; anything else
  // (a timeout, a dead peer, a transport error) leaves them out of step for good.
  if (status.ok() || absl::IsInvalidArgument(status)) return;
  absl::MutexLock lock(&mutex_);
  if (failure_.ok()) failure_ = status;
}

absl::Status Communicator::Run(Call call) {
  absl::Status status = Prepare(call);
  if (!status.ok()) return status;
  status = ExecuteObserved(call);
  RecordFailure(status);
  return status;
}

CommHandle Communicator::Start(Call call) {
  // Numbering and queueing happen together, so the queue holds collectives in sequence order.
  absl::MutexLock issue(&issue_mutex_);
  absl::Status status = Prepare(call);
  if (!status.ok()) {
    auto failed = std::make_shared<internal::PromiseState>();
    failed->Finish(status);
    return CommHandle(std::move(failed));
  }
  return ExecuteAsync(call);
}

CommHandle Communicator::ExecuteAsync(const Call& call) {
  absl::MutexLock lock(&mutex_);
  if (executor_ == nullptr) {
    executor_ = std::make_unique<internal::AsyncExecutor>(options_.async_threads);
  }
  return CommHandle(executor_->Submit([this, call] {
    absl::Status status = ExecuteObserved(call);
    RecordFailure(status);
    return status;
  }));
}

namespace {

Call MakeCall(CallKind kind, ReduceOp op, DType dtype, const void* input, void* output,
              int64_t count, int peer = -1, int tag = 0) {
  Call call;
  call.kind = kind;
  call.op = op;
  call.dtype = dtype;
  call.input = input;
  call.output = output;
  call.count = count;
  call.peer = peer;
  call.tag = tag;
  return call;
}

absl::StatusOr<Call> AllReduceCall(DataView data, ReduceOp op) {
  Call call = MakeCall(CallKind::kAllReduce, op, data.dtype(), data.data(), data.data(),
                       data.count());
  TS_RETURN_IF_ERROR(CheckView(call, "data", data.data(), data.count(), data.dtype()));
  return call;
}

absl::StatusOr<Call> ReduceScatterCall(ConstDataView input, DataView output, ReduceOp op,
                                       int size) {
  Call call = MakeCall(CallKind::kReduceScatter, op, output.dtype(), input.data(), output.data(),
                       output.count());
  TS_RETURN_IF_ERROR(CheckView(call, "input", input.data(), input.count(), input.dtype()));
  TS_RETURN_IF_ERROR(CheckView(call, "output", output.data(), output.count(), output.dtype()));
  if (input.dtype() != output.dtype() || input.count() != size * output.count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        internal::Describe(call), ": input must hold ", size, " blocks of the output (",
        size * output.count(), " ", DTypeName(output.dtype()), "), it has ", input.count(), " ",
        DTypeName(input.dtype())));
  }
  return call;
}

absl::StatusOr<Call> AllGatherCall(ConstDataView input, DataView output, int size) {
  Call call = MakeCall(CallKind::kAllGather, ReduceOp::kSum, input.dtype(), input.data(),
                       output.data(), input.count());
  TS_RETURN_IF_ERROR(CheckView(call, "input", input.data(), input.count(), input.dtype()));
  TS_RETURN_IF_ERROR(CheckView(call, "output", output.data(), output.count(), output.dtype()));
  if (input.dtype() != output.dtype() || output.count() != size * input.count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        internal::Describe(call), ": output must hold ", size, " blocks of the input (",
        size * input.count(), " ", DTypeName(input.dtype()), "), it has ", output.count(), " ",
        DTypeName(output.dtype())));
  }
  return call;
}

absl::StatusOr<Call> AllToAllCall(ConstDataView input, DataView output, int size) {
  Call call = MakeCall(CallKind::kAllToAll, ReduceOp::kSum, input.dtype(), input.data(),
                       output.data(), input.count() / size);
  TS_RETURN_IF_ERROR(CheckView(call, "input", input.data(), input.count(), input.dtype()));
  TS_RETURN_IF_ERROR(CheckView(call, "output", output.data(), output.count(), output.dtype()));
  if (input.dtype() != output.dtype() || input.count() != output.count() ||
      input.count() % size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        internal::Describe(call), ": input and output must hold ", size,
        " equal blocks of one dtype; input has ", input.count(), " ", DTypeName(input.dtype()),
        ", output ", output.count(), " ", DTypeName(output.dtype())));
  }
  const int64_t bytes = input.count() * DTypeSize(input.dtype());
  const char* in = static_cast<const char*>(input.data());
  const char* out = static_cast<const char*>(output.data());
  if (bytes > 0 && in < out + bytes && out < in + bytes) {
    return absl::InvalidArgumentError(absl::StrCat(internal::Describe(call),
                                                   ": input and output overlap; use two buffers"));
  }
  return call;
}

absl::StatusOr<Call> BroadcastCall(DataView data, int root) {
  Call call = MakeCall(CallKind::kBroadcast, ReduceOp::kSum, data.dtype(), data.data(),
                       data.data(), data.count(), root);
  TS_RETURN_IF_ERROR(CheckView(call, "data", data.data(), data.count(), data.dtype()));
  return call;
}

absl::StatusOr<Call> SendCall(ConstDataView data, int peer, int tag) {
  Call call = MakeCall(CallKind::kSend, ReduceOp::kSum, data.dtype(), data.data(), nullptr,
                       data.count(), peer, tag);
  TS_RETURN_IF_ERROR(CheckView(call, "data", data.data(), data.count(), data.dtype()));
  return call;
}

absl::StatusOr<Call> RecvCall(DataView data, int peer, int tag) {
  Call call = MakeCall(CallKind::kRecv, ReduceOp::kSum, data.dtype(), nullptr, data.data(),
                       data.count(), peer, tag);
  TS_RETURN_IF_ERROR(CheckView(call, "data", data.data(), data.count(), data.dtype()));
  return call;
}

CommHandle FailedHandle(absl::Status status) {
  auto failed = std::make_shared<internal::PromiseState>();
  failed->Finish(std::move(status));
  return CommHandle(std::move(failed));
}

}  // namespace

#define TS_COMM_RUN(call_expr)                     \
  do {                                             \
    absl::StatusOr<Call> ts_call_ = (call_expr);   \
    if (!ts_call_.ok()) return ts_call_.status();  \
    return Run(*std::move(ts_call_));              \
  } while (0)

#define TS_COMM_START(call_expr)                                  \
  do {                                                            \
    absl::StatusOr<Call> ts_call_ = (call_expr);                  \
    if (!ts_call_.ok()) return FailedHandle(ts_call_.status());   \
    return Start(*std::move(ts_call_));                           \
  } while (0)

absl::Status Communicator::AllReduce(DataView data, ReduceOp op) {
  TS_COMM_RUN(AllReduceCall(data, op));
}
absl::Status Communicator::ReduceScatter(ConstDataView input, DataView output, ReduceOp op) {
  TS_COMM_RUN(ReduceScatterCall(input, output, op, size_));
}
absl::Status Communicator::AllGather(ConstDataView input, DataView output) {
  TS_COMM_RUN(AllGatherCall(input, output, size_));
}
absl::Status Communicator::Broadcast(DataView data, int root) {
  TS_COMM_RUN(BroadcastCall(data, root));
}
absl::Status Communicator::AllToAll(ConstDataView input, DataView output) {
  TS_COMM_RUN(AllToAllCall(input, output, size_));
}
absl::Status Communicator::Send(ConstDataView data, int peer, int tag) {
  TS_COMM_RUN(SendCall(data, peer, tag));
}
absl::Status Communicator::Recv(DataView data, int peer, int tag) {
  TS_COMM_RUN(RecvCall(data, peer, tag));
}
absl::Status Communicator::Barrier() {
  TS_COMM_RUN(absl::StatusOr<Call>(MakeCall(CallKind::kBarrier, ReduceOp::kSum, DType::kInt64,
                                            nullptr, nullptr, 0)));
}

CommHandle Communicator::AllReduceAsync(DataView data, ReduceOp op) {
  TS_COMM_START(AllReduceCall(data, op));
}
CommHandle Communicator::ReduceScatterAsync(ConstDataView input, DataView output, ReduceOp op) {
  TS_COMM_START(ReduceScatterCall(input, output, op, size_));
}
CommHandle Communicator::AllGatherAsync(ConstDataView input, DataView output) {
  TS_COMM_START(AllGatherCall(input, output, size_));
}
CommHandle Communicator::BroadcastAsync(DataView data, int root) {
  TS_COMM_START(BroadcastCall(data, root));
}
CommHandle Communicator::AllToAllAsync(ConstDataView input, DataView output) {
  TS_COMM_START(AllToAllCall(input, output, size_));
}
CommHandle Communicator::SendAsync(ConstDataView data, int peer, int tag) {
  TS_COMM_START(SendCall(data, peer, tag));
}
CommHandle Communicator::RecvAsync(DataView data, int peer, int tag) {
  TS_COMM_START(RecvCall(data, peer, tag));
}

}  // namespace tessera::comm
