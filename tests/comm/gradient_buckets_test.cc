// Gradient buckets: layout in reverse registration order with a small first bucket, launch as
// soon as a bucket's last gradient is ready (in bucket order), results equal to a per-gradient
// all-reduce.
#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/gradient_buckets.h"
#include "tessera/comm/launch.h"
#include "comm_test_util.h"

namespace tessera::comm {
namespace {

using testing::Compare;
using testing::TestData;

// Gradient g of rank r holds TestData(r, size_g, salt = g); sizes in float32 elements.
const std::vector<int64_t> kSizes = {300, 5000, 64, 70000, 10, 2500, 1, 40000};

GradientBucketOptions SmallBuckets() {
  GradientBucketOptions options;
  options.first_bucket_bytes = 12 << 10;  // 3072 floats
  options.bucket_bytes = 200 << 10;       // 51200 floats
  return options;
}

TEST(GradientBucketsTest, LayoutIsReverseOrderWithSmallFirstBucket) {
  const absl::Status status = RunOnThreads(1, [](Communicator& comm) -> absl::Status {
    std::vector<std::vector<float>> grads;
    for (int64_t n : kSizes) grads.emplace_back(n);
    GradientBuckets buckets(comm, SmallBuckets());
    for (size_t g = 0; g < grads.size(); ++g) {
      TS_RETURN_IF_ERROR(buckets.Register(absl::StrCat("g", g), grads[g]).status());
    }
    const std::vector<GradientBucket>& b = buckets.buckets();
    // Reverse order: 7 (40000) alone exceeds the first bucket's 3072 floats; then 6 (1),
    // 5 (2500), 4 (10), 3 (70000 > 51200 alone), 2 (64), 1 (5000), 0 (300).
    std::vector<std::vector<int>> want = {{7}, {6, 5, 4}, {3}, {2, 1, 0}};
    std::vector<std::vector<int>> got;
    for (const GradientBucket& x : b) got.push_back(x.gradients);
    if (got != want) return absl::InternalError("unexpected bucket layout");
    if (b[1].count != 1 + 2500 + 10) return absl::InternalError("bucket 1 count");
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(GradientBucketsTest, FirstBucketIsSmallerThanTheOthers) {
  const absl::Status status = RunOnThreads(1, [](Communicator& comm) -> absl::Status {
    std::vector<std::vector<float>> grads(20, std::vector<float>(1000));
    GradientBucketOptions options;
    options.first_bucket_bytes = 8000;   // 2 gradients
    options.bucket_bytes = 40000;        // 10 gradients
    GradientBuckets buckets(comm, options);
    for (auto& g : grads) TS_RETURN_IF_ERROR(buckets.Register("w", g).status());
    const auto& b = buckets.buckets();
    if (b.size() != 3 || b[0].gradients != std::vector<int>{19, 18} ||
        b[1].gradients.size() != 10 || b[2].gradients.size() != 8) {
      return absl::InternalError(absl::StrCat("layout has ", b.size(), " buckets"));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// on_caller: buckets launched from MarkReady, with a blocking all-gather issued between every
// two MarkReady calls (what the hybrid runtime's model-parallel layers do during backward).
absl::Status RunSteps(Communicator& comm, int steps, bool on_caller = false) {
  const int p = comm.size();
  std::vector<std::vector<float>> grads(kSizes.size());
  GradientBucketOptions options = SmallBuckets();
  options.launch_on_caller = on_caller;
  GradientBuckets buckets(comm, options);
  for (size_t g = 0; g < grads.size(); ++g) {
    grads[g].resize(kSizes[g]);
    TS_RETURN_IF_ERROR(buckets.Register(absl::StrCat("g", g), grads[g]).status());
  }
  for (int step = 0; step < steps; ++step) {
    for (size_t g = 0; g < grads.size(); ++g) {  // in place: the buckets hold the buffers
      const std::vector<float> values = TestData<float>(comm.rank(), kSizes[g], g + step);
      std::copy(values.begin(), values.end(), grads[g].begin());
    }
    // Backward: gradients become ready in reverse order.
    for (int g = static_cast<int>(grads.size()) - 1; g >= 0; --g) {
      TS_RETURN_IF_ERROR(buckets.MarkReady(g));
      if (!on_caller) continue;
      std::vector<float> mine(33, comm.rank() + g), all(33 * p);
      TS_RETURN_IF_ERROR(comm.AllGather(mine, all));
      for (int r = 0; r < p; ++r) {
        if (all[33 * r] != r + g) return absl::InternalError("interleaved all-gather");
      }
    }
    const std::vector<int> order = buckets.launched();
    if (order != std::vector<int>{0, 1, 2, 3}) return absl::InternalError("launch order");
    TS_RETURN_IF_ERROR(buckets.Finish());
    for (size_t g = 0; g < grads.size(); ++g) {
      // The independent expectation: each gradient all-reduced (averaged) on its own.
      std::vector<float> own = TestData<float>(comm.rank(), kSizes[g], g + step);
      TS_RETURN_IF_ERROR(comm.AllReduce(own, ReduceOp::kAverage));
      TS_RETURN_IF_ERROR(Compare(absl::StrCat("step ", step, " gradient ", g), grads[g], own));
    }
  }
  (void)p;
  return absl::OkStatus();
}

TEST(GradientBucketsTest, LaunchOnCallerAllowsTheCallersOwnCollectivesBetweenBuckets) {
  for (int p : {2, 3}) {
    const absl::Status status = RunOnThreads(p, [](Communicator& comm) {
      return RunSteps(comm, 3, /*on_caller=*/true);
    });
    EXPECT_TRUE(status.ok()) << "P=" << p << ": " << status;
  }
}

TEST(GradientBucketsTest, ResultsEqualPerGradientAllReduceOverSteps) {
  for (int p : {1, 2, 3, 5}) {
    const absl::Status status = RunOnThreads(p, [](Communicator& comm) {
      return RunSteps(comm, 3);
    });
    EXPECT_TRUE(status.ok()) << "P=" << p << ": " << status;
  }
}

TEST(GradientBucketsTest, BucketLaunchesAsSoonAsItsLastGradientIsReadyInBucketOrder) {
  const absl::Status status = RunOnThreads(2, [](Communicator& comm) -> absl::Status {
    std::vector<std::vector<float>> grads;
    for (int64_t n : kSizes) grads.push_back(TestData<float>(comm.rank(), n));
    GradientBuckets buckets(comm, SmallBuckets());
    for (auto& g : grads) TS_RETURN_IF_ERROR(buckets.Register("w", g).status());
    // Layout {{7}, {6, 5, 4}, {3}, {2, 1, 0}}. Bucket 2 ({3}) completes first but must wait
    // for buckets 0 and 1.
    TS_RETURN_IF_ERROR(buckets.MarkReady(3));
    if (!buckets.launched().empty()) return absl::InternalError("bucket 2 jumped the queue");
    TS_RETURN_IF_ERROR(buckets.MarkReady(7));
    if (buckets.launched() != std::vector<int>{0}) return absl::InternalError("bucket 0 not launched");
    TS_RETURN_IF_ERROR(buckets.MarkReady(6));
    TS_RETURN_IF_ERROR(buckets.MarkReady(5));
    if (buckets.launched() != std::vector<int>{0}) return absl::InternalError("bucket 1 early");
    TS_RETURN_IF_ERROR(buckets.MarkReady(4));  // completes bucket 1, which releases bucket 2
    if (buckets.launched() != std::vector<int>{0, 1, 2}) return absl::InternalError("1 and 2");
    // Gradients 0..2 never marked: Finish() reduces them anyway (unused parameters).
    TS_RETURN_IF_ERROR(buckets.Finish());
    std::vector<float> want = TestData<float>(comm.rank(), kSizes[1]);
    TS_RETURN_IF_ERROR(comm.AllReduce(want, ReduceOp::kAverage));
    return Compare("gradient 1", grads[1], want);
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(GradientBucketsTest, MisuseIsReported) {
  const absl::Status status = RunOnThreads(1, [](Communicator& comm) -> absl::Status {
    std::vector<float> a(10), b(10);
    GradientBuckets buckets(comm);
    TS_RETURN_IF_ERROR(buckets.Register("a", a).status());
    absl::Status s = buckets.MarkReady(3);
    if (!absl::IsInvalidArgument(s)) return absl::InternalError("unknown id accepted");
    TS_RETURN_IF_ERROR(buckets.MarkReady(0));
    s = buckets.MarkReady(0);
    if (!absl::IsFailedPrecondition(s) || s.message().find("'a'") == std::string::npos) {
      return absl::InternalError(absl::StrCat("double ready: ", s.ToString()));
    }
    s = buckets.Register("b", b).status();
    if (!absl::IsFailedPrecondition(s) || s.message().find("'b'") == std::string::npos) {
      return absl::InternalError("late registration accepted");
    }
    return buckets.Finish();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace tessera::comm
