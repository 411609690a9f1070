// RunsAsWinograd.
#include "tessera/costmodel/winograd.h"

#include <algorithm>
#include <variant>
#include <vector>

#include "tessera/graph/op_attrs.h"

namespace tessera::costmodel {
namespace {

bool AllOnes(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

}  // namespace

bool RunsAsWinograd(const graph::Graph& graph, const graph::Node& node) {
  if (node.kind != graph::OpKind::kConv || node.inputs.size() < 2) return false;
  const auto* a = std::get_if<graph::ConvAttrs>(&node.attrs);
  if (a == nullptr || a->groups != 1 || !AllOnes(a->strides) || !AllOnes(a->dilations)) {
    return false;
  }
  return graph::ConvKernelShape(*a, graph.tensor(node.inputs[1]).shape) ==
         std::vector<int64_t>{3, 3};
}

}  // namespace tessera::costmodel
