// PolishWithSimulator: a run of parameterless layers leaves a feature split together.
#include "tessera/partitioner/polish.h"

#include <string>

#include "gtest/gtest.h"
#include "tessera/graph/builder.h"
#include "tessera/partitioner/simulate.h"
#include "fake_cost_model.h"

namespace tessera::partitioner {
namespace {

int LayerIndex(const Problem& p, const std::string& name) {
  for (int i = 0; i < static_cast<int>(p.layers.size()); ++i) {
    if (p.layers[i].name == name) return i;
  }
  ADD_FAILURE() << "no layer " << name;
  return 0;
}

int OptionWithOutput(const Layer& layer, Layout layout) {
  for (int k = 0; k < static_cast<int>(layer.options.size()); ++k) {
    if (layer.options[k].output == layout) return k;
  }
  ADD_FAILURE() << layer.name << " has no option writing " << LayoutName(layout);
  return 0;
}

double StepTime(const Problem& p, const Choice& c) {
  return Simulate(p, c, 0, false).step.step_time_s;
}

// x -> fc1 -> relu -> dropout -> fc2 -> loss, starting from fc1 model_parallel with relu and
// dropout on its feature split and fc2 data_parallel. Gradient all-reduces are nearly free,
// so all data_parallel is the best plan; reaching it needs relu and dropout to change
// together (either alone only moves the feature-to-batch transition).
TEST(PolishTest, AParameterlessChainLeavesAFeatureSplitTogether) {
  graph::GraphBuilder b("chain");
  graph::Value x = b.Input("x", {64, 256});
  graph::Value labels = b.Input("labels", {64}, graph::DType::kI64);
  graph::Value h = b.Dropout(b.Linear(x, 512, "fc1").Relu("relu"), 0.1, "dropout");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 10, "fc2"), labels, "loss"));
  absl::StatusOr<graph::Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  testing::FakeCostModel fake;
  fake.seconds_per_byte = {1e-15, 1e-9, 1e-9, 1e-9, 1e-9};
  absl::StatusOr<Problem> p = BuildProblem(*g, &fake, {.devices = 4});
  ASSERT_TRUE(p.ok()) << p.status();

  const int fc1 = LayerIndex(*p, "fc1"), relu = LayerIndex(*p, "relu"),
            dropout = LayerIndex(*p, "dropout");
  Choice start = AllDataParallel(*p);
  start[fc1] = FindOption(p->layers[fc1], Strategy::kModelParallel);
  ASSERT_GE(start[fc1], 0);
  start[relu] = OptionWithOutput(p->layers[relu], Layout::kFeature);
  start[dropout] = OptionWithOutput(p->layers[dropout], Layout::kFeature);
  const double all_data = StepTime(*p, AllDataParallel(*p));
  ASSERT_GT(StepTime(*p, start), all_data * 1.01);  // the start is worse

  const Choice polished = PolishWithSimulator(*p, start);
  EXPECT_EQ(p->layers[relu].options[polished[relu]].output, Layout::kBatch);
  EXPECT_EQ(p->layers[dropout].options[polished[dropout]].output, Layout::kBatch);
  EXPECT_LE(StepTime(*p, polished), all_data * (1 + 1e-9));
}

}  // namespace
}  // namespace tessera::partitioner
