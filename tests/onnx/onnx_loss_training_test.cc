// PyTorch training exports with their loss (tests/models/export_training_models.py) train as
// they are: through exec::TrainingProgram and exec::Optimizer each learns a task whose labels
// are a fixed function of its inputs (the loss falls over 100 SGD steps), step for step equal
// (1e-5 relative) to the same layers built with GraphBuilder and given the same parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tessera/exec/optimizer.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph {
namespace {

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";
constexpr int kSteps = 100;

using Values = std::map<std::string, std::vector<float>>;  // by tensor name
// One step's data inputs: floats and integers by input name.
struct StepData {
  std::map<std::string, std::vector<float>> floats;
  std::map<std::string, std::vector<int64_t>> ints;
};
using DataFn = std::function<StepData(int step)>;

std::vector<float> Random(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Losses of kSteps SGD steps of `g` from `params` (every parameter, by name) on `data`.
std::vector<float> Train(const Graph& g, const Values& params, const DataFn& data, double lr) {
  auto p = exec::TrainingProgram::Create(g, {.seed = 1, .threads = 1});
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  EXPECT_EQ((*p)->parameters().size(), params.size()) << g.name();
  for (const auto& [name, values] : params) {
    EXPECT_TRUE((*p)->SetPersistentValue(name, values).ok()) << g.name() << ": " << name;
  }
  exec::Optimizer opt({.kind = exec::OptimizerKind::kSgd}, (*p)->backend());
  std::vector<float> losses;
  for (int step = 0; step < kSteps; ++step) {
    const StepData d = data(step);
    for (const auto& [name, v] : d.floats) EXPECT_TRUE((*p)->SetInput(name, v).ok()) << name;
    for (const auto& [name, v] : d.ints) EXPECT_TRUE((*p)->SetInput(name, v).ok()) << name;
    const absl::Status s = (*p)->RunStep();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    losses.push_back((*p)->Loss());
    EXPECT_TRUE(opt.Apply((*p)->parameters(), lr).ok());
  }
  return losses;
}

double Mean(const std::vector<float>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

// The ONNX model and the builder model train alike, and learn.
void ExpectSameLearning(const std::vector<float>& onnx, const std::vector<float>& built) {
  ASSERT_EQ(onnx.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(built.size(), static_cast<size_t>(kSteps));
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(onnx[s], built[s], 1e-5 * std::max(std::abs(built[s]), 1e-3f)) << "step " << s;
  }
  EXPECT_LT(Mean(onnx, kSteps - 10, kSteps), 0.6 * Mean(onnx, 0, 10))
      << "first " << onnx.front() << " last " << onnx.back();
}

// ----- (a) MLP with cross-entropy: label = sign pattern of x0 and x1 --------------------------

StepData MlpData(int step, int64_t batch) {
  StepData d;
  std::vector<float> x = Random(batch * 8, 1.f, 100 + step);
  std::vector<int64_t> labels(batch);
  for (int64_t n = 0; n < batch; ++n) labels[n] = (x[n * 8] > 0) + 2 * (x[n * 8 + 1] > 0);
  d.floats["x"] = std::move(x);
  d.ints["target"] = std::move(labels);
  return d;
}

TEST(OnnxLossTraining, MlpCrossEntropyTrainsLikeTheBuilderModel) {
  constexpr int64_t kBatch = 16;
  auto onnx = ImportOnnxFile(kModels + "mlp_xent.onnx", {.batch = kBatch});
  ASSERT_TRUE(onnx.ok()) << onnx.status();
  GraphBuilder b("mlp");
  Value x = b.Input("x", {kBatch, 8});
  Value target = b.Input("target", {kBatch}, DType::kI64);
  Value logits = b.Linear(b.Linear(x, 16, "fc1").Relu("relu"), 4, "fc2");
  b.Output(b.SoftmaxCrossEntropy(logits, target, "loss"));
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status();
  const Values params = {{"fc1.weight", Random(128, 0.35f, 1)}, {"fc1.bias", Random(16, 0.1f, 2)},
                         {"fc2.weight", Random(64, 0.25f, 3)}, {"fc2.bias", Random(4, 0.1f, 4)}};
  const DataFn data = [&](int step) { return MlpData(step, kBatch); };
  ExpectSameLearning(Train(*onnx, params, data, 0.2), Train(*built, params, data, 0.2));
}

// ----- (b) CNN with batch norm, log_softmax + nll_loss: label = brightest third of the rows ---

StepData CnnData(int step, int64_t batch) {
  StepData d;
  std::vector<float> x = Random(batch * 64, 1.f, 200 + step);
  std::vector<int64_t> labels(batch);
  for (int64_t n = 0; n < batch; ++n) {
    double band[3] = {0, 0, 0};
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) band[std::min(r / 3, 2)] += x[n * 64 + r * 8 + c];
    }
    labels[n] = std::max_element(band, band + 3) - band;
  }
  d.floats["x"] = std::move(x);
  d.ints["target"] = std::move(labels);
  return d;
}

TEST(OnnxLossTraining, CnnWithBatchNormAndNllTrainsLikeTheBuilderModel) {
  constexpr int64_t kBatch = 16;
  auto onnx = ImportOnnxFile(kModels + "cnn_bn_nll.onnx", {.batch = kBatch});
  ASSERT_TRUE(onnx.ok()) << onnx.status();
  GraphBuilder b("cnn");
  Value x = b.Input("x", {kBatch, 1, 8, 8});
  Value target = b.Input("target", {kBatch}, DType::kI64);
  Value h = b.BatchNorm2d(b.Conv2d(x, 4, 3, "conv", {.padding = 1}), "bn").Relu("relu");
  h = b.MaxPool2d(h, 2, "pool").Flatten(1, "flatten");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 3, "fc"), target, "loss"));
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status();
  std::vector<float> ones(4, 1.f);
  const Values params = {{"conv.weight", Random(36, 0.3f, 1)}, {"conv.bias", Random(4, 0.1f, 2)},
                         {"bn.weight", ones},                  {"bn.bias", Random(4, 0.1f, 3)},
                         {"fc.weight", Random(192, 0.2f, 4)},  {"fc.bias", Random(3, 0.1f, 5)}};
  const DataFn data = [&](int step) { return CnnData(step, kBatch); };
  ExpectSameLearning(Train(*onnx, params, data, 0.1), Train(*built, params, data, 0.1));
}

