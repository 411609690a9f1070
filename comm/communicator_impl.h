// Back-end side of the Communicator (internal): the validated call a back-end executes, the
// state behind a CommHandle, and the thread pool that runs *Async calls.
//
//   class MyCommunicator : public Communicator {
//     absl::Status Execute(const internal::Call& call) override {
//       switch (call.kind) { case internal::CallKind::kAllReduce: ...; }
//     }
//   };
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm::internal {

enum class CallKind {
  kAllReduce, kReduceScatter, kAllGather, kBroadcast, kSend, kRecv, kAllToAll, kBarrier
};

struct Call {
  CallKind kind = CallKind::kBarrier;
  ReduceOp op = ReduceOp::kSum;
  DType dtype = DType::kFloat32;
  const void* input = nullptr;  // AllReduce and Broadcast: == output
  void* output = nullptr;
  // Elements per rank's block: AllReduce, Broadcast, Send, Recv: the whole buffer;
  // ReduceScatter: output (input has size * count); AllGather: input (output has size * count);
  // AllToAll: one block (input and output have size * count).
  int64_t count = 0;
  int peer = -1;  // Broadcast: root; Send/Recv: the other rank
  int tag = 0;    // Send/Recv
  int64_t sequence = -1;  // collectives: numbered in call order, equal on every rank
};

// "all-reduce", "reduce-scatter", ...
absl::string_view CallName(CallKind kind);
// "all-reduce #3 (1000 float32, sum)" / "send to rank 2 (tag 7, 10 int64)".
std::string Describe(const Call& call);

// What a CommHandle waits on.
class HandleState {
 public:
  virtual ~HandleState() = default;
  virtual absl::Status Wait() = 0;
  virtual bool Done() const = 0;
};

// A handle completed by whoever runs the operation.
class PromiseState : public HandleState {
 public:
  void Finish(absl::Status status);
  absl::Status Wait() override;
  bool Done() const override;

 private:
  mutable absl::Mutex mutex_;
  bool done_ = false;
  absl::Status status_;
};

// Runs submitted tasks on up to `threads` threads (started on first use), in submission order.
class AsyncExecutor {
 public:
  explicit AsyncExecutor(int threads);
  ~AsyncExecutor();  // runs what is queued, then joins
  std::shared_ptr<HandleState> Submit(std::function<absl::Status()> task);

 private:
  struct Task {
    std::function<absl::Status()> run;
    std::shared_ptr<PromiseState> promise;
  };
  void Loop();

  const int max_threads_;
  absl::Mutex mutex_;
  std::deque<Task> queue_;
  int idle_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera::comm::internal
