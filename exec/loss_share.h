// Each rank's share of the global loss when the loss is a mean over the labels that are not
// ignored (SoftmaxCrossEntropy with ignore_index, e.g. <pad> in translation).
//
//   TS_ASSIGN_OR_RETURN(LossShare share, FindLossShare(global_graph));
//   ...  per step, with the global batch `whole` and this rank's shard `mine`:
//   program->set_loss_scale(share.Scale(whole, mine, ranks));
//
// Each rank's loss is the mean over its shard. When every shard counts the same number of
// positions, the global mean is the average of the ranks' means and each rank seeds 1/P. When
// labels are ignored, the shards count different numbers n_r of the global N, and the global
// mean is sum_r (n_r / N) * mean_r: each rank seeds n_r / N. The counts come from the data
// inputs every rank holds whole, so no communication is needed.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

struct LossShare {
  // The data input the loss's labels come from through layout ops only; empty when every
  // position counts (the share is 1/P).
  std::string label_input;
  int64_t ignore_index = -1;

  // This rank's seed: n_mine / n_whole of the label input's values other than ignore_index
  // (0 when the whole batch has none), or 1/ranks when label_input is empty.
  float Scale(const Batch& whole, const Batch& mine, int ranks) const;
  // The label input's values other than ignore_index in `batch` (0 when label_input is empty).
  // A worker that decoded only its rows sums these over the ranks for n_whole.
  int64_t Count(const Batch& batch) const;
};

// The share rule of `graph`'s loss (its first output). InvalidArgument naming the loss when it
// ignores a label but its labels are computed (not a data input reshaped or transposed), since
// the ranks' counts could then not be known.
absl::StatusOr<LossShare> FindLossShare(const graph::Graph& graph);

}  // namespace tessera::exec
