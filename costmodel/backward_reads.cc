// The public view of what each node's backward reads: a thin wrapper over the per-op
// estimates (costmodel/op_estimate_impl.h), so both always agree.
#include "tessera/costmodel/backward_reads.h"

#include <algorithm>

#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel {

BackwardInfo AnalyzeBackward(const graph::Graph& g) {
  const estimate::GraphFacts facts = estimate::AnalyzeGraph(g);
  BackwardInfo info;
  info.needs_grad = facts.needs_grad;
  info.derivation = facts.derivation;
  info.nodes.resize(g.num_nodes());
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    NodeBackward& nb = info.nodes[id];
    nb.has_backward = estimate::NodeView(g, id, facts).any_input_needs_grad();
    if (!nb.has_backward) continue;
    // CostOp, not CostNode: a parameter derivation (v / |v| of a weight) is charged no
    // per-sample cost, but its backward reads what its op keeps all the same.
    const estimate::NodeCost cost = estimate::CostOp(g, id, facts);
    for (graph::TensorId t : cost.keeps) {
      if (t < 0 || t >= g.num_tensors()) continue;
      if (std::find(nb.reads.begin(), nb.reads.end(), t) == nb.reads.end()) nb.reads.push_back(t);
    }
    nb.private_bytes = cost.private_keep_bytes;
  }
  return info;
}

}  // namespace tessera::costmodel
