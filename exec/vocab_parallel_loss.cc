// The vocabulary-parallel SoftmaxCrossEntropy (vocab_parallel_loss.h).
#include "tessera/exec/vocab_parallel_loss.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::exec {
namespace {

using Row = Eigen::Map<Eigen::ArrayXf>;
using ConstRow = Eigen::Map<const Eigen::ArrayXf>;

constexpr int64_t kIgnored = -2, kElsewhere = -1;  // VocabParallelLoss::local_ of a row

}  // namespace

absl::Status VocabParallelLoss::Forward(const graph::Node& node, const cpu::Tensor<float>& logits,
                                        const cpu::Tensor<float>& labels, int rank,
                                        int ranks, const AllReduce& reduce, float* loss) {
  const auto& attrs = std::get<graph::LossAttrs>(node.attrs);
  const int64_t rows = logits.shape[0], cols = logits.shape[1];
  const int64_t begin = rank * cols;
  std::vector<float> max(rows), sum(rows);
  for (int64_t i = 0; i < rows; ++i) max[i] = ConstRow(logits.data + i * cols, cols).maxCoeff();
  TS_RETURN_IF_ERROR(reduce(max, comm::ReduceOp::kMax));
  prob_.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    Row p(prob_.data() + i * cols, cols);
    p = (ConstRow(logits.data + i * cols, cols) - max[i]).exp();
    sum[i] = p.sum();
  }
  TS_RETURN_IF_ERROR(reduce(sum, comm::ReduceOp::kSum));
  local_.assign(rows, kIgnored);
  count_ = 0;
  double total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    Row(prob_.data() + i * cols, cols) *= 1.f / sum[i];
    const int64_t label = labels.index(i);
    if (attrs.ignore_index >= 0 && label == attrs.ignore_index) continue;
    if (label < 0 || label >= cols * ranks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name, "' (SoftmaxCrossEntropy): label ", label, " at position ", i,
          " is not a class in [0, ", cols * ranks, "); check the labels against the number of "
          "classes"));
    }
    ++count_;
    local_[i] = label >= begin && label < begin + cols ? label - begin : kElsewhere;
    if (local_[i] < 0) continue;
    total += max[i] + std::log(sum[i]) - logits.data[i * cols + local_[i]];
  }
  if (attrs.reduction == graph::Reduction::kMean) total = count_ > 0 ? total / count_ : 0.0;
  *loss = static_cast<float>(total);
  return absl::OkStatus();
}

absl::Status VocabParallelLoss::Backward(const graph::Node& node, const float* dy,
                                         const cpu::Tensor<float>& dlogits) const {
  if (!dlogits.present()) return absl::OkStatus();
  const auto& attrs = std::get<graph::LossAttrs>(node.attrs);
  const int64_t rows = dlogits.shape[0], cols = dlogits.shape[1];
  if (dy == nullptr) {
    std::fill(dlogits.data, dlogits.data + rows * cols, 0.f);
    return absl::OkStatus();
  }
  double g = dy[0];
  if (attrs.reduction == graph::Reduction::kMean) g = count_ > 0 ? g / count_ : 0.0;
  const float scale = static_cast<float>(g);
  for (int64_t i = 0; i < rows; ++i) {
    Row d(dlogits.data + i * cols, cols);
    if (local_[i] == kIgnored) {
      d.setZero();
      continue;
    }
    d = ConstRow(prob_.data() + i * cols, cols) * scale;
    if (local_[i] >= 0) d[local_[i]] -= scale;
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
