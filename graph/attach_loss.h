// Attaching a training loss to a graph that ends in logits, e.g. an ONNX export of a model
// without its loss (what `tessera train MODEL.onnx --loss ... --target NAME` does).
//
//   TS_ASSIGN_OR_RETURN(Graph g, ImportOnnxFile("classifier.onnx"));
//   TS_ASSIGN_OR_RETURN(g, AttachLoss(g, {.kind = AttachedLoss::kCrossEntropy,
//                                         .target = "labels"}));
//   g.outputs()[0];   // the loss; the old outputs follow it
//
// The logits are the graph's first output.
// - kCrossEntropy: SoftmaxCrossEntropy(logits [N, C, d...], target [N, d...]), mean over the
//   positions; the classes are on axis 1 (the ONNX convention: a classifier's [N, C], a
//   sequence model's [N, C, T]); the new integer (int64) data input `target` holds class ids.
// - kCtc: CtcLoss over logits [T, N, C] (time-major, blank 0, mean as PyTorch's), after a
//   LogSoftmax over C unless the logits already come out of one; new int64 data inputs
//   `target` [N, S] with S = max(1, T / 2) (so that any labelling fits T frames),
//   `target`_input_lengths [N] and `target`_target_lengths [N].
// Errors (InvalidArgument, naming the tensor or node): the graph already has a loss, a new
// input's name is taken, or the first output is not shaped like logits.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

enum class AttachedLoss { kCrossEntropy, kCtc };

struct AttachLossOptions {
  AttachedLoss kind = AttachedLoss::kCrossEntropy;
  std::string target = "target";  // name of the new target input
};

absl::StatusOr<Graph> AttachLoss(const Graph& graph, const AttachLossOptions& options);

// The loss `graph` already computes, described ("node 'loss' (SoftmaxCrossEntropy)"), or "" when
// it has none: a node of a loss op, or a first output that is a floating scalar.
std::string ExistingLoss(const Graph& graph);

}  // namespace tessera::graph
