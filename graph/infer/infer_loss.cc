// Shape inference: losses.
#include "absl/strings/str_cat.h"
#include "tessera/graph/infer/infer_impl.h"

namespace tessera::graph::infer {
namespace {

bool IsIndex(DType d) { return d == DType::kI32 || d == DType::kI64; }

Shape ReducedLoss(Reduction reduction, const Shape& per_sample) {
  return reduction == Reduction::kNone ? per_sample : Shape{};
}

}  // namespace

Result InferSoftmaxCrossEntropy(const InferContext& c) {
  // logits [N, C, d1...], labels [N, d1...] as in ONNX SoftmaxCrossEntropyLoss.
  const Shape& logits = c.shape(0);
  if (logits.size() < 2) return c.Error("logits must be [N, C, ...]");
  Shape labels = logits;
  labels.erase(labels.begin() + 1);
  if (c.shape(1) != labels) {
    return c.Error(absl::StrCat("labels must be ", ShapeString(labels),
                                " (logits without the class axis 1)"));
  }
  if (!IsIndex(c.dtype(1))) return c.Error("labels must be i32 or i64");
  return One(ReducedLoss(c.attrs<LossAttrs>().reduction, labels), c.dtype(0));
}

Result InferCtcLoss(const InferContext& c) {
  // log_probs [T, N, C], targets [N, S], input_lengths [N], target_lengths [N].
  if (c.rank(0) != 3) return c.Error("log_probs must be [T, N, C]");
  const int64_t n = c.shape(0)[1];
  const int64_t classes = c.shape(0)[2];
  if (c.rank(1) != 2 || c.shape(1)[0] != n) {
    return c.Error(absl::StrCat("targets must be [", n, ", S]"));
  }
  if (c.shape(2) != Shape{n} || c.shape(3) != Shape{n}) {
    return c.Error(absl::StrCat("input_lengths and target_lengths must be [", n, "]"));
  }
  for (int i = 1; i <= 3; ++i) {
    if (!IsIndex(c.dtype(i))) return c.Error("targets and lengths must be i32 or i64");
  }
  const int64_t blank = c.attrs<LossAttrs>().blank;
  if (blank < 0 || blank >= classes) {
    return c.Error(absl::StrCat("blank ", blank, " is not a class in [0, ", classes, ")"));
  }
  return One(ReducedLoss(c.attrs<LossAttrs>().reduction, {n}), c.dtype(0));
}

}  // namespace tessera::graph::infer
