#include "tessera/tools/model_summary.h"

#include "tessera/graph/batch.h"

namespace tessera::tools {

nlohmann::json ModelSummaryJson(const graph::Graph& graph,
                                const costmodel::GraphEstimate& estimate) {
  return {{"name", graph.name()},
          {"params", estimate.params},
          {"forward_flops", estimate.flops_forward},
          {"ops", graph.num_nodes()},
          {"batch", graph::GraphBatch(graph)}};
}

}  // namespace tessera::tools
