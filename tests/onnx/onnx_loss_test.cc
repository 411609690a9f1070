// ONNX loss ops (graph/onnx/translate_loss.cc): PyTorch training exports with their loss
// (tests/models/export_training_models.py) import with the loss as the first output and the
// targets as integer data inputs; NegativeLogLikelihoodLoss becomes SoftmaxCrossEntropy on
// log-probabilities and its own computation otherwise, with the right values and gradients;
// what Tessera cannot express is refused naming the node. Training equivalence with builder
// models: onnx_loss_training_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph {
namespace {

using testing::Named;
using testing::OnlyNode;
using testing::OnnxModel;

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";

absl::StatusOr<Graph> Import(const std::string& file, int64_t batch = 0) {
  return ImportOnnxFile(kModels + file, {.batch = batch});
}

// The [low, high) RandomDataSource draws the integer input `name` from.
std::pair<int64_t, int64_t> DrawnRange(const Graph& g, const std::string& name) {
  exec::RandomDataSource data(g, {.seed = 1, .classes = 1000});
  for (const auto& in : data.inputs()) {
    if (in.name == name) return {in.low, in.high};
  }
  return {-1, -1};
}

TEST(OnnxLoss, MlpExportImportsWithTheLossFirstAndIntegerTargets) {
  auto g = Import("mlp_xent.onnx", 8);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->outputs().size(), 1u);
  const Tensor& loss = g->tensor(g->outputs()[0]);
  EXPECT_EQ(loss.name, "loss");
  EXPECT_EQ(loss.shape, Shape{});
  const Node* sce = OnlyNode(*g, OpKind::kSoftmaxCrossEntropy);
  ASSERT_NE(sce, nullptr);
  const auto& attrs = std::get<LossAttrs>(sce->attrs);
  EXPECT_EQ(attrs.reduction, Reduction::kMean);
  EXPECT_EQ(attrs.ignore_index, -1);  // PyTorch's -100: nothing to ignore among class ids
  EXPECT_EQ(Named(*g, "target").role, TensorRole::kInput);
  EXPECT_EQ(Named(*g, "target").dtype, DType::kI64);
  EXPECT_EQ(Named(*g, "target").shape, Shape{8});
  EXPECT_EQ(Named(*g, "x").role, TensorRole::kInput);
  for (const char* p : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
    EXPECT_EQ(Named(*g, p).role, TensorRole::kParameter) << p;
  }
  EXPECT_EQ(DrawnRange(*g, "target"), (std::pair<int64_t, int64_t>{0, 4}));
}

TEST(OnnxLoss, CnnTrainingExportKeepsBatchNormStateAndDrawsLabelsInRange) {
  auto g = Import("cnn_bn_nll.onnx", 4);  // BatchNormalization training_mode=1 (opset 14)
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensor(g->outputs()[0]).name, "loss");
  EXPECT_NE(OnlyNode(*g, OpKind::kBatchNorm), nullptr);
  EXPECT_EQ(Named(*g, "bn.running_mean").role, TensorRole::kConstant);
  EXPECT_EQ(Named(*g, "bn.weight").role, TensorRole::kParameter);
  EXPECT_EQ(DrawnRange(*g, "target"), (std::pair<int64_t, int64_t>{0, 3}));
}

TEST(OnnxLoss, LanguageModelTargetsAreReshapedLikeTheLogits) {
  auto g = Import("lstm_lm_xent.onnx", 3);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Named(*g, "target").shape, (Shape{3, 6}));
  EXPECT_EQ(Named(*g, "target").role, TensorRole::kInput);
  const Node* sce = OnlyNode(*g, OpKind::kSoftmaxCrossEntropy);
  ASSERT_NE(sce, nullptr);
  EXPECT_EQ(g->tensor(sce->inputs[0]).shape, (Shape{18, 12}));
  // The targets reach the loss through a Reshape: their range is still the logits' classes.
  EXPECT_EQ(DrawnRange(*g, "target"), (std::pair<int64_t, int64_t>{0, 12}));
  EXPECT_EQ(DrawnRange(*g, "tokens"), (std::pair<int64_t, int64_t>{0, 12}));
}

// log(softmax(x)) + nll_loss(reduction='sum') is SoftmaxCrossEntropy on the log-probabilities.
TEST(OnnxLoss, NllOfLogOfSoftmaxIsCrossEntropyOnTheLogProbabilities) {
  auto g = Import("nll_log_softmax_sum.onnx", 4);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* sce = OnlyNode(*g, OpKind::kSoftmaxCrossEntropy);
  ASSERT_NE(sce, nullptr);
  EXPECT_EQ(std::get<LossAttrs>(sce->attrs).reduction, Reduction::kSum);
  EXPECT_EQ(g->node(g->tensor(sce->inputs[0]).producer).kind, OpKind::kLog);
  EXPECT_EQ(g->tensor(g->outputs()[0]).name, "loss");
}

