// Which convolutions GPU libraries run with a Winograd transform, so the roofline cost model
// can count them as faster than their direct FLOP count (Efficiency::winograd_speedup).
//
//   OpWork work{.flops = ..., .op_class = OpClass::kDense, .winograd = RunsAsWinograd(g, node)};
#pragma once

#include "tessera/graph/graph.h"

namespace tessera::costmodel {

// True for a 2-D Conv with a 3x3 kernel, stride 1, dilation 1 and one group: the shapes
// cuDNN's WINOGRAD and WINOGRAD_NONFUSED algorithms take (forward, data and filter
// gradients). False for every other node.
bool RunsAsWinograd(const graph::Graph& graph, const graph::Node& node);

}  // namespace tessera::costmodel
