// Faults: peers that stall or exit, ranks that disagree, bad arguments. Every case returns an
// error naming the peer and the collective instead of hanging or mixing data.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "comm_test_util.h"

namespace tessera::comm {
namespace {

CommOptions ShortTimeout() {
  CommOptions options;
  options.timeout = absl::Milliseconds(200);
  return options;
}

// Runs `fn` on `p` ranks and returns every rank's status.
std::vector<absl::Status> Statuses(int p, const std::function<absl::Status(Communicator&)>& fn,
                                   CommOptions options = ShortTimeout()) {
  std::vector<absl::Status> out(p);
  RunOnThreads(p, [&](Communicator& comm) {
    out[comm.rank()] = fn(comm);
    return absl::OkStatus();
  }, options).IgnoreError();
  return out;
}

TEST(FaultsTest, StalledRankGivesDeadlineExceededNamingPeerAndCollective) {
  absl::Notification release;
  std::atomic<int> finished{0};
  const std::vector<absl::Status> s = Statuses(4, [&](Communicator& comm) -> absl::Status {
    if (comm.rank() == 2) {  // alive but never calls the collective, until the others gave up
      release.WaitForNotificationWithTimeout(absl::Seconds(20));
      return absl::OkStatus();
    }
    std::vector<float> data(1000, 1.0f);
    absl::Status status = comm.AllReduce(data, ReduceOp::kSum);
    if (finished.fetch_add(1) == 2) release.Notify();
    return status;
  });
  for (int r : {0, 1, 3}) {
    EXPECT_TRUE(absl::IsDeadlineExceeded(s[r])) << r << ": " << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "all-reduce #0")) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), absl::StrCat("rank ", r, ":"))) << s[r];
  }
  // The header exchange waits on every peer, so everyone names the stalled rank 2.
  EXPECT_TRUE(absl::StrContains(s[0].message(), "rank 2")) << s[0];
}

TEST(FaultsTest, RankThatExitsMidCollectiveGivesUnavailableOrDeadline) {
  const std::vector<absl::Status> s = Statuses(3, [](Communicator& comm) -> absl::Status {
    std::vector<int64_t> data(100000, comm.rank());
    TS_RETURN_IF_ERROR(comm.AllReduce(data, ReduceOp::kSum));  // all three succeed
    if (comm.rank() == 1) return absl::OkStatus();             // then rank 1 leaves
    return comm.AllReduce(data, ReduceOp::kSum);
  });
  EXPECT_TRUE(s[1].ok()) << s[1];
  for (int r : {0, 2}) {
    EXPECT_TRUE(absl::IsUnavailable(s[r]) || absl::IsDeadlineExceeded(s[r])) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "all-reduce #1")) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "rank 1")) << s[r];
  }
}

TEST(FaultsTest, CommunicatorIsUnusableAfterATimeout) {
  const std::vector<absl::Status> s = Statuses(2, [](Communicator& comm) -> absl::Status {
    if (comm.rank() == 1) {
      absl::SleepFor(absl::Milliseconds(600));  // misses rank 0's barrier
      return absl::OkStatus();
    }
    absl::Status first = comm.Barrier();
    if (!absl::IsDeadlineExceeded(first)) return absl::InternalError(first.ToString());
    return comm.Barrier();
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(s[0])) << s[0];
  EXPECT_TRUE(absl::StrContains(s[0].message(), "earlier failure")) << s[0];
}

TEST(FaultsTest, MismatchedCountsGiveInvalidArgumentOnEveryRank) {
  const std::vector<absl::Status> s = Statuses(4, [](Communicator& comm) -> absl::Status {
    std::vector<float> data(comm.rank() == 2 ? 999 : 1000, 1.0f);
    std::vector<float> before = data;
    absl::Status status = comm.AllReduce(data, ReduceOp::kSum);
    if (data != before) return absl::InternalError("data changed despite the mismatch");
    if (!absl::IsInvalidArgument(status)) return status;
    // Ranks stay in step after an agreed rejection: the next collective works.
    std::vector<float> ok(10, 1.0f);
    TS_RETURN_IF_ERROR(comm.AllReduce(ok, ReduceOp::kSum));
    if (ok[0] != 4.0f) return absl::InternalError("follow-up all-reduce is wrong");
    return status;
  }, CommOptions());
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(absl::IsInvalidArgument(s[r])) << r << ": " << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "999")) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "rank 2 called all-reduce")) << s[r];
  }
}

TEST(FaultsTest, MismatchedDTypeOrOpGivesInvalidArgument) {
  const std::vector<absl::Status> s = Statuses(3, [](Communicator& comm) -> absl::Status {
    if (comm.rank() == 0) {
      std::vector<int64_t> data(8, 1);
      return comm.AllReduce(data, ReduceOp::kSum);
    }
    std::vector<float> data(4, 1.0f);  // same bytes, other dtype
    return comm.AllReduce(data, comm.rank() == 1 ? ReduceOp::kSum : ReduceOp::kMax);
  }, CommOptions());
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(absl::IsInvalidArgument(s[r])) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "int64")) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "max")) << s[r];
  }
}

