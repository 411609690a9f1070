// Communicator::traffic(): the bytes each rank puts on the wire, per collective, against what
// a ring sends (every segment of an all-reduce travels 2(P-1) times around the ring; an
// all-gather or reduce-scatter block P-1 times; an all-to-all sends P-1 blocks per rank).
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"

namespace tessera::comm {
namespace {

// Runs `fn` on P thread ranks and returns the payload bytes all ranks sent during it.
template <typename Fn>
int64_t TotalPayload(int ranks, Fn fn) {
  std::atomic<int64_t> total{0};
  const absl::Status status = RunOnThreads(ranks, [&](Communicator& comm) -> absl::Status {
    const Traffic before = comm.traffic();
    TS_RETURN_IF_ERROR(fn(comm));
    total += comm.traffic().payload_bytes - before.payload_bytes;
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  return total.load();
}

TEST(TrafficTest, AllReduceSendsEachSegmentTwiceAroundTheRing) {
  for (int p : {2, 3, 4}) {
    for (int64_t n : {1, 7, 1000, 300001}) {  // divisible by P or not, smaller than P
      const int64_t bytes = TotalPayload(p, [n](Communicator& comm) {
        std::vector<float> v(n, 1.f);
        return comm.AllReduce(v, ReduceOp::kSum);
      });
      EXPECT_EQ(bytes, 2 * (p - 1) * n * 4) << "P=" << p << " n=" << n;
    }
  }
}

TEST(TrafficTest, GatherAndScatterSendPMinusOneBlocksPerRank) {
  const int p = 4;
  const int64_t n = 12345;
  const int64_t gather = TotalPayload(p, [&](Communicator& comm) {
    std::vector<float> mine(n, 1.f), all(p * n);
    return comm.AllGather(mine, all);
  });
  EXPECT_EQ(gather, p * (p - 1) * n * 4);
  const int64_t scatter = TotalPayload(p, [&](Communicator& comm) {
    std::vector<float> all(p * n, 1.f), mine(n);
    return comm.ReduceScatter(all, mine, ReduceOp::kSum);
  });
  EXPECT_EQ(scatter, p * (p - 1) * n * 4);
}

TEST(TrafficTest, AllToAllSendsEveryBlockButItsOwnOnce) {
  for (int p : {1, 2, 3, 4}) {
    const int64_t block = 4321;
    const int64_t bytes = TotalPayload(p, [&](Communicator& comm) {
      std::vector<float> in(p * block, 1.f), out(p * block);
      return comm.AllToAll(in, out);
    });
    EXPECT_EQ(bytes, p * (p - 1) * block * 4) << "P=" << p;
  }
}

TEST(TrafficTest, HeadersAndMessagesAreCountedApart) {
  const absl::Status status = RunOnThreads(2, [](Communicator& comm) -> absl::Status {
    const Traffic before = comm.traffic();
    std::vector<int64_t> v(10, comm.rank());
    if (comm.rank() == 0) TS_RETURN_IF_ERROR(comm.Send(v, 1, 3));
    if (comm.rank() == 1) TS_RETURN_IF_ERROR(comm.Recv(v, 0, 3));
    const Traffic after = comm.traffic();
    const int64_t payload = after.payload_bytes - before.payload_bytes;
    if (payload != (comm.rank() == 0 ? 80 : 0)) {
      return absl::InternalError(absl::StrCat("rank ", comm.rank(), " payload ", payload));
    }
    if (comm.rank() == 0 && after.header_bytes == before.header_bytes) {
      return absl::InternalError("the message's header was not counted");
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace tessera::comm
