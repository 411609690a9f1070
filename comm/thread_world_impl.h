// Shared-memory transport for ranks that are threads of one process (internal).
//
//   ThreadWorld world(4);
//   std::unique_ptr<Transport> t = world.Endpoint(rank);   // one per rank's thread
//   ...
//   world.Depart(rank);   // the rank's function returned: peers waiting on it fail at once
//
// Messages are zero-copy rendezvous: a send and a receive meet in the receiver's mailbox and
// whichever is posted second copies the bytes straight from the sender's buffer into the
// receiver's, outside the lock. One mutex guards the mailboxes; waits use absl::Mutex
// conditions with deadlines.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "tessera/comm/transport_impl.h"

namespace tessera::comm::internal {

class ThreadWorld {
 public:
  explicit ThreadWorld(int size);
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const { return size_; }
  // The transport of `rank`; the world must outlive it.
  std::unique_ptr<Transport> Endpoint(int rank);
  void Depart(int rank);

  // One posted send or receive (shared by the request and the mailbox).
  struct Op {
    bool is_send = false;
    int src = 0;
    int dst = 0;
    const void* send_data = nullptr;
    void* recv_data = nullptr;
    int64_t bytes = 0;
    bool matched = false;  // met its partner; the copy may still be running
    bool done = false;
    absl::Status status;
  };
  using Key = std::tuple<int, int, int64_t>;  // (source, lane, tag)

  std::shared_ptr<Op> Post(bool is_send, int self, int peer, Lane lane, int64_t tag, void* data,
                           int64_t bytes);
  absl::Status Wait(Op& op, absl::Time deadline);
  bool Test(Op& op);
  void Cancel(const std::shared_ptr<Op>& op, Lane lane, int64_t tag);

 private:
  struct Mailbox {
    absl::flat_hash_map<Key, std::deque<std::shared_ptr<Op>>> sends;  // arrived, not received
    absl::flat_hash_map<Key, std::deque<std::shared_ptr<Op>>> recvs;  // posted, not arrived
  };
  static void Copy(Op& send, Op& recv);
  bool Finished(const Op& op) const;

  const int size_;
  mutable absl::Mutex mutex_;
  std::vector<Mailbox> mailboxes_;  // by destination rank
  std::vector<bool> departed_;
  int first_departed_ = -1;  // the root cause, usually, when ranks fail one after another
};

}  // namespace tessera::comm::internal
