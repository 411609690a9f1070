// Shared-memory rendezvous transport for ranks that are threads of one process.
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"
#include "tessera/base/text_format.h"
#include "tessera/comm/thread_world_impl.h"

namespace tessera::comm::internal {
namespace {

class ThreadRequest : public TransportRequest {
 public:
  ThreadRequest(ThreadWorld* world, std::shared_ptr<ThreadWorld::Op> op, Lane lane, int64_t tag)
      : world_(world), op_(std::move(op)), lane_(lane), tag_(tag) {}
  ~ThreadRequest() override { world_->Cancel(op_, lane_, tag_); }
  absl::Status Wait(absl::Time deadline) override { return world_->Wait(*op_, deadline); }
  bool Test() override { return world_->Test(*op_); }

 private:
  ThreadWorld* world_;
  std::shared_ptr<ThreadWorld::Op> op_;
  Lane lane_;
  int64_t tag_;
};

class ThreadTransport : public Transport {
 public:
  ThreadTransport(ThreadWorld* world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  int64_t max_tag() const override { return int64_t{1} << 62; }
  std::unique_ptr<TransportRequest> Isend(int peer, Lane lane, int64_t tag, const void* data,
                                          int64_t bytes) override {
    auto op = world_->Post(true, rank_, peer, lane, tag, const_cast<void*>(data), bytes);
    return std::make_unique<ThreadRequest>(world_, std::move(op), lane, tag);
  }
  std::unique_ptr<TransportRequest> Irecv(int peer, Lane lane, int64_t tag, void* data,
                                          int64_t bytes) override {
    auto op = world_->Post(false, rank_, peer, lane, tag, data, bytes);
    return std::make_unique<ThreadRequest>(world_, std::move(op), lane, tag);
  }

 private:
  ThreadWorld* world_;
  int rank_;
};

}  // namespace

ThreadWorld::ThreadWorld(int size) : size_(size), mailboxes_(size), departed_(size, false) {}

std::unique_ptr<Transport> ThreadWorld::Endpoint(int rank) {
  TS_CHECK(rank >= 0 && rank < size_) << rank;
  return std::make_unique<ThreadTransport>(this, rank);
}

void ThreadWorld::Depart(int rank) {
  absl::MutexLock lock(&mutex_);
  departed_[rank] = true;
  if (first_departed_ < 0) first_departed_ = rank;
}

void ThreadWorld::Copy(Op& send, Op& recv) {
  const int64_t bytes = std::min(send.bytes, recv.bytes);
  if (bytes > 0) std::memcpy(recv.recv_data, send.send_data, bytes);
  if (send.bytes != recv.bytes) {
    recv.status = absl::InvalidArgumentError(
        absl::StrCat("rank ", send.src, " sent a message of ", base::HumanBytesExact(send.bytes),
                     ", rank ", recv.dst, " expected ", base::HumanBytesExact(recv.bytes)));
  }
}

std::shared_ptr<ThreadWorld::Op> ThreadWorld::Post(bool is_send, int self, int peer, Lane lane,
                                                   int64_t tag, void* data, int64_t bytes) {
  auto op = std::make_shared<Op>();
  op->is_send = is_send;
  op->src = is_send ? self : peer;
  op->dst = is_send ? peer : self;
  if (is_send) {
    op->send_data = data;
  } else {
    op->recv_data = data;
  }
  op->bytes = bytes;
  const Key key{op->src, static_cast<int>(lane), tag};
  std::shared_ptr<Op> partner;
  {
    absl::MutexLock lock(&mutex_);
    Mailbox& box = mailboxes_[op->dst];
    auto& waiting = is_send ? box.recvs : box.sends;  // the other side's queue
    auto it = waiting.find(key);
    if (it == waiting.end()) {
      (is_send ? box.sends : box.recvs)[key].push_back(op);
      return op;
    }
    partner = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) waiting.erase(it);
    partner->matched = op->matched = true;
  }
  // Posted second: this thread copies, outside the lock.
  Copy(is_send ? *op : *partner, is_send ? *partner : *op);
  absl::MutexLock lock(&mutex_);
  partner->done = op->done = true;
  return op;
}

bool ThreadWorld::Finished(const Op& op) const {
  const int peer = op.is_send ? op.dst : op.src;
  return op.done || (!op.matched && departed_[peer]);
}

absl::Status ThreadWorld::Wait(Op& op, absl::Time deadline) {
  absl::MutexLock lock(&mutex_);
  struct Arg {
    const ThreadWorld* world;
    const Op* op;
  } arg{this, &op};
  const bool finished = mutex_.AwaitWithDeadline(
      absl::Condition(+[](Arg* a) { return a->world->Finished(*a->op); }, &arg), deadline);
  if (op.done) return op.status;
  const int peer = op.is_send ? op.dst : op.src;
  if (finished) {
    return absl::UnavailableError(absl::StrCat(
        "rank ", peer, " has exited",
        first_departed_ != peer ? absl::StrCat(" (rank ", first_departed_, " exited first)") : ""));
  }
  return absl::DeadlineExceededError(absl::StrCat("no ", op.is_send ? "receive" : "message",
                                                  " from rank ", peer));
}

bool ThreadWorld::Test(Op& op) {
  absl::MutexLock lock(&mutex_);
  return Finished(op);
}

void ThreadWorld::Cancel(const std::shared_ptr<Op>& op, Lane lane, int64_t tag) {
  absl::MutexLock lock(&mutex_);
  if (op->done) return;
  if (op->matched) {
    // The partner's thread is copying; it finishes soon and never blocks on us.
    mutex_.Await(absl::Condition(&op->done));
    return;
  }
  Mailbox& box = mailboxes_[op->dst];
  auto& queues = op->is_send ? box.sends : box.recvs;
  auto it = queues.find(Key{op->src, static_cast<int>(lane), tag});
  if (it != queues.end()) {
    auto& q = it->second;
    q.erase(std::remove(q.begin(), q.end(), op), q.end());
    if (q.empty()) queues.erase(it);
  }
  op->done = true;
  op->status = absl::CancelledError("cancelled");
}

}  // namespace tessera::comm::internal
