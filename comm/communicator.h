// Communicator: collectives and point-to-point messages among the ranks of a job.
//
//   // Four workers as threads of this process (the default back-end):
//   absl::Status status = tessera::comm::RunOnThreads(4, [](tessera::comm::Communicator& comm) {
//     std::vector<float> grads(1 << 20, 1.0f * comm.rank());
//     TS_RETURN_IF_ERROR(comm.AllReduce(grads, tessera::comm::ReduceOp::kAverage));  // 1.5 each
//     tessera::comm::CommHandle h = comm.AllGatherAsync(mine, all);   // runs on a comm thread
//     ...                                                              // overlap work here
//     return h.Wait();
//   });
//   // The same function as MPI ranks (`mpiexec -n 4 prog`): see comm/launch.h.
//
// Rules, as for MPI and NCCL: every rank calls the same collectives in the same order with the
// same element count, dtype and op (root for Broadcast). Each collective sends a small header
// {op, dtype, count, sequence} to every peer first, so ranks that disagree all get
// InvalidArgument naming the ranks, never mixed data. Every blocking wait ends after
// CommOptions::timeout: a peer that died or stopped answering gives DeadlineExceeded or
// Unavailable naming that peer and the collective. After such an error the communicator is
// unusable (later calls return FailedPrecondition); the process should report and exit.
// Buffers must stay valid until a call returns or its handle's Wait() returns. Memory is host
// memory for the thread and MPI back-ends and device memory for NCCL (host memory with
// CommOptions::host_buffers).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "tessera/comm/backend.h"
#include "tessera/comm/dtype.h"

namespace tessera::comm {

struct CommOptions {
  Backend backend = Backend::kThread;
  absl::Duration timeout = absl::Seconds(60);   // bound on every blocking wait
  int64_t chunk_bytes = 0;   // ring pipeline chunk; 0 chooses from the message size
  int pipeline_depth = 4;    // chunk receives posted ahead of the one being reduced (>= 1)
  int async_threads = 2;     // *Async collectives that can be in flight at once (>= 1)
  // NCCL only: the buffers passed in are host memory. Each call copies its input through a
  // pinned host block to the rank's GPU, runs the collective there and copies the result back
  // (on the stream, so *Async calls still overlap the caller's work; the result is in place
  // when Wait() returns). What the hybrid runtime uses, whose kernels run on the CPU. The
  // thread and MPI back-ends always take host memory and ignore it.
  bool host_buffers = false;
};

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };

// Typed memory a collective writes (and reads). Built from a span or vector of float, BFloat16
// or int64_t, or from (pointer, element count, dtype).
class DataView {
 public:
  DataView(void* data, int64_t count, DType dtype) : data_(data), count_(count), dtype_(dtype) {}
  template <typename T>
  DataView(absl::Span<T> s) : DataView(s.data(), static_cast<int64_t>(s.size()), DTypeOf<T>::value) {}
  template <typename T>
  DataView(std::vector<T>& v) : DataView(v.data(), static_cast<int64_t>(v.size()), DTypeOf<T>::value) {}
  void* data() const { return data_; }
  int64_t count() const { return count_; }
  DType dtype() const { return dtype_; }

 private:
  void* data_;
  int64_t count_;
  DType dtype_;
};

// Typed memory a collective only reads.
class ConstDataView {
 public:
  ConstDataView(const void* data, int64_t count, DType dtype)
      : data_(data), count_(count), dtype_(dtype) {}
  ConstDataView(DataView v) : ConstDataView(v.data(), v.count(), v.dtype()) {}
  template <typename T>
  ConstDataView(absl::Span<T> s)
      : ConstDataView(s.data(), static_cast<int64_t>(s.size()), DTypeOf<std::remove_const_t<T>>::value) {}
  template <typename T>
  ConstDataView(const std::vector<T>& v)
      : ConstDataView(v.data(), static_cast<int64_t>(v.size()), DTypeOf<T>::value) {}
  const void* data() const { return data_; }
  int64_t count() const { return count_; }
  DType dtype() const { return dtype_; }

 private:
  const void* data_;
  int64_t count_;
  DType dtype_;
};

// Bytes this rank has put on the wire since the communicator was made: the data of collectives
// and messages (`payload_bytes`), and the small agreement headers sent before each of them
// (`header_bytes`). Ring back-ends count every send as it is posted; NCCL, whose transfers are
// opaque, counts what its ring algorithms send (2(P-1)/P of an all-reduce's bytes, (P-1)/P of
// an all-gather's or reduce-scatter's output, the message for Send).
struct Traffic {
  int64_t payload_bytes = 0;
  int64_t header_bytes = 0;
  int64_t messages = 0;  // point-to-point sends and collectives' transport sends
  // Seconds spent executing collectives and messages (summed over the communicator's threads:
  // two in flight at once count twice). Ring back-ends only; NCCL reports 0.
  double busy_s = 0;
};

// One collective or message this communicator ran, as its observer is told (set_observer).
struct CollectiveEvent {
  // "all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all", "barrier",
  // "send", "recv" (static storage).
  absl::string_view collective;
  int64_t sequence = -1;     // collectives: their number, equal on every rank; -1 for messages
  int64_t payload_bytes = 0;  // what this rank sent for it, as Traffic::payload_bytes counts
  std::chrono::steady_clock::time_point start, end;  // of its execution on this rank
  bool ok = true;
};

