// ONNX -> IR: the loss ops of training exports (torch.onnx.export(...,
// training=TrainingMode.TRAINING) with the loss inside the model).
//
// SoftmaxCrossEntropyLoss(scores[N, C, d...], labels[N, d...]) -> loss, log_prob?
//   becomes SoftmaxCrossEntropy; the optional log_prob output a LogSoftmax over axis 1.
// NegativeLogLikelihoodLoss(input[N, C, d...], target[N, d...]) -> loss
//   - input already log-probabilities over axis 1 (LogSoftmax, or Log of a Softmax): the same
//     SoftmaxCrossEntropy on the log-probabilities. Exact: their log-sum-exp is 0, and the
//     gradient differs from NLL's by exp(input) = softmax, which the LogSoftmax's (or
//     Log(Softmax)'s) backward maps to 0.
//   - any other input x: NLL = SCE(x) - logsumexp(x), per position, with
//     logsumexp(x) = mean over classes of (x - LogSoftmax(x)); then the reduction. Its
//     gradient is SCE's (softmax - onehot) minus logsumexp's (softmax): -onehot, NLL's.
// Both: reduction mean|sum|none; ignore_index >= 0 as Tessera's; a negative ignore_index
// (PyTorch's -100) means no class is ignored, and a negative label is refused at run time by
// the loss kernel. Class weights (input 2) are refused: Tessera's loss weighs classes equally.
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/translate.h"

