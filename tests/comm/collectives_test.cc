// Every collective, dtype and op against a serial reference, P = 1..8 thread ranks, sizes
// 0, 1, P - 1, P + 1, a prime, and a large odd size; with the automatic chunk size and with
// tiny chunks that do not divide the segments.
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "comm_test_util.h"

namespace tessera::comm {
namespace {

using testing::CheckAllGather;
using testing::CheckAllReduce;
using testing::CheckBroadcast;
using testing::CheckEverything;
using testing::CheckReduceScatter;
using testing::Compare;

class CollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesTest, EveryCollectiveAndDTypeMatchesSerialReference) {
  const int p = GetParam();
  const absl::Status status = RunOnThreads(p, [](Communicator& comm) -> absl::Status {
    TS_RETURN_IF_ERROR(CheckEverything<float>(comm));
    TS_RETURN_IF_ERROR(CheckEverything<BFloat16>(comm));
    return CheckEverything<int64_t>(comm);
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST_P(CollectivesTest, TinyChunksThatDoNotDivideSegments) {
  CommOptions options;
  options.chunk_bytes = 40;  // 10 float32, 20 bfloat16 or 5 int64 per chunk
  options.pipeline_depth = 3;
  const absl::Status status = RunOnThreads(
      GetParam(),
      [](Communicator& comm) -> absl::Status {
        for (int64_t n : {int64_t{1}, int64_t{13}, int64_t{211}, int64_t{1009}}) {
          for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMax}) {
            TS_RETURN_IF_ERROR(CheckAllReduce<float>(comm, n, op));
            TS_RETURN_IF_ERROR(CheckAllReduce<BFloat16>(comm, n, op));
            TS_RETURN_IF_ERROR(CheckAllReduce<int64_t>(comm, n, op));
          }
          TS_RETURN_IF_ERROR(CheckReduceScatter<int64_t>(comm, n, ReduceOp::kSum));
          TS_RETURN_IF_ERROR(CheckAllGather<BFloat16>(comm, n));
          TS_RETURN_IF_ERROR(CheckBroadcast<float>(comm, n, comm.size() - 1));
        }
        return absl::OkStatus();
      },
      options);
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectivesTest, ::testing::Range(1, 9),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("P", info.param);
                         });

TEST(CollectivesTest, DepthOneStillPipelinesCorrectly) {
  CommOptions options;
  options.chunk_bytes = 64;
  options.pipeline_depth = 1;
  const absl::Status status = RunOnThreads(
      3,
      [](Communicator& comm) -> absl::Status {
        TS_RETURN_IF_ERROR(CheckAllReduce<float>(comm, 1001, ReduceOp::kSum));
        return CheckAllGather<int64_t>(comm, 77);
      },
      options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CollectivesTest, SendRecvCarriesDataAndTags) {
  const absl::Status status = RunOnThreads(3, [](Communicator& comm) -> absl::Status {
    const int r = comm.rank(), next = (r + 1) % 3, prev = (r + 2) % 3;
    // Two messages with different tags, received in the opposite order.
    std::vector<int64_t> a = testing::TestData<int64_t>(r, 50, 1);
    std::vector<float> b = testing::TestData<float>(r, 7, 2);
    CommHandle sa = comm.SendAsync(a, next, /*tag=*/1);
    CommHandle sb = comm.SendAsync(b, next, /*tag=*/2);
    std::vector<float> got_b(7);
    std::vector<int64_t> got_a(50);
    TS_RETURN_IF_ERROR(comm.Recv(got_b, prev, 2));
    TS_RETURN_IF_ERROR(comm.Recv(got_a, prev, 1));
    TS_RETURN_IF_ERROR(sa.Wait());
    TS_RETURN_IF_ERROR(sb.Wait());
    TS_RETURN_IF_ERROR(Compare("tag 1", got_a, testing::TestData<int64_t>(prev, 50, 1)));
    return Compare("tag 2", got_b, testing::TestData<float>(prev, 7, 2));
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CollectivesTest, BarrierOrdersSideEffects) {
  std::atomic<int> arrived{0};
  const absl::Status status = RunOnThreads(5, [&](Communicator& comm) -> absl::Status {
    arrived.fetch_add(1);
    TS_RETURN_IF_ERROR(comm.Barrier());
    if (arrived.load() != 5) {
      return absl::InternalError(absl::StrCat("rank ", comm.rank(), " left the barrier with ",
                                              arrived.load(), " of 5 arrived"));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CollectivesTest, AllGatherInPlaceFromOwnBlock) {
  const absl::Status status = RunOnThreads(4, [](Communicator& comm) -> absl::Status {
    std::vector<int64_t> all(4 * 9, -1);
    const std::vector<int64_t> mine = testing::TestData<int64_t>(comm.rank(), 9);
    std::copy(mine.begin(), mine.end(), all.begin() + comm.rank() * 9);
    TS_RETURN_IF_ERROR(comm.AllGather(
        ConstDataView(all.data() + comm.rank() * 9, 9, DType::kInt64), all));
    std::vector<int64_t> want;
    for (int r = 0; r < 4; ++r) {
      auto t = testing::TestData<int64_t>(r, 9);
      want.insert(want.end(), t.begin(), t.end());
    }
    return Compare("in-place all-gather", all, want);
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace tessera::comm
