// `tessera train MODEL.onnx` on PyTorch exports (tests/models/export_training_models.py): an
// export with its loss trains as it is; --loss cross-entropy|ctc --target NAME attaches a loss
// to an export that ends in logits (graph/attach_loss.h); misuse exits 2 saying what to do.
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/graph/attach_loss.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/tools/train_command.h"

#include "command_runner.h"

namespace tessera::tools {
namespace {

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";

CommandResult Train(const std::string& file, const std::vector<std::string>& more) {
  std::vector<std::string> args = {kModels + file, "--workers", "1",       "--steps",
                                   "3",            "--batch",   "4",       "--cluster",
                                   "v100-vpc32",   "--quiet",   "--threads", "1"};
  args.insert(args.end(), more.begin(), more.end());
  return RunCommand(RunTrain, args);
}

TEST(TrainOnnxLossTest, ExportsWithTheirLossTrainAsTheyAre) {
  for (const char* file : {"mlp_xent.onnx", "cnn_bn_nll.onnx", "lstm_lm_xent.onnx",
                           "nll_log_softmax_sum.onnx", "nll_scores.onnx"}) {
    CommandResult r = Train(file, {});
    EXPECT_EQ(r.code, 0) << file << ": " << r.err;
    EXPECT_NE(r.out.find("final loss "), std::string::npos) << file << ": " << r.out;
  }
}

TEST(TrainOnnxLossTest, AttachesCrossEntropyAndCtcToLogits) {
  CommandResult xent = Train("mlp_logits.onnx", {"--loss", "cross-entropy", "--target", "y"});
  EXPECT_EQ(xent.code, 0) << xent.err;
  EXPECT_NE(xent.out.find("final loss "), std::string::npos) << xent.out;
  CommandResult ctc = Train("ctc_logits.onnx", {"--loss", "ctc", "--target", "labels"});
  EXPECT_EQ(ctc.code, 0) << ctc.err;
  EXPECT_NE(ctc.out.find("final loss "), std::string::npos) << ctc.out;
}

TEST(TrainOnnxLossTest, MisuseExitsTwoSayingWhatToDo) {
  struct Case {
    std::string file;
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {"mlp_xent.onnx", {"--loss", "cross-entropy"}, "already has a loss (node '/SoftmaxCrossEntropyLoss' (SoftmaxCrossEntropy))"},
      {"mlp_logits.onnx", {"--loss", "cross-entropy", "--target", "x"},
       "'x' already names a tensor of the model (role: input)"},
      {"mlp_logits.onnx", {"--loss", "ctc"}, "not logits [T, N, C]"},
      {"mlp_logits.onnx", {"--target", "y"}, "--target names the target input that --loss adds"},
  };
  for (const Case& c : cases) {
    CommandResult r = Train(c.file, c.args);
    EXPECT_EQ(r.code, 2) << c.file << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  CommandResult bad = Train("mlp_logits.onnx", {"--loss", "hinge"});
  EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST(TrainOnnxLossTest, AttachLossShapesTheTargetsFromTheLogits) {
  auto g = graph::ImportOnnxFile(kModels + "ctc_logits.onnx", {.batch = 3});
  ASSERT_TRUE(g.ok()) << g.status();
  auto ctc = graph::AttachLoss(*g, {.kind = graph::AttachedLoss::kCtc, .target = "t"});
  ASSERT_TRUE(ctc.ok()) << ctc.status();
  const auto shape = [&](const graph::Graph& h, const char* name) {
    return h.tensor(*h.FindTensor(name)).shape;
  };
  EXPECT_EQ(shape(*ctc, "t"), (graph::Shape{3, 4}));  // [N, T / 2], T = 8
  EXPECT_EQ(shape(*ctc, "t_input_lengths"), graph::Shape{3});
  EXPECT_EQ(shape(*ctc, "t_target_lengths"), graph::Shape{3});
  const graph::Tensor& loss = ctc->tensor(ctc->outputs()[0]);
  EXPECT_EQ(loss.shape, graph::Shape{});
  EXPECT_EQ(ctc->node(loss.producer).kind, graph::OpKind::kCtcLoss);
  EXPECT_EQ(ctc->tensor(ctc->outputs()[1]).name, "logits");  // the old outputs follow
  EXPECT_NE(graph::ExistingLoss(*ctc), "");

  auto mlp = graph::ImportOnnxFile(kModels + "mlp_logits.onnx", {.batch = 5});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_EQ(graph::ExistingLoss(*mlp), "");
  auto xent = graph::AttachLoss(*mlp, {.target = "labels"});
  ASSERT_TRUE(xent.ok()) << xent.status();
  EXPECT_EQ(shape(*xent, "labels"), graph::Shape{5});
  EXPECT_EQ(xent->tensor(*xent->FindTensor("labels")).role, graph::TensorRole::kInput);
  EXPECT_EQ(xent->node(xent->tensor(xent->outputs()[0]).producer).kind,
            graph::OpKind::kSoftmaxCrossEntropy);
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_CALIBRATE_COMMAND
