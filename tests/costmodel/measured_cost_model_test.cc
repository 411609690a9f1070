// MeasuredCostModel: a named node's passes at the measured times scaled by their share, the
// extra late-multiply FLOPs and everything unmeasured at the fallback's price; the update only
// for the optimizer that was timed; OpTimesKey changes with the shapes, split, threads,
// optimizer and BLAS kernels and with nothing else.
#include "tessera/costmodel/measured_cost_model.h"

#include <gtest/gtest.h>

#include "tessera/graph/builder.h"

namespace tessera::costmodel {
namespace {

// Every op costs its FLOPs in nanoseconds; collectives 1 s per byte.
class Nanos : public CostModel {
 public:
  double OpTime(const OpWork& work) const override { return work.flops * 1e-9; }
  double CollectiveTime(Collective, double bytes, const std::vector<int>&) const override {
    return bytes;
  }
  double OverlapSlowdown() const override { return 0.25; }
};

TEST(MeasuredCostModelTest, NamedPassesScaleWithTheirShare) {
  Nanos fallback;
  MeasuredOpTimes times{.share = 0.5};
  times.ops["fc"] = {.forward_s = 2e-3, .backward_s = 4e-3};
  const MeasuredCostModel m(fallback, times);
  EXPECT_TRUE(m.Measured("fc"));
  EXPECT_FALSE(m.Measured("other"));
  const OpWork fwd{.flops = 1e6, .kind = WorkKind::kForward, .node = "fc", .share = 0.25};
  EXPECT_DOUBLE_EQ(m.OpTime(fwd), 1e-3);  // half the measured shard
  const OpWork bwd{.flops = 3e6, .kind = WorkKind::kBackward, .node = "fc", .share = 1,
                   .extra_flops = 1e6};
  EXPECT_DOUBLE_EQ(m.OpTime(bwd), 8e-3 + 1e-3);  // measured x2, extra FLOPs at the fallback's
  const OpWork other{.flops = 5e6, .kind = WorkKind::kForward, .node = "other", .share = 1};
  EXPECT_DOUBLE_EQ(m.OpTime(other), 5e-3);
  EXPECT_DOUBLE_EQ(m.OpTime({.flops = 7e6}), 7e-3);
  EXPECT_DOUBLE_EQ(m.CollectiveTime(Collective::kAllReduce, 3, {0, 1}), 3);
  EXPECT_DOUBLE_EQ(m.OverlapSlowdown(), 0.25);
}

TEST(MeasuredCostModelTest, UpdateForItsOptimizerAndBucketCopies) {
  Nanos fallback;
  MeasuredOpTimes times{.bucket_copy_s_per_byte = 1e-6};
  times.update =
      MeasuredUpdate{.optimizer = OptimizerKind::kAdam, .seconds_per_param_byte = 2e-6};
  const MeasuredCostModel m(fallback, times);
  const OpWork adam{.flops = 1e6, .kind = WorkKind::kUpdate, .optimizer = OptimizerKind::kAdam,
                    .param_bytes = 1000};
  EXPECT_DOUBLE_EQ(m.OpTime(adam), 2e-3);
  OpWork sgd = adam;
  sgd.optimizer = OptimizerKind::kSgd;
  EXPECT_DOUBLE_EQ(m.OpTime(sgd), 1e-3);  // not timed: the fallback's
  EXPECT_DOUBLE_EQ(m.OpTime({.kind = WorkKind::kBucketCopy, .param_bytes = 500}), 5e-4);
  const MeasuredCostModel empty(fallback, {});
  EXPECT_DOUBLE_EQ(empty.OpTime({.flops = 2e6, .kind = WorkKind::kBucketCopy}), 2e-3);
}

graph::Graph Net(int64_t batch, int64_t hidden, const std::string& fc_name = "fc") {
  graph::GraphBuilder b("net");
  graph::Value x = b.Input("x", {batch, 8});
  b.Output(b.ReduceMean(b.Linear(x, hidden, fc_name).Relu("relu"), {0, 1}, false, "loss"));
  return *std::move(b).Build();
}

TEST(OpTimesKeyTest, ChangesWithShapesSplitThreadsOptimizerAndKernelsOnly) {
  const auto key_of = [](const graph::Graph& g, int devices, int threads, OptimizerKind opt,
                         std::string_view kernels = "SkylakeX") {
    return OpTimesKey(g, devices, threads, opt, kernels);
  };
  const std::string key = key_of(Net(4, 16), 2, 1, OptimizerKind::kAdam);
  EXPECT_EQ(key, key_of(Net(4, 16), 2, 1, OptimizerKind::kAdam));  // stable
  EXPECT_EQ(key.rfind("net/", 0), 0u) << key;
  EXPECT_NE(key.find("/2x1/adam/SkylakeX"), std::string::npos) << key;
  EXPECT_NE(key, key_of(Net(8, 16), 2, 1, OptimizerKind::kAdam));           // batch
  EXPECT_NE(key, key_of(Net(4, 32), 2, 1, OptimizerKind::kAdam));           // a layer's width
  EXPECT_NE(key, key_of(Net(4, 16, "dense"), 2, 1, OptimizerKind::kAdam));  // a node name
  EXPECT_NE(key, key_of(Net(4, 16), 4, 1, OptimizerKind::kAdam));
  EXPECT_NE(key, key_of(Net(4, 16), 2, 2, OptimizerKind::kAdam));
  EXPECT_NE(key, key_of(Net(4, 16), 2, 1, OptimizerKind::kSgd));
  EXPECT_NE(key, key_of(Net(4, 16), 2, 1, OptimizerKind::kAdam, "Prescott"));  // BLAS kernels
}

}  // namespace
}  // namespace tessera::costmodel
