// SoftmaxCrossEntropy over logits split along the classes (the vocabulary-parallel loss): each
// rank holds every row's logits for its block of classes, and the labels whole.
//
//   VocabParallelLoss loss;
//   auto reduce = [&](std::vector<float>& v, comm::ReduceOp op) { return comm.AllReduce(v, op); };
//   TS_RETURN_IF_ERROR(loss.Forward(node, logits, labels, rank, ranks, reduce, &y));
//   TS_RETURN_IF_ERROR(loss.Backward(node, dy, dlogits));
//
// Forward: the rows' max over the rank's classes, all-reduced (max); the sums of exp(x - max),
// all-reduced (sum); lse = max + log(sum). Each rank adds lse - x[label] over the rows whose
// label is one of its classes, so the ranks' values add up to the loss (mean: divided by the
// count of labels that are not ignored, which every rank knows from the whole labels).
// Backward (no communication): dx = g (exp(x - lse) - onehot(label)) over the rank's classes,
// g the upstream gradient (over the count for mean), 0 on rows whose label is ignored.
#pragma once

#include <functional>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

class VocabParallelLoss {
 public:
  using AllReduce = std::function<absl::Status(std::vector<float>&, comm::ReduceOp)>;
  // logits [rows, classes / ranks] (block `rank` of the classes), labels [rows] (int32 or
  // int64). InvalidArgument naming the node for a label that is not a class.
  absl::Status Forward(const graph::Node& node, const cpu::Tensor<float>& logits,
                       const cpu::Tensor<float>& labels, int rank, int ranks,
                       const AllReduce& reduce, float* loss);
  // dy: the upstream gradient of the loss (null: zero); dlogits as logits.
  absl::Status Backward(const graph::Node& node, const float* dy,
                        const cpu::Tensor<float>& dlogits) const;

 private:
  // exp(x - lse), [rows, classes / P]. On a 64-byte boundary: the vectorised exp computes a
  // row's unaligned head in scalar code, so the results' last bits follow the address; with
  // the same alignment in every process, a resumed run repeats an uninterrupted one's bits.
  std::vector<float, Eigen::aligned_allocator<float>> prob_;
  std::vector<int64_t> local_;  // per row: the label's column here; -1 elsewhere; -2 ignored
  double count_ = 0;            // labels not ignored, over the whole batch
};

}  // namespace tessera::exec
