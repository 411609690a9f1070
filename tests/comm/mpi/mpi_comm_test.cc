// The MPI back-end under mpiexec (ctest runs it with -n 2 and -n 4): every collective, dtype
// and op against the serial reference, async overlap, disagreement, a stalled rank, buckets.
// Every rank runs every test; a failure on any rank fails the run.
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/gradient_buckets.h"
#include "tessera/comm/launch.h"
#include "../comm_test_util.h"

namespace tessera::comm {
namespace {

using testing::Compare;
using testing::Reference;
using testing::TestData;

std::unique_ptr<Communicator> MakeComm(CommOptions options = {}) {
  options.backend = Backend::kMpi;
  absl::StatusOr<std::unique_ptr<Communicator>> comm = CreateCommunicator(options);
  TS_CHECK(comm.ok()) << comm.status();
  return *std::move(comm);
}

TEST(MpiCommTest, ReportsRankAndSizeOfTheJob) {
  auto comm = MakeComm();
  EXPECT_EQ(comm->backend(), Backend::kMpi);
  EXPECT_GE(comm->size(), 2);
  EXPECT_LT(comm->rank(), comm->size());
}

TEST(MpiCommTest, EveryCollectiveAndDTypeMatchesSerialReference) {
  auto comm = MakeComm();
  absl::Status s = testing::CheckEverything<float>(*comm);
  if (s.ok()) s = testing::CheckEverything<BFloat16>(*comm);
  if (s.ok()) s = testing::CheckEverything<int64_t>(*comm);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(MpiCommTest, TinyChunksAndLargeMessages) {
  CommOptions options;
  options.chunk_bytes = 44;
  auto small = MakeComm(options);
  absl::Status s;
  for (int64_t n : {int64_t{1}, int64_t{31}, int64_t{4099}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMax}) {
      if (s.ok()) s = testing::CheckAllReduce<float>(*small, n, op);
      if (s.ok()) s = testing::CheckAllReduce<BFloat16>(*small, n, op);
      if (s.ok()) s = testing::CheckAllReduce<int64_t>(*small, n, op);
    }
  }
  auto comm = MakeComm();
  if (s.ok()) s = testing::CheckAllReduce<float>(*comm, (8 << 20) + 3, ReduceOp::kSum);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(MpiCommTest, SendRecvAroundTheRing) {
  auto comm = MakeComm();
  const int r = comm->rank(), p = comm->size();
  std::vector<int64_t> out = TestData<int64_t>(r, 1234, 5), in(1234);
  CommHandle send = comm->SendAsync(out, (r + 1) % p, 77);
  ASSERT_TRUE(comm->Recv(in, (r + p - 1) % p, 77).ok());
  ASSERT_TRUE(send.Wait().ok());
  const absl::Status s = Compare("recv", in, TestData<int64_t>((r + p - 1) % p, 1234, 5));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(MpiCommTest, TwoCollectivesInFlight) {
  auto comm = MakeComm();
  // Rank 0's receive completes only after an all-reduce it issues second.
  std::vector<float> data = TestData<float>(comm->rank(), 100001);
  std::vector<int64_t> note(1, 0);
  absl::Status s;
  if (comm->rank() == 0) {
    CommHandle recv = comm->RecvAsync(note, 1, 4);
    CommHandle reduce = comm->AllReduceAsync(data, ReduceOp::kSum);
    s = reduce.Wait();
    if (s.ok()) s = recv.Wait();
    EXPECT_EQ(note[0], 42);
  } else {
    s = comm->AllReduce(data, ReduceOp::kSum);
    if (s.ok() && comm->rank() == 1) {
      note[0] = 42;
      s = comm->Send(note, 0, 4);
    }
  }
  ASSERT_TRUE(s.ok()) << s;
  std::vector<float> want(data.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = Reference<float>(comm->size(), i, ReduceOp::kSum);
  s = Compare("all-reduce in flight", data, want);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(MpiCommTest, DisagreeingRanksAllGetInvalidArgument) {
  auto comm = MakeComm();
  std::vector<int64_t> data(comm->rank() == 1 ? 17 : 16, 1);
  const std::vector<int64_t> before = data;
  absl::Status s = comm->AllReduce(data, ReduceOp::kSum);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "rank 1 called all-reduce")) << s;
  EXPECT_EQ(data, before);
  std::vector<int64_t> next(4, 1);
  ASSERT_TRUE(comm->AllReduce(next, ReduceOp::kSum).ok());  // still in step
  EXPECT_EQ(next[0], comm->size());
}

TEST(MpiCommTest, GradientBucketsMatchPerGradientAllReduce) {
  auto comm = MakeComm();
  const std::vector<int64_t> sizes = {10, 70000, 3, 9000, 500};
  std::vector<std::vector<BFloat16>> grads(sizes.size());
  GradientBucketOptions options;
  options.first_bucket_bytes = 2000;
  options.bucket_bytes = 40000;
  GradientBuckets buckets(*comm, options);
  for (size_t g = 0; g < sizes.size(); ++g) {
    grads[g] = TestData<BFloat16>(comm->rank(), sizes[g], g);
    ASSERT_TRUE(buckets.Register(absl::StrCat("g", g), grads[g]).ok());
  }
  for (int g = static_cast<int>(sizes.size()) - 1; g >= 0; --g) ASSERT_TRUE(buckets.MarkReady(g).ok());
  ASSERT_TRUE(buckets.Finish().ok());
  for (size_t g = 0; g < sizes.size(); ++g) {
    std::vector<BFloat16> want = TestData<BFloat16>(comm->rank(), sizes[g], g);
    ASSERT_TRUE(comm->AllReduce(want, ReduceOp::kAverage).ok());
    const absl::Status s = Compare(absl::StrCat("gradient ", g), grads[g], want);
    EXPECT_TRUE(s.ok()) << s;
  }
}

TEST(MpiCommTest, StalledRankGivesDeadlineExceededNamingIt) {
  CommOptions options;
  options.timeout = absl::Milliseconds(300);
  auto comm = MakeComm(options);
  auto sync = MakeComm();
  if (comm->rank() == comm->size() - 1) {
    absl::SleepFor(absl::Milliseconds(900));  // never calls the all-reduce below
  } else {
    std::vector<float> data(1 << 16, 1.0f);
    const absl::Status s = comm->AllReduce(data, ReduceOp::kSum);
    EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), absl::StrCat("rank ", comm->size() - 1))) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "all-reduce #0")) << s;
  }
  ASSERT_TRUE(sync->Barrier().ok());
}

}  // namespace
}  // namespace tessera::comm

namespace {
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[  FAILED  ] rank %d: %s:%d: %s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  auto mpi = tessera::comm::MpiSession::Start(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "%s\n", mpi.status().ToString().c_str());
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  if ((*mpi)->world_rank() != 0) {
    // Other ranks print failures only (rank 0 prints the full log).
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter((*mpi)->world_rank()));
  }
  const int failed = RUN_ALL_TESTS();
  return failed;
}