// Told of every collective and message once it has ended (blocking calls: before they
// return; *Async calls: on the communication thread, before the handle is done), so it is
// called from several threads at once. It must return quickly and not call the communicator.
// Ring back-ends (thread, MPI) and NCCL's blocking calls; NCCL's *Async calls, whose transfers
// run on a CUDA stream, are not observed.
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  virtual void OnCollective(const CollectiveEvent& event) = 0;
};

namespace internal {
class HandleState;
class AsyncExecutor;
struct Call;
}  // namespace internal

// The result of an *Async call. Wait() blocks until the operation has ended and returns its
// status (every later Wait() returns the same). Destroying a handle that was not waited on
// waits, so the buffers it uses are never touched after it is gone.
class CommHandle {
 public:
  CommHandle();  // an operation that already succeeded
  explicit CommHandle(std::shared_ptr<internal::HandleState> state);  // for back-ends
  CommHandle(CommHandle&&) noexcept;
  CommHandle& operator=(CommHandle&&) noexcept;
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;
  ~CommHandle();

  absl::Status Wait();
  bool Done() const;

 private:
  std::shared_ptr<internal::HandleState> state_;
};

class Communicator {
 public:
  virtual ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const CommOptions& options() const { return options_; }
  virtual Backend backend() const = 0;

  // In place: every rank ends with op over all ranks' `data`.
  absl::Status AllReduce(DataView data, ReduceOp op);
  // input holds size() blocks of output.count() elements; rank r gets op over block r.
  absl::Status ReduceScatter(ConstDataView input, DataView output, ReduceOp op);
  // output holds size() blocks of input.count() elements; block r is rank r's input.
  absl::Status AllGather(ConstDataView input, DataView output);
  // Every rank ends with `root`'s data.
  absl::Status Broadcast(DataView data, int root);
  // input and output hold size() blocks of input.count() / size() elements: block s of the
  // input goes to rank s, block s of the output comes from rank s (this rank's own block is
  // copied). Sends (size() - 1) blocks. input and output must not overlap.
  absl::Status AllToAll(ConstDataView input, DataView output);
  // Point-to-point; tag in [0, kMaxTag]. Recv must name the same count and dtype as the Send.
  absl::Status Send(ConstDataView data, int peer, int tag);
  absl::Status Recv(DataView data, int peer, int tag);
  absl::Status Barrier();

  // Thread-safe snapshot; subtract two snapshots to measure a step.
  Traffic traffic() const;
  // Every call that executes from now on is reported to `observer` (null: none, the default;
  // then nothing is timed). Not owned: it must outlive the calls in flight when it is replaced.
  void set_observer(CollectiveObserver* observer) {
    observer_.store(observer, std::memory_order_release);
  }

  // The same operations on a communication thread (at most options().async_threads at once;
  // later ones queue). The sequence of collectives is fixed when the call is made.
  CommHandle AllReduceAsync(DataView data, ReduceOp op);
  CommHandle ReduceScatterAsync(ConstDataView input, DataView output, ReduceOp op);
  CommHandle AllGatherAsync(ConstDataView input, DataView output);
  CommHandle BroadcastAsync(DataView data, int root);
  CommHandle AllToAllAsync(ConstDataView input, DataView output);
  CommHandle SendAsync(ConstDataView data, int peer, int tag);
  CommHandle RecvAsync(DataView data, int peer, int tag);

  static constexpr int kMaxTag = 32767;

 protected:
  Communicator(int rank, int size, CommOptions options);
  // Back-end hooks (comm/communicator_impl.h): the call is validated and numbered.
  virtual absl::Status Execute(const internal::Call& call) = 0;
  // Default: Execute on one of the communicator's async threads.
  virtual CommHandle ExecuteAsync(const internal::Call& call);
  // Runs what the async threads have queued and joins them. Every back-end's destructor calls
  // it first, so no thread calls Execute on a half-destroyed object.
  void JoinAsyncThreads();
  // Back-ends report each send (thread-safe).
  void CountSent(int64_t bytes, bool header);
  void CountBusy(double seconds);

 private:
  absl::Status Prepare(internal::Call& call);
  absl::Status Run(internal::Call call);
  // Execute, and the observer told when one is set.
  absl::Status ExecuteObserved(const internal::Call& call);
  CommHandle Start(internal::Call call);
  void RecordFailure(const absl::Status& status);

  const int rank_;
  const int size_;
  const CommOptions options_;
  absl::Mutex issue_mutex_;  // held while an async call is numbered and queued
  absl::Mutex mutex_;
  int64_t next_sequence_ = 0;
  absl::Status failure_;
  std::unique_ptr<internal::AsyncExecutor> executor_;
  std::atomic<int64_t> payload_sent_{0}, header_sent_{0}, messages_sent_{0};
  std::atomic<int64_t> busy_ns_{0};
  std::atomic<CollectiveObserver*> observer_{nullptr};
};

}  // namespace tessera::comm
