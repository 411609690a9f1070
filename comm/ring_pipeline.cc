// The pipelined ring engine: one loop for every ring collective (schedules in ring_plan.cc).
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/reduce_impl.h"
#include "tessera/comm/ring_impl.h"

namespace tessera::comm::internal {
namespace {

class Pipeline {
 public:
  Pipeline(const RingContext& ctx, const RingPlan& plan, const RingBuffers& buffers)
      : ctx_(ctx), plan_(plan), b_(buffers), esize_(DTypeSize(ctx.call.dtype)),
        size_(ctx.transport.size()), rank_(ctx.transport.rank()),
        prev_((rank_ + size_ - 1) % size_), next_((rank_ + 1) % size_),
        depth_(std::max(1, ctx.depth)) {}

  absl::Status Run();

 private:
  const char* In(Range r) const { return b_.input + r.offset * esize_; }
  char* Work(Range r) const { return b_.work + r.offset * esize_; }
  char* Out(Range r) const { return b_.output + (r.offset - b_.output_shift) * esize_; }
  char* Slot(size_t item) const { return temp_.get() + (item % depth_) * slot_bytes_; }

  void Send(const char* data, int64_t count);
  absl::Status PostReceive(size_t item);
  absl::Status Process(size_t item);

  const RingContext& ctx_;
  const RingPlan& plan_;
  const RingBuffers& b_;
  const int64_t esize_;
  const int size_, rank_, prev_, next_;
  const int depth_;
  int64_t slot_bytes_ = 0;
  std::unique_ptr<char[]> temp_;  // depth_ receive buffers for chunks to be reduced
  std::vector<std::unique_ptr<TransportRequest>> sends_;
  absl::flat_hash_map<const char*, size_t> send_of_address_;  // last send reading an address
  std::vector<std::unique_ptr<TransportRequest>> receives_;
};

void Pipeline::Send(const char* data, int64_t count) {
  send_of_address_[data] = sends_.size();
  sends_.push_back(ctx_.transport.Isend(next_, ctx_.lane, ctx_.tag, data, count * esize_));
  ctx_.Sent(count * esize_, /*header=*/false);
}

absl::Status Pipeline::PostReceive(size_t item) {
  const RingItem& it = plan_.items[item];
  char* dst = it.reduce ? Slot(item) : Out(it.range);
  if (!it.reduce) {
    // An in-place arrival may land where an earlier send still reads (all-reduce: the chunk I
    // sent at reduce-scatter step s comes back complete at all-gather step s): finish that first.
    auto found = send_of_address_.find(dst);
    if (found != send_of_address_.end() && sends_[found->second] != nullptr) {
      TS_RETURN_IF_ERROR(WaitFor(ctx_, *sends_[found->second], next_, /*sending=*/true));
      sends_[found->second].reset();
    }
  }
  receives_[item] = ctx_.transport.Irecv(prev_, ctx_.lane, ctx_.tag, dst, it.range.count * esize_);
  return absl::OkStatus();
}

absl::Status Pipeline::Process(size_t item) {
  const RingItem& it = plan_.items[item];
  const char* result = Out(it.range);
  if (it.reduce) {
    // Combine the arrived partial sum with my own values of the chunk: into work while it is
    // still partial, into the output once every rank has contributed.
    char* dst = it.final ? Out(it.range) : Work(it.range);
    ReduceInto(dst, Slot(item), In(it.range), it.range.count, ctx_.call.dtype, ctx_.call.op);
    if (it.final && ctx_.call.op == ReduceOp::kAverage) {
      DivideBy(dst, it.range.count, ctx_.call.dtype, size_);
    }
    result = dst;
  }
  if (it.forward) Send(result, it.range.count);
  return absl::OkStatus();
}

absl::Status Pipeline::Run() {
  const std::vector<RingItem>& items = plan_.items;
  int64_t largest = 0;
  for (const RingItem& it : items) {
    if (it.reduce) largest = std::max(largest, it.range.count);
  }
  if (largest > 0) {
    slot_bytes_ = largest * esize_;
    temp_.reset(new char[depth_ * slot_bytes_]);
  }
  receives_.resize(items.size());
  // Step 0: my own chunks go to next at once.
  for (Range r : plan_.initial_sends) {
    Send(plan_.initial_from_output ? Out(r) : In(r), r.count);
  }
  for (size_t i = 0; i < items.size() && i < static_cast<size_t>(depth_); ++i) {
    TS_RETURN_IF_ERROR(PostReceive(i));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    // Chunk i arrives while chunks i+1 .. i+depth-1 are already posted (and arriving).
    TS_RETURN_IF_ERROR(WaitFor(ctx_, *receives_[i], prev_, /*sending=*/false));
    receives_[i].reset();
    if (!items[i].reduce && i + depth_ < items.size()) {
      TS_RETURN_IF_ERROR(PostReceive(i + depth_));  // in place: post before processing
      TS_RETURN_IF_ERROR(Process(i));
    } else {
      TS_RETURN_IF_ERROR(Process(i));  // frees receive slot i % depth
      if (i + depth_ < items.size()) TS_RETURN_IF_ERROR(PostReceive(i + depth_));
    }
  }
  for (auto& send : sends_) {
    if (send != nullptr) TS_RETURN_IF_ERROR(WaitFor(ctx_, *send, next_, /*sending=*/true));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRingPipeline(const RingContext& ctx, const RingPlan& plan,
                             const RingBuffers& buffers) {
  if (plan.items.empty() && plan.initial_sends.empty()) return absl::OkStatus();
  Pipeline pipeline(ctx, plan, buffers);
  return pipeline.Run();
}

absl::Status WaitFor(const RingContext& ctx, TransportRequest& request, int peer, bool sending) {
  absl::Status status = request.Wait(absl::Now() + ctx.timeout);
  if (status.ok()) return status;
  const std::string where =
      absl::StrCat("rank ", ctx.transport.rank(), ": ", Describe(ctx.call), ": ");
  if (absl::IsDeadlineExceeded(status)) {
    return absl::DeadlineExceededError(absl::StrCat(
        where, sending ? "rank " : "no data from rank ", peer,
        sending ? " did not take its data" : "", " within ", absl::FormatDuration(ctx.timeout),
        ": rank ", peer, " died, stopped answering, or has not made this call (every rank must "
        "make the same calls in the same order; CommOptions::timeout sets the limit)"));
  }
  if (absl::IsUnavailable(status)) {
    return absl::UnavailableError(absl::StrCat(where, "waiting for rank ", peer,
                                               ", a rank of the job is gone: ", status.message()));
  }
  return absl::Status(status.code(), absl::StrCat(where, "with rank ", peer, ": ",
                                                  status.message()));
}

}  // namespace tessera::comm::internal
