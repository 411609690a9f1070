// The NCCL back-end against the serial reference, on as many GPUs as are visible (up to 4, one
// rank-thread each). Compiled whenever CUDA is found; every test skips, saying so, without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/communicator.h"
#include "tessera/comm/launch.h"
#include "../comm_test_util.h"

namespace tessera::comm {
namespace {

int Gpus() { return base::CudaDeviceCount(); }

#define SKIP_WITHOUT_GPU()                                                                  \
  if (Gpus() == 0) {                                                                        \
    GTEST_SKIP() << "no GPU present: the nccl back-end is compiled here but not run";       \
  }

CommOptions Nccl() {
  CommOptions options;
  options.backend = Backend::kNccl;
  options.timeout = absl::Seconds(20);
  return options;
}

// Device copy of a host vector, freed at scope exit.
template <typename T>
struct DeviceVector {
  explicit DeviceVector(const std::vector<T>& host) : n(host.size()) {
    cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(1, n) * sizeof(T));
    cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~DeviceVector() { cudaFree(ptr); }
  std::vector<T> ToHost() const {
    std::vector<T> out(n);
    cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost);
    return out;
  }
  T* ptr = nullptr;
  size_t n;
};

template <typename T>
absl::Status CheckAllReduce(Communicator& comm, int64_t n, ReduceOp op) {
  cudaSetDevice(comm.rank());
  DeviceVector<T> d(testing::TestData<T>(comm.rank(), n));
  TS_RETURN_IF_ERROR(comm.AllReduce(DataView(d.ptr, n, DTypeOf<T>::value), op));
  std::vector<T> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = testing::Reference<T>(comm.size(), i, op);
  return testing::Compare(absl::StrCat("nccl all-reduce ", ReduceOpName(op), " n=", n),
                          d.ToHost(), want);
}

TEST(NcclCommTest, AllReduceEveryDTypeAndOpMatchesReference) {
  SKIP_WITHOUT_GPU();
  const int p = std::min(Gpus(), 4);
  const absl::Status status = RunOnThreads(p, [](Communicator& comm) -> absl::Status {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{100003}}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        TS_RETURN_IF_ERROR(CheckAllReduce<float>(comm, n, op));
        TS_RETURN_IF_ERROR(CheckAllReduce<BFloat16>(comm, n, op));
        TS_RETURN_IF_ERROR(CheckAllReduce<int64_t>(comm, n, op));
      }
      TS_RETURN_IF_ERROR(CheckAllReduce<float>(comm, n, ReduceOp::kAverage));
    }
    return absl::OkStatus();
  }, Nccl());
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NcclCommTest, AllGatherAndBroadcastMatchReference) {
  SKIP_WITHOUT_GPU();
  const int p = std::min(Gpus(), 4);
  const absl::Status status = RunOnThreads(p, [p](Communicator& comm) -> absl::Status {
    cudaSetDevice(comm.rank());
    DeviceVector<int64_t> mine(testing::TestData<int64_t>(comm.rank(), 33));
    DeviceVector<int64_t> all(std::vector<int64_t>(33 * p));
    TS_RETURN_IF_ERROR(comm.AllGather(ConstDataView(mine.ptr, 33, DType::kInt64),
                                      DataView(all.ptr, 33 * p, DType::kInt64)));
    std::vector<int64_t> want;
    for (int r = 0; r < p; ++r) {
      auto t = testing::TestData<int64_t>(r, 33);
      want.insert(want.end(), t.begin(), t.end());
    }
    TS_RETURN_IF_ERROR(testing::Compare("nccl all-gather", all.ToHost(), want));
    DeviceVector<float> b(testing::TestData<float>(comm.rank(), 1000));
    TS_RETURN_IF_ERROR(comm.Broadcast(DataView(b.ptr, 1000, DType::kFloat32), p - 1));
    return testing::Compare("nccl broadcast", b.ToHost(), testing::TestData<float>(p - 1, 1000));
  }, Nccl());
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NcclCommTest, AllToAllMatchesReference) {
  SKIP_WITHOUT_GPU();
  const int p = std::min(Gpus(), 4);
  const absl::Status status = RunOnThreads(p, [p](Communicator& comm) -> absl::Status {
    cudaSetDevice(comm.rank());
    const int64_t block = 1001;
    DeviceVector<float> in(testing::TestData<float>(comm.rank(), block * p));
    DeviceVector<float> out(std::vector<float>(block * p));
    TS_RETURN_IF_ERROR(comm.AllToAll(ConstDataView(in.ptr, block * p, DType::kFloat32),
                                     DataView(out.ptr, block * p, DType::kFloat32)));
    std::vector<float> want;
    for (int s = 0; s < p; ++s) {
      const std::vector<float> theirs = testing::TestData<float>(s, block * p);
      want.insert(want.end(), theirs.begin() + comm.rank() * block,
                  theirs.begin() + (comm.rank() + 1) * block);
    }
    return testing::Compare("nccl all-to-all", out.ToHost(), want);
  }, Nccl());
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NcclCommTest, DisagreeingCountsGiveInvalidArgument) {
  SKIP_WITHOUT_GPU();
  if (Gpus() < 2) GTEST_SKIP() << "needs 2 GPUs";
  std::vector<absl::Status> s(2);
  RunOnThreads(2, [&](Communicator& comm) {
    cudaSetDevice(comm.rank());
    DeviceVector<float> d(std::vector<float>(comm.rank() == 1 ? 11 : 10, 1.0f));
    s[comm.rank()] = comm.AllReduce(DataView(d.ptr, d.n, DType::kFloat32), ReduceOp::kSum);
    return absl::OkStatus();
  }, Nccl()).IgnoreError();
  for (const absl::Status& x : s) {
    EXPECT_TRUE(absl::IsInvalidArgument(x)) << x;
    EXPECT_TRUE(absl::StrContains(x.message(), "all-reduce #0")) << x;
  }
}