// LogSoftmax(axis 1) + NegativeLogLikelihoodLoss with ignore_index, built by hand (PyTorch
// fuses this pair into SoftmaxCrossEntropyLoss itself).
TEST(OnnxLoss, LogSoftmaxAndNllWithIgnoreIndexBecomeOneCrossEntropy) {
  OnnxModel m(13);
  m.Input("x", {4, 5, 3});
  m.Input("labels", {4, 3}, onnx::TensorProto::INT64);
  OnnxModel::AttrInt(m.Node("LogSoftmax", {"x"}, {"lp"}), "axis", 1);
  auto& nll = m.Node("NegativeLogLikelihoodLoss", {"lp", "labels"}, {"loss"}, "/nll");
  OnnxModel::AttrInt(nll, "ignore_index", 0);
  OnnxModel::AttrString(nll, "reduction", "none");
  m.Output("loss");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* sce = OnlyNode(*g, OpKind::kSoftmaxCrossEntropy);
  ASSERT_NE(sce, nullptr);
  EXPECT_EQ(std::get<LossAttrs>(sce->attrs).ignore_index, 0);
  EXPECT_EQ(std::get<LossAttrs>(sce->attrs).reduction, Reduction::kNone);
  EXPECT_EQ(g->tensor(sce->inputs[0]).name, "lp");
  EXPECT_EQ(Named(*g, "loss").shape, (Shape{4, 3}));
}

// The optional log_prob output is a LogSoftmax over the classes; the loss is the first graph
// output even when the file lists it second.
TEST(OnnxLoss, LogProbOutputAndLossListedFirst) {
  OnnxModel m(13);
  m.Input("x", {2, 4});
  m.Input("labels", {2}, onnx::TensorProto::INT64);
  m.Node("SoftmaxCrossEntropyLoss", {"x", "labels"}, {"loss", "log_prob"}, "/sce");
  m.Output("log_prob");
  m.Output("loss");
  auto g = m.Import();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->tensor(g->outputs()[0]).name, "loss");
  EXPECT_EQ(g->tensor(g->outputs()[1]).name, "log_prob");
  const Node& lp = g->node(Named(*g, "log_prob").producer);
  EXPECT_EQ(lp.kind, OpKind::kLogSoftmax);
  EXPECT_EQ(std::get<AxisAttrs>(lp.attrs).axis, 1);
}

// nll_loss on scores that are not log-probabilities: -mean(score[label]), NLL's gradient.
TEST(OnnxLoss, NllOfScoresHasNllsValueAndGradient) {
  auto g = Import("nll_scores.onnx", 3);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(DrawnRange(*g, "target"), (std::pair<int64_t, int64_t>{0, 4}));
  auto p = exec::TrainingProgram::Create(*g, {.seed = 1, .threads = 1});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<float> x(24), w(32), b = {0.5f, -1.f, 2.f, 0.25f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(1.3f * static_cast<float>(i));
  const std::vector<int64_t> labels = {2, 0, 3};
  ASSERT_TRUE((*p)->SetPersistentValue("fc.weight", w).ok());
  ASSERT_TRUE((*p)->SetPersistentValue("fc.bias", b).ok());
  ASSERT_TRUE((*p)->SetInput("x", x).ok());
  ASSERT_TRUE((*p)->SetInput("target", labels).ok());
  ASSERT_TRUE((*p)->RunStep().ok());
  double want = 0;  // -mean over samples of (x W^T + b)[label]
  for (int n = 0; n < 3; ++n) {
    double score = b[labels[n]];
    for (int k = 0; k < 8; ++k) score += x[n * 8 + k] * w[labels[n] * 8 + k];
    want -= score / 3;
  }
  EXPECT_NEAR((*p)->Loss(), want, 1e-5 * (1 + std::abs(want)));
  for (const auto& param : (*p)->parameters()) {
    if (param.name != "fc.bias") continue;
    for (int c = 0; c < 4; ++c) {  // d loss / d b_c = -(count of label c) / 3
      double count = 0;
      for (int64_t l : labels) count += l == c;
      EXPECT_NEAR(param.grad[c], -count / 3, 1e-6) << "class " << c;
    }
  }
}

TEST(OnnxLoss, ClassWeightsAreRefusedNamingTheNode) {
  auto g = Import("xent_weighted.onnx");
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_NE(msg.find("xent_weighted.onnx: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("(SoftmaxCrossEntropyLoss)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("class weights"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'class_weight'"), std::string::npos) << msg;
}

// A two-input loss node with one attribute or input changed from a valid one.
absl::Status ImportLoss(const std::string& op, int scores_type, int labels_type,
                        const std::string& reduction, int64_t ignore_index) {
  OnnxModel m(13);
  m.Input("x", {2, 4}, scores_type);
  m.Input("labels", {2}, labels_type);
  auto& n = m.Node(op, {"x", "labels"}, {"loss"}, "/the_loss");
  OnnxModel::AttrString(n, "reduction", reduction);
  OnnxModel::AttrInt(n, "ignore_index", ignore_index);
  m.Output("loss");
  return m.Import().status();
}

TEST(OnnxLoss, BadLossNodesAreRefusedNamingNodeAndValue) {
  const int f = onnx::TensorProto::FLOAT, i64 = onnx::TensorProto::INT64;
  struct Case {
    absl::Status status;
    const char* says;
  } cases[] = {
      {ImportLoss("SoftmaxCrossEntropyLoss", f, i64, "average", -100), "'reduction'"},
      {ImportLoss("SoftmaxCrossEntropyLoss", f, f, "mean", -100), "integer class ids"},
      {ImportLoss("NegativeLogLikelihoodLoss", i64, i64, "mean", -100), "floating scores"},
      {ImportLoss("NegativeLogLikelihoodLoss", f, i64, "mean", 1), "ignore_index 1"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.status.ok()) << c.says;
    const std::string msg(c.status.message());
    EXPECT_NE(msg.find("node '/the_loss'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
  }
  EXPECT_TRUE(ImportLoss("NegativeLogLikelihoodLoss", f, i64, "sum", -100).ok());
}

}  // namespace
}  // namespace tessera::graph
