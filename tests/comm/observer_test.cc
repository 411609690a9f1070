// Communicator::set_observer: every collective and message reported once it ends, with the
// payload this rank sent for it (the same count as traffic(), attributed per call even when
// several asynchronous collectives run at once), its times and name; and AllGatherText.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/gather_text.h"
#include "tessera/comm/launch.h"

namespace tessera::comm {
namespace {

class Recorder : public CollectiveObserver {
 public:
  void OnCollective(const CollectiveEvent& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }
  std::vector<CollectiveEvent> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::vector<CollectiveEvent> events_;
};

TEST(ObserverTest, ReportsEachCallWithItsOwnPayload) {
  constexpr int kRanks = 3;
  const int64_t n = 30001;  // not divisible by 3: the ranks send different segments
  std::mutex mu;
  std::map<int, std::vector<CollectiveEvent>> seen;
  std::map<int, int64_t> traffic;
  const absl::Status status = RunOnThreads(kRanks, [&](Communicator& comm) -> absl::Status {
    Recorder recorder;
    std::vector<float> a(n, 1.f), b(2 * n, 1.f), mine(7, 1.f), all(7 * kRanks);
    TS_RETURN_IF_ERROR(comm.AllReduce(a, ReduceOp::kSum));  // before: not observed
    const Traffic before = comm.traffic();
    comm.set_observer(&recorder);
    CommHandle h1 = comm.AllReduceAsync(a, ReduceOp::kSum);  // two in flight at once
    CommHandle h2 = comm.AllReduceAsync(b, ReduceOp::kSum);
    TS_RETURN_IF_ERROR(h1.Wait());
    TS_RETURN_IF_ERROR(h2.Wait());
    TS_RETURN_IF_ERROR(comm.AllGather(mine, all));
    if (comm.rank() == 0) TS_RETURN_IF_ERROR(comm.Send(mine, 1, 5));
    if (comm.rank() == 1) TS_RETURN_IF_ERROR(comm.Recv(mine, 0, 5));
    comm.set_observer(nullptr);
    TS_RETURN_IF_ERROR(comm.Barrier());  // after: not observed
    std::lock_guard<std::mutex> lock(mu);
    seen[comm.rank()] = recorder.events();
    traffic[comm.rank()] = comm.traffic().payload_bytes - before.payload_bytes;
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  int64_t all_reduce_a = 0, all_reduce_b = 0;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<CollectiveEvent>& events = seen[r];
    std::sort(events.begin(), events.end(), [](const CollectiveEvent& x, const CollectiveEvent& y) {
      return x.start < y.start;
    });
    ASSERT_EQ(events.size(), r <= 1 ? 4u : 3u) << "rank " << r;
    std::map<int64_t, const CollectiveEvent*> by_sequence;
    int64_t sum = 0;
    for (const CollectiveEvent& e : events) {
      EXPECT_TRUE(e.ok);
      EXPECT_LE(e.start, e.end);
      sum += e.payload_bytes;
      if (e.sequence >= 0) by_sequence[e.sequence] = &e;
    }
    EXPECT_EQ(sum, traffic[r]) << "rank " << r << ": the calls' payloads add up to traffic()";
    ASSERT_EQ(by_sequence.size(), 3u) << "rank " << r;
    auto it = by_sequence.begin();
    const CollectiveEvent& ea = *(it++)->second;
    const CollectiveEvent& eb = *(it++)->second;
    const CollectiveEvent& eg = *it->second;
    EXPECT_EQ(ea.collective, "all_reduce");
    EXPECT_EQ(eb.collective, "all_reduce");
    EXPECT_EQ(eg.collective, "all_gather");
    EXPECT_EQ(eg.payload_bytes, (kRanks - 1) * 7 * 4) << "rank " << r;
    all_reduce_a += ea.payload_bytes;
    all_reduce_b += eb.payload_bytes;
    if (r <= 1) {
      const CollectiveEvent& m = events.back();  // issued last
      EXPECT_EQ(m.collective, r == 0 ? "send" : "recv");
      EXPECT_EQ(m.sequence, -1);
      EXPECT_EQ(m.payload_bytes, r == 0 ? 7 * 4 : 0);
    }
  }
  // Every segment of an all-reduce travels 2(P-1) times: the ranks' parts add up to that.
  EXPECT_EQ(all_reduce_a, 2 * (kRanks - 1) * n * 4);
  EXPECT_EQ(all_reduce_b, 2 * (kRanks - 1) * 2 * n * 4);
}

TEST(GatherTextTest, EveryRankGetsEveryText) {
  constexpr int kRanks = 3;
  const absl::Status status = RunOnThreads(kRanks, [&](Communicator& comm) -> absl::Status {
    // Rank 1's text is empty; rank 2's holds a zero byte and is the longest.
    const std::string texts[kRanks] = {"rank zero", "", std::string("two\0bytes and more", 18)};
    TS_ASSIGN_OR_RETURN(std::vector<std::string> all, AllGatherText(comm, texts[comm.rank()]));
    for (int r = 0; r < kRanks; ++r) {
      if (all[r] != texts[r]) {
        return absl::InternalError(absl::StrCat("rank ", comm.rank(), " got '", all[r],
                                                "' for rank ", r));
      }
    }
    TS_ASSIGN_OR_RETURN(std::vector<std::string> empty, AllGatherText(comm, ""));
    if (empty != std::vector<std::string>(kRanks)) return absl::InternalError("empty texts");
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace tessera::comm