// ----- (c) LSTM language model, cross-entropy over the reshaped sequence: next = token + 1 ----

StepData LmData(int step, int64_t batch) {
  std::mt19937 rng(300 + step);
  StepData d;
  std::vector<int64_t> tokens(batch * 6), target(batch * 6);
  for (size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<int64_t>(rng() % 12);
    target[i] = (tokens[i] + 1) % 12;
  }
  d.ints["tokens"] = std::move(tokens);
  d.ints["target"] = std::move(target);
  return d;
}

// PyTorch's LSTM gate blocks (i, f, g, o) in ONNX's order (i, o, f, c), as the export's Slices
// and Concat arrange them; `rows` values per gate block of hidden size 16.
std::vector<float> OnnxGateOrder(const std::vector<float>& torch, size_t per_gate) {
  std::vector<float> out;
  for (int gate : {0, 3, 1, 2}) {
    out.insert(out.end(), torch.begin() + gate * per_gate, torch.begin() + (gate + 1) * per_gate);
  }
  return out;
}

TEST(OnnxLossTraining, LstmLanguageModelTrainsLikeTheBuilderModel) {
  constexpr int64_t kBatch = 8;
  auto onnx = ImportOnnxFile(kModels + "lstm_lm_xent.onnx", {.batch = kBatch});
  ASSERT_TRUE(onnx.ok()) << onnx.status();
  GraphBuilder b("lm");
  Value tokens = b.Input("tokens", {kBatch, 6}, DType::kI64);
  Value target = b.Input("target", {kBatch, 6}, DType::kI64);
  Value e = b.Embedding(tokens, 12, 8, "emb").Transpose({1, 0, 2}, "to_time_major");
  Value h = b.Lstm(e, 16, "lstm").Transpose({1, 0, 2}, "to_batch_major");
  Value logits = b.Linear(h, 12, "out").Reshape({-1, 12}, "flat_logits");
  b.Output(b.SoftmaxCrossEntropy(logits, target.Reshape({-1}, "flat_target"), "loss"));
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status();
  const Values torch = {{"emb.weight", Random(96, 0.5f, 1)},
                        {"lstm.weight_ih_l0", Random(512, 0.25f, 2)},
                        {"lstm.weight_hh_l0", Random(1024, 0.25f, 3)},
                        {"lstm.bias_ih_l0", Random(64, 0.1f, 4)},
                        {"lstm.bias_hh_l0", Random(64, 0.1f, 5)},
                        {"out.weight", Random(192, 0.25f, 6)},
                        {"out.bias", Random(12, 0.1f, 7)}};
  std::vector<float> bias = OnnxGateOrder(torch.at("lstm.bias_ih_l0"), 16);
  const std::vector<float> bias_hh = OnnxGateOrder(torch.at("lstm.bias_hh_l0"), 16);
  bias.insert(bias.end(), bias_hh.begin(), bias_hh.end());
  const Values tessera = {{"emb.weight", torch.at("emb.weight")},
                          {"lstm.weight_ih", OnnxGateOrder(torch.at("lstm.weight_ih_l0"), 16 * 8)},
                          {"lstm.weight_hh", OnnxGateOrder(torch.at("lstm.weight_hh_l0"), 16 * 16)},
                          {"lstm.bias", bias},
                          {"out.weight", torch.at("out.weight")},
                          {"out.bias", torch.at("out.bias")}};
  const DataFn data = [&](int step) { return LmData(step, kBatch); };
  // Parameters differ in layout (PyTorch's, derived by the export's Slices), so compare the
  // losses, which follow from all of them.
  ExpectSameLearning(Train(*onnx, torch, data, 0.5), Train(*built, tessera, data, 0.5));
}

// A static export's zero initial LSTM states (torch.zeros(1, b0, hidden), a ConstantOfShape)
// follow graph::SetBatch, as each worker's shard of the batch needs; states that are not one
// value throughout still refuse, naming the LSTM.
TEST(OnnxLossTraining, UniformLstmStatesFollowSetBatch) {
  auto onnx = ImportOnnxFile(kModels + "lstm_lm_xent.onnx", {.batch = 8});
  ASSERT_TRUE(onnx.ok()) << onnx.status();
  Graph g = *onnx;
  ASSERT_TRUE(SetBatch(g, 4).ok()) << SetBatch(g, 4);
  const Node* lstm = nullptr;
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kLstm) lstm = &n;
  }
  ASSERT_NE(lstm, nullptr);
  EXPECT_EQ(g.tensor(lstm->inputs[5]).shape, (Shape{1, 4, 16}));
  EXPECT_EQ(g.tensor(lstm->inputs[6]).shape, (Shape{1, 4, 16}));
  Graph varied = *onnx;
  const TensorId state = varied.nodes()[lstm - g.nodes().data()].inputs[5];
  varied.mutable_tensor(state).data = {0.0, 1.0};
  const absl::Status refused = SetBatch(varied, 4);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("LSTM"), std::string::npos) << refused;
}

}  // namespace
}  // namespace tessera::graph
