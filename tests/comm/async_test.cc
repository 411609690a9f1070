// Asynchronous collectives: handles, several in flight, ordering by call.
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "comm_test_util.h"

namespace tessera::comm {
namespace {

using testing::Compare;
using testing::Reference;
using testing::TestData;

TEST(AsyncTest, SeveralAllReducesInFlightGiveSerialResults) {
  const absl::Status status = RunOnThreads(4, [](Communicator& comm) -> absl::Status {
    std::vector<std::vector<float>> bufs;
    for (int k = 0; k < 5; ++k) bufs.push_back(TestData<float>(comm.rank(), 1000 + 37 * k, k));
    std::vector<CommHandle> handles;
    for (auto& b : bufs) handles.push_back(comm.AllReduceAsync(b, ReduceOp::kSum));
    for (int k = 4; k >= 0; --k) TS_RETURN_IF_ERROR(handles[k].Wait());  // any order
    for (int k = 0; k < 5; ++k) {
      std::vector<float> want(bufs[k].size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = Reference<float>(4, i, ReduceOp::kSum, k);
      TS_RETURN_IF_ERROR(Compare(absl::StrCat("buffer ", k), bufs[k], want));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(AsyncTest, AllToAllBesideAnAllReduceKeepsBothResults) {
  const absl::Status status = RunOnThreads(3, [](Communicator& comm) -> absl::Status {
    const int64_t block = 211;
    const std::vector<float> in = TestData<float>(comm.rank(), 3 * block);
    std::vector<float> out(3 * block), sum = TestData<float>(comm.rank(), 500, 1);
    CommHandle exchange = comm.AllToAllAsync(in, out);
    CommHandle reduce = comm.AllReduceAsync(sum, ReduceOp::kSum);
    TS_RETURN_IF_ERROR(reduce.Wait());
    TS_RETURN_IF_ERROR(exchange.Wait());
    std::vector<float> want_out, want_sum(500);
    for (int s = 0; s < 3; ++s) {
      const std::vector<float> theirs = TestData<float>(s, 3 * block);
      want_out.insert(want_out.end(), theirs.begin() + comm.rank() * block,
                      theirs.begin() + (comm.rank() + 1) * block);
    }
    for (int64_t i = 0; i < 500; ++i) want_sum[i] = Reference<float>(3, i, ReduceOp::kSum, 1);
    TS_RETURN_IF_ERROR(Compare("all-to-all", out, want_out));
    return Compare("all-reduce", sum, want_sum);
  });
  EXPECT_TRUE(status.ok()) << status;
}

// Rank 0 has a receive in flight that rank 1 satisfies only after an all-reduce that rank 0
// issues second: it completes only if both of rank 0's operations progress at once.
absl::Status OverlapScenario(Communicator& comm) {
  std::vector<int64_t> data = TestData<int64_t>(comm.rank(), 513);
  std::vector<int64_t> note(3, 0);
  if (comm.rank() == 0) {
    CommHandle recv = comm.RecvAsync(note, /*peer=*/1, /*tag=*/9);
    CommHandle reduce = comm.AllReduceAsync(data, ReduceOp::kMax);
    TS_RETURN_IF_ERROR(reduce.Wait());
    TS_RETURN_IF_ERROR(recv.Wait());
    if (note != std::vector<int64_t>{7, 8, 9}) return absl::InternalError("wrong note");
  } else {
    TS_RETURN_IF_ERROR(comm.AllReduce(data, ReduceOp::kMax));
    if (comm.rank() == 1) {
      note = {7, 8, 9};
      TS_RETURN_IF_ERROR(comm.Send(note, 0, 9));
    }
  }
  std::vector<int64_t> want(513);
  for (int64_t i = 0; i < 513; ++i) want[i] = Reference<int64_t>(comm.size(), i, ReduceOp::kMax);
  return Compare(absl::StrCat("rank ", comm.rank()), data, want);
}

TEST(AsyncTest, TwoOperationsProgressAtOnce) {
  const absl::Status status = RunOnThreads(3, OverlapScenario);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(AsyncTest, OneAsyncThreadSerializesAndTheOverlapScenarioTimesOut) {
  CommOptions options;
  options.async_threads = 1;
  options.timeout = absl::Milliseconds(200);
  const absl::Status status = RunOnThreads(3, OverlapScenario, options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
}

TEST(AsyncTest, HandlesReportArgumentErrorsWithoutRunning) {
  const absl::Status status = RunOnThreads(2, [](Communicator& comm) -> absl::Status {
    std::vector<float> in(10), out(4);
    CommHandle h = comm.ReduceScatterAsync(in, out, ReduceOp::kSum);  // needs 2 * 4 = 8
    absl::Status s = h.Wait();
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "reduce-scatter")) {
      return absl::InternalError(absl::StrCat("unexpected: ", s.ToString()));
    }
    // The bad call consumed no sequence number: the next collective still pairs up.
    std::vector<float> x = TestData<float>(comm.rank(), 5);
    TS_RETURN_IF_ERROR(comm.AllReduceAsync(x, ReduceOp::kSum).Wait());
    std::vector<float> want(5);
    for (int i = 0; i < 5; ++i) want[i] = Reference<float>(2, i, ReduceOp::kSum);
    return Compare("after a rejected call", x, want);
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(AsyncTest, DefaultHandleIsDoneAndOk) {
  CommHandle h;
  EXPECT_TRUE(h.Done());
  EXPECT_TRUE(h.Wait().ok());
}

}  // namespace
}  // namespace tessera::comm