namespace tessera::graph::onnx_import {
namespace {

absl::StatusOr<Reduction> ReadReduction(const NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(const std::string r, c.attrs().String("reduction", "mean"));
  if (r == "mean") return Reduction::kMean;
  if (r == "sum") return Reduction::kSum;
  if (r == "none") return Reduction::kNone;
  return c.attrs().Error("reduction", absl::StrCat("is '", r, "'; expected mean, sum or none"));
}

// The loss attributes of either op, after checking its inputs.
absl::StatusOr<LossAttrs> ReadLoss(const NodeCtx& c) {
  if (!c.has_input(0) || !c.has_input(1)) return c.Error("needs the scores and the labels");
  if (!c.has_output(0)) return c.Error("needs output 0, the loss");
  if (c.has_input(2)) {
    return c.Error(absl::StrCat(
        "input 2 ('", c.proto().input(2), "') gives class weights, which Tessera's "
        "SoftmaxCrossEntropy does not take (it weighs every class the same); export the loss "
        "without weight=, or attach it with `tessera train MODEL --loss cross-entropy`"));
  }
  if (c.shape(0).size() < 2 || !IsFloating(c.dtype(0))) {
    return c.Error(absl::StrCat("input 0 ('", c.proto().input(0), "') must be floating scores "
                                "[N, C, ...]; it is ", ShapeString(c.shape(0)), " ",
                                DTypeName(c.dtype(0))));
  }
  if (c.dtype(1) != DType::kI32 && c.dtype(1) != DType::kI64) {
    return c.Error(absl::StrCat("input 1 ('", c.proto().input(1), "') must hold integer class "
                                "ids (int32 or int64); it is ", DTypeName(c.dtype(1))));
  }
  LossAttrs a;
  TS_ASSIGN_OR_RETURN(a.reduction, ReadReduction(c));
  TS_ASSIGN_OR_RETURN(const int64_t ignore, c.attrs().Int("ignore_index", -1));
  a.ignore_index = ignore >= 0 ? ignore : -1;
  return a;
}

absl::Status MarkLoss(NodeCtx& c) {
  c.importer().MarkLoss(c.proto().output(0));
  return absl::OkStatus();
}

absl::Status SoftmaxCrossEntropyLoss(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(const LossAttrs a, ReadLoss(c));
  TS_ASSIGN_OR_RETURN(TensorId scores, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId labels, c.Tensor(1));
  TS_RETURN_IF_ERROR(c.EmitOutput(OpKind::kSoftmaxCrossEntropy, {scores, labels}, a, 0, ""));
  if (c.has_output(1)) {
    TS_RETURN_IF_ERROR(c.EmitOutput(OpKind::kLogSoftmax, {scores}, AxisAttrs{1}, 1, "log_prob"));
  }
  return MarkLoss(c);
}

bool IsSoftmaxOverClasses(const Graph& g, TensorId t, OpKind kind) {
  const NodeId p = g.tensor(t).producer;
  if (p == kNoNode || g.node(p).kind != kind) return false;
  const auto* axis = std::get_if<AxisAttrs>(&g.node(p).attrs);
  return axis != nullptr && axis->axis == 1;
}

// `t` holds log-probabilities over axis 1: LogSoftmax(axis 1), or Log(Softmax(axis 1)).
bool IsLogProbabilities(const Graph& g, TensorId t) {
  if (IsSoftmaxOverClasses(g, t, OpKind::kLogSoftmax)) return true;
  const NodeId p = g.tensor(t).producer;
  return p != kNoNode && g.node(p).kind == OpKind::kLog &&
         IsSoftmaxOverClasses(g, g.node(p).inputs[0], OpKind::kSoftmax);
}

// NLL of scores that are not known log-probabilities: SCE(x) - logsumexp(x) per position.
absl::Status GeneralNll(NodeCtx& c, TensorId x, TensorId labels, const LossAttrs& a) {
  if (a.ignore_index >= 0) {
    return c.Error(absl::StrCat(
        "ignore_index ", a.ignore_index, " is supported only when input 0 ('",
        c.proto().input(0), "') is log-probabilities (LogSoftmax, or Log of Softmax, over axis "
        "1); export log_softmax + nll_loss, or cross_entropy"));
  }
  LossAttrs per_position = a;
  per_position.reduction = Reduction::kNone;
  TS_ASSIGN_OR_RETURN(TensorId sce, c.EmitTemp(OpKind::kSoftmaxCrossEntropy, {x, labels},
                                               per_position, "cross_entropy"));
  TS_ASSIGN_OR_RETURN(TensorId log_p,
                      c.EmitTemp(OpKind::kLogSoftmax, {x}, AxisAttrs{1}, "log_softmax"));
  TS_ASSIGN_OR_RETURN(TensorId lse_each,
                      c.EmitTemp(OpKind::kSub, {x, log_p}, std::monostate{}, "lse_per_class"));
  TS_ASSIGN_OR_RETURN(TensorId lse, c.EmitTemp(OpKind::kReduceMean, {lse_each},
                                               AxesAttrs{.axes = {1}, .keepdims = false},
                                               "log_sum_exp"));
  if (a.reduction == Reduction::kNone) {
    return c.EmitOutput(OpKind::kSub, {sce, lse}, std::monostate{}, 0, "");
  }
  TS_ASSIGN_OR_RETURN(TensorId nll,
                      c.EmitTemp(OpKind::kSub, {sce, lse}, std::monostate{}, "per_position"));
  const OpKind reduce = a.reduction == Reduction::kSum ? OpKind::kReduceSum : OpKind::kReduceMean;
  return c.EmitOutput(reduce, {nll}, AxesAttrs{.axes = {}, .keepdims = false}, 0, "");
}

absl::Status NegativeLogLikelihoodLoss(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(const LossAttrs a, ReadLoss(c));
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId labels, c.Tensor(1));
  if (IsLogProbabilities(c.importer().graph(), x)) {
    TS_RETURN_IF_ERROR(c.EmitOutput(OpKind::kSoftmaxCrossEntropy, {x, labels}, a, 0, ""));
  } else {
    TS_RETURN_IF_ERROR(GeneralNll(c, x, labels, a));
  }
  return MarkLoss(c);
}

}  // namespace

std::vector<Translation> LossTranslations() {
  return {{"SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss},
          {"NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss}};
}

}  // namespace tessera::graph::onnx_import
