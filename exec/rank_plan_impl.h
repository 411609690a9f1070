// BuildRankPlan's parts shared between rank_plan.cc (strategies, weight shards) and
// rank_layouts.cc (tensor layouts and the layers' input transitions).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tessera/exec/rank_plan.h"

namespace tessera::exec::rank_plan_internal {

// InvalidArgument naming the layer, its op and strategy, then `what`, and how to re-plan.
absl::Status LayerError(const partitioner::LayerPlan& l, absl::string_view what);

// The axis along which `local` is 1/ranks of `global`; -1 when they are equal; -2 otherwise.
int SplitAxis(const graph::Shape& global, const graph::Shape& local, int ranks);

// Gives every activation and data input of `r.graph` the shape of its layout on this rank
// (batch: the local batch, as SetBatch left it; feature: the last axis / ranks; replicated:
// whole), records the layers that change an input's layout (`r.layout_layers`) and whether the
// loss is global. Data inputs read in another layout than the batch are held whole.
absl::Status AssignLayouts(const graph::Graph& global, const partitioner::Plan& plan,
                           RankPlan& r);

}  // namespace tessera::exec::rank_plan_internal
