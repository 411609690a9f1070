// The model zoo: every model builds, matches its parameter count, and follows
// the batch argument.
#include <cmath>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/graph/batch.h"
#include "tessera/graph/parameters.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::graph::zoo {
namespace {

using ::testing::HasSubstr;

// Parameter counts, confirmed with PyTorch modules (torchvision 0.14 for the
// CNNs; hand-written nn.Module replicas for GNMT, CRNN and GPT-2; for nmt and ocr
// the models of bench/torch_step_time.py): docs/zoo.md.
const std::map<std::string, int64_t>& ExpectedParams() {
  static const std::map<std::string, int64_t> counts = {
      {"alexnet", 61'100'840}, {"vgg16", 138'357'544},     {"resnet50", 25'557'032},
      {"gnmt", 160'671'297},   {"crnn", 8'330'789},        {"transformer", 124'439'808},
      {"nmt", 3'131'600},      {"ocr", 844'453},  // CPU-sized: zoo_small_models_test.cc
  };
  return counts;
}

const ZooModelInfo& Info(absl::string_view name) {
  for (const ZooModelInfo& m : ZooModels()) {
    if (m.name == name) return m;
  }
  static const ZooModelInfo none{};
  return none;
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const ZooModelInfo& m : ZooModels()) names.push_back(m.name);
  return names;
}

TEST(ZooTest, ListsTheSixModelsAndTheTwoCpuSizedOnes) {
  EXPECT_EQ(Names(), (std::vector<std::string>{"alexnet", "vgg16", "resnet50", "gnmt", "crnn",
                                               "transformer", "nmt", "ocr"}));
  for (const ZooModelInfo& m : ZooModels()) {
    EXPECT_FALSE(m.description.empty()) << m.name;
    EXPECT_FALSE(m.source.empty()) << m.name;
    EXPECT_GT(m.default_batch, 0) << m.name;
  }
}

class ZooModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModelTest, BuildsAtDefaultBatchWithTheDocumentedParameterCount) {
  const std::string& name = GetParam();
  absl::StatusOr<Graph> g = BuildZooModel(name);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->name(), name);
  EXPECT_EQ(CountParameters(*g), ExpectedParams().at(name));
  EXPECT_EQ(GraphBatch(*g), Info(name).default_batch);
  // The published figure: exact, except CRNN's rounded "8.3M" (8.25M to 8.35M).
  const double published = static_cast<double>(Info(name).published_params);
  const double ours = static_cast<double>(CountParameters(*g));
  if (name == "crnn") {
    EXPECT_LT(std::abs(ours - published), 50'000);
  } else {
    EXPECT_EQ(ours, published);
  }
  // A training graph: one scalar loss output.
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->tensor(g->outputs()[0]).shape, Shape{});
  EXPECT_TRUE(g->Validate().ok());
}

TEST_P(ZooModelTest, BatchChangesDataInputsButNotParameters) {
  const std::string& name = GetParam();
  absl::StatusOr<Graph> g = BuildZooModel(name, 3);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountParameters(*g), ExpectedParams().at(name));
  const auto inputs = g->TensorsWithRole(TensorRole::kInput);
  ASSERT_FALSE(inputs.empty());
  for (TensorId t : inputs) EXPECT_EQ(g->tensor(t).shape[0], 3) << g->tensor(t).name;
  // Nothing bakes the batch in: the graph can be re-batched later.
  EXPECT_TRUE(SetBatch(*g, 5).ok()) << SetBatch(*g, 5);
  EXPECT_EQ(GraphBatch(*g), 5);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooModelTest, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

TEST(ZooTest, UnknownNameListsTheAvailableModels) {
  auto g = BuildZooModel("lenet");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  const std::string msg(g.status().message());
  EXPECT_THAT(msg, HasSubstr("'lenet'"));
  for (const std::string& name : Names()) EXPECT_THAT(msg, HasSubstr(name));
}

TEST(ZooTest, NegativeBatchIsRejected) {
  auto g = BuildZooModel("alexnet", -4);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("-4"));
}

}  // namespace
}  // namespace tessera::graph::zoo