TEST(FaultsTest, DifferentCollectivesAtTheSameStepAreCaught) {
  const std::vector<absl::Status> s = Statuses(2, [](Communicator& comm) -> absl::Status {
    std::vector<float> data(6, 1.0f);
    if (comm.rank() == 0) return comm.Broadcast(data, 0);
    return comm.AllReduce(data, ReduceOp::kSum);
  }, CommOptions());
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(absl::IsInvalidArgument(s[r])) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(), "broadcast #0")) << s[r];
  }
}

TEST(FaultsTest, AllToAllOfDisagreeingBlocksMovesNoData) {
  const std::vector<absl::Status> s = Statuses(3, [](Communicator& comm) -> absl::Status {
    const int64_t n = comm.rank() == 1 ? 3 * 5 : 3 * 4;
    const std::vector<float> in(n, 1.0f);
    std::vector<float> out(n, -1.0f);
    absl::Status status = comm.AllToAll(in, out);
    if (out != std::vector<float>(n, -1.0f)) return absl::InternalError("output was written");
    return status;
  }, CommOptions());
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(absl::IsInvalidArgument(s[r])) << s[r];
    EXPECT_TRUE(absl::StrContains(s[r].message(),
                                  "rank 1 called all-to-all #0 (5 float32 per block)"))
        << s[r];
  }
}

TEST(FaultsTest, RecvOfWrongSizeIsInvalidArgumentAndSenderIsNotStuck) {
  const std::vector<absl::Status> s = Statuses(2, [](Communicator& comm) -> absl::Status {
    if (comm.rank() == 0) {
      std::vector<float> data(5, 2.0f);
      return comm.Send(data, 1, 3);
    }
    std::vector<float> data(6, 0.0f);
    absl::Status status = comm.Recv(data, 0, 3);
    if (data != std::vector<float>(6, 0.0f)) return absl::InternalError("buffer was written");
    return status;
  });
  EXPECT_TRUE(s[0].ok()) << s[0];
  EXPECT_TRUE(absl::IsInvalidArgument(s[1])) << s[1];
  EXPECT_TRUE(absl::StrContains(s[1].message(), "rank 0 sent 5 float32")) << s[1];
}

TEST(FaultsTest, BadArgumentsAreRejectedWithNames) {
  const absl::Status status = RunOnThreads(2, [](Communicator& comm) -> absl::Status {
    std::vector<float> a(4), b(3);
    std::vector<int64_t> c(8);
    absl::Status s = comm.AllGather(a, b);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "all-gather")) return s;
    s = comm.ReduceScatter(c, a, ReduceOp::kSum);  // dtype differs
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "int64")) return s;
    s = comm.Broadcast(a, 5);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "root 5")) return s;
    s = comm.Send(a, comm.rank(), 0);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "peer")) return s;
    s = comm.Recv(a, 1 - comm.rank(), Communicator::kMaxTag + 1);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "tag")) return s;
    s = comm.AllReduce(DataView(nullptr, 3, DType::kFloat32), ReduceOp::kSum);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "null")) return s;
    s = comm.AllReduce(a, static_cast<ReduceOp>(9));
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "reduce op")) return s;
    std::vector<float> odd(3), d(4);
    s = comm.AllToAll(odd, odd);  // 3 elements do not make 2 blocks
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "all-to-all")) return s;
    s = comm.AllToAll(a, c);  // dtype and count differ
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "int64")) return s;
    s = comm.AllToAll(a, a);
    if (!absl::IsInvalidArgument(s) || !absl::StrContains(s.message(), "overlap")) return s;
    return comm.Barrier();  // nothing above consumed a sequence number
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(FaultsTest, OptionsAndBackendNamesAreValidated) {
  CommOptions options;
  options.timeout = absl::ZeroDuration();
  EXPECT_TRUE(absl::StrContains(ValidateOptions(options).message(), "timeout"));
  options = CommOptions();
  options.pipeline_depth = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateOptions(options)));
  options = CommOptions();
  options.backend = Backend::kMpi;  // a process per rank: not for RunOnThreads
  EXPECT_FALSE(RunOnThreads(2, [](Communicator&) { return absl::OkStatus(); }, options).ok());
  absl::StatusOr<Backend> unknown = ParseBackend("carrier-pigeon");
  ASSERT_FALSE(unknown.ok());
  const absl::Status s = unknown.status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "carrier-pigeon")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "thread")) << s;
  EXPECT_TRUE(absl::IsInvalidArgument(RunOnThreads(0, [](Communicator&) {
    return absl::OkStatus();
  })));
}

TEST(FaultsTest, FirstErrorIsReportedWithItsRank) {
  const absl::Status s = RunOnThreads(3, [](Communicator& comm) -> absl::Status {
    if (comm.rank() == 2) return absl::NotFoundError("no such file model.onnx");
    return absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_EQ(s.message(), "rank 2: no such file model.onnx");
}

}  // namespace
}  // namespace tessera::comm