// Host buffers (CommOptions::host_buffers, what the hybrid runtime uses) staged through the
// GPUs: every collective, size and op of the thread back-end's suite (float, on 1, 2 or 4 GPUs,
// where ncclAvg's pre-division by P is exact), and exact data movement for int64.
CommOptions NcclHost() {
  CommOptions options = Nccl();
  options.host_buffers = true;
  return options;
}

int PowerOfTwoGpus() {
  const int n = Gpus();
  return n >= 4 ? 4 : n >= 2 ? 2 : 1;
}

TEST(NcclCommTest, HostBuffersMatchReferenceForEveryCollective) {
  SKIP_WITHOUT_GPU();
  const absl::Status status = RunOnThreads(PowerOfTwoGpus(), [](Communicator& comm) -> absl::Status {
    TS_RETURN_IF_ERROR(testing::CheckEverything<float>(comm));
    for (int64_t block : {int64_t{0}, int64_t{1}, int64_t{1001}}) {
      TS_RETURN_IF_ERROR(testing::CheckAllGather<int64_t>(comm, block));
      TS_RETURN_IF_ERROR(testing::CheckAllToAll<int64_t>(comm, block));
      TS_RETURN_IF_ERROR(testing::CheckBroadcast<int64_t>(comm, block, comm.size() - 1));
    }
    return comm.Barrier();
  }, NcclHost());
  EXPECT_TRUE(status.ok()) << status;
}

// An async host-buffer call's result is in the caller's buffer once Done() says so (Done copies
// it out) or Wait() returns; two calls in flight each get their own staging block.
TEST(NcclCommTest, HostBufferAsyncResultsLandInTheCallersBuffers) {
  SKIP_WITHOUT_GPU();
  const absl::Status status = RunOnThreads(PowerOfTwoGpus(), [](Communicator& comm) -> absl::Status {
    const int p = comm.size();
    const int64_t n = 4099;
    std::vector<float> sum = testing::TestData<float>(comm.rank(), n);
    const std::vector<float> mine = testing::TestData<float>(comm.rank(), n, /*salt=*/1);
    std::vector<float> all(n * p);
    CommHandle reduce = comm.AllReduceAsync(sum, ReduceOp::kSum);
    CommHandle gather = comm.AllGatherAsync(mine, all);
    while (!gather.Done()) std::this_thread::yield();
    std::vector<float> want_all;
    for (int r = 0; r < p; ++r) {
      const std::vector<float> theirs = testing::TestData<float>(r, n, 1);
      want_all.insert(want_all.end(), theirs.begin(), theirs.end());
    }
    TS_RETURN_IF_ERROR(testing::Compare("all-gather after Done()", all, want_all));
    TS_RETURN_IF_ERROR(reduce.Wait());
    TS_RETURN_IF_ERROR(gather.Wait());
    std::vector<float> want_sum(n);
    for (int64_t i = 0; i < n; ++i) want_sum[i] = testing::Reference<float>(p, i, ReduceOp::kSum);
    return testing::Compare("all-reduce after Wait()", sum, want_sum);
  }, NcclHost());
  EXPECT_TRUE(status.ok()) << status;
}

// The hybrid runtime's two channels per rank: separate NCCL communicators, each numbering its
// own collectives, one all-reducing in the background while the other runs blocking calls.
TEST(NcclCommTest, ChannelsAreIndependentCommunicators) {
  SKIP_WITHOUT_GPU();
  const absl::Status status = RunRanksWithChannels(
      NcclHost(), PowerOfTwoGpus(), 2,
      [](absl::Span<Communicator* const> ch) -> absl::Status {
        const int p = ch[0]->size();
        std::vector<float> grads(100003, 1.0f + ch[0]->rank());
        CommHandle bucket = ch[1]->AllReduceAsync(grads, ReduceOp::kSum);
        for (int k = 0; k < 3; ++k) TS_RETURN_IF_ERROR(testing::CheckAllToAll<float>(*ch[0], 33));
        TS_RETURN_IF_ERROR(bucket.Wait());
        const float want = p * (p + 1) / 2.0f;
        for (float g : grads) {
          if (g != want) return absl::InternalError(absl::StrCat("bucket holds ", g, ", not ", want));
        }
        if (p > 1 && (ch[0]->traffic().payload_bytes != 3 * (p - 1) * 33 * 4 ||
                      ch[1]->traffic().payload_bytes != 2 * (p - 1) * 100003 * 4 / p)) {
          return absl::InternalError("each channel must count its own traffic only");
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NcclCommTest, WithoutAGpuChannelsSaySo) {
  if (Gpus() > 0) GTEST_SKIP() << "a GPU is present";
  const absl::Status s = RunRanksWithChannels(
      NcclHost(), 2, 2, [](absl::Span<Communicator* const>) { return absl::OkStatus(); });
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "0 GPU(s) visible")) << s;
}

TEST(NcclCommTest, WithoutAGpuTheBackEndSaysSo) {
  if (Gpus() > 0) GTEST_SKIP() << "a GPU is present";
  const absl::Status s = RunOnThreads(2, [](Communicator&) { return absl::OkStatus(); }, Nccl());
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "GPU")) << s;
}

}  // namespace
}  // namespace tessera::comm
