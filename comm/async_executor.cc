// The thread pool behind the *Async calls, and the promise a CommHandle waits on.
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/comm/communicator_impl.h"

namespace tessera::comm::internal {

void PromiseState::Finish(absl::Status status) {
  absl::MutexLock lock(&mutex_);
  status_ = std::move(status);
  done_ = true;
}

absl::Status PromiseState::Wait() {
  absl::MutexLock lock(&mutex_);
  mutex_.Await(absl::Condition(&done_));
  return status_;
}

bool PromiseState::Done() const {
  absl::MutexLock lock(&mutex_);
  return done_;
}

AsyncExecutor::AsyncExecutor(int threads) : max_threads_(threads < 1 ? 1 : threads) {}

AsyncExecutor::~AsyncExecutor() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<HandleState> AsyncExecutor::Submit(std::function<absl::Status()> task) {
  auto promise = std::make_shared<PromiseState>();
  absl::MutexLock lock(&mutex_);
  queue_.push_back(Task{std::move(task), promise});
  // A new thread only when the idle ones cannot take every queued task.
  if (static_cast<int>(queue_.size()) > idle_ &&
      static_cast<int>(threads_.size()) < max_threads_) {
    threads_.emplace_back([this] { Loop(); });
  }
  return promise;
}

void AsyncExecutor::Loop() {
  absl::MutexLock lock(&mutex_);
  while (true) {
    ++idle_;
    mutex_.Await(absl::Condition(
        +[](AsyncExecutor* self) { return self->stopping_ || !self->queue_.empty(); }, this));
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    mutex_.Unlock();
    absl::Status status = task.run();
    task.promise->Finish(std::move(status));
    mutex_.Lock();
  }
}

absl::string_view CallName(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce: return "all-reduce";
    case CallKind::kReduceScatter: return "reduce-scatter";
    case CallKind::kAllGather: return "all-gather";
    case CallKind::kBroadcast: return "broadcast";
    case CallKind::kSend: return "send";
    case CallKind::kRecv: return "recv";
    case CallKind::kAllToAll: return "all-to-all";
    case CallKind::kBarrier: return "barrier";
  }
  return "call";
}

std::string Describe(const Call& call) {
  switch (call.kind) {
    case CallKind::kSend:
    case CallKind::kRecv:
      return absl::StrCat(CallName(call.kind), call.kind == CallKind::kSend ? " to" : " from",
                          " rank ", call.peer, " (tag ", call.tag, ", ", call.count, " ",
                          DTypeName(call.dtype), ")");
    case CallKind::kBarrier:
      return absl::StrCat("barrier #", call.sequence);
    case CallKind::kBroadcast:
      return absl::StrCat("broadcast #", call.sequence, " (", call.count, " ",
                          DTypeName(call.dtype), " from root ", call.peer, ")");
    case CallKind::kAllToAll:
      return absl::StrCat("all-to-all #", call.sequence, " (", call.count, " ",
                          DTypeName(call.dtype), " per block)");
    case CallKind::kAllGather:
      return absl::StrCat("all-gather #", call.sequence, " (", call.count, " ",
                          DTypeName(call.dtype), " per rank)");
    case CallKind::kReduceScatter:
      return absl::StrCat("reduce-scatter #", call.sequence, " (", call.count, " ",
                          DTypeName(call.dtype), " per rank, ", ReduceOpName(call.op), ")");
    case CallKind::kAllReduce:
      return absl::StrCat("all-reduce #", call.sequence, " (", call.count, " ",
                          DTypeName(call.dtype), ", ", ReduceOpName(call.op), ")");
  }
  return "call";
}

}  // namespace tessera::comm::internal
