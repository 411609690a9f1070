#include "tessera/graph/onnx/topo_order.h"

#include <functional>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace tessera::graph::onnx_import {

std::string DescribeNode(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
}

absl::StatusOr<std::vector<int>> TopologicalNodeOrder(
    const onnx::GraphProto& graph, const absl::flat_hash_set<std::string>& external) {
  const int n = graph.node_size();
  absl::flat_hash_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (external.contains(out) || !producer.emplace(out, i).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", DescribeNode(graph.node(i), i), "' (", graph.node(i).op_type(),
            ") writes '", out, "', which is already a graph input, initializer or the output "
            "of another node"));
      }
    }
  }
  // Dependencies of every node; an input nothing defines is an error.
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  bool in_order = true;
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const std::string& in : node.input()) {
      if (in.empty() || external.contains(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", DescribeNode(node, i), "' (", node.op_type(), ") reads '", in,
                         "', which no node, graph input or initializer produces"));
      }
      users[it->second].push_back(i);
      ++pending[i];
      in_order = in_order && it->second < i;
    }
  }
  std::vector<int> order;
  order.reserve(n);
  if (in_order) {
    for (int i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  // Kahn's algorithm, lowest index first so the file's order is kept where it can be.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("the nodes form a cycle through node '", DescribeNode(graph.node(i), i),
                         "' (", graph.node(i).op_type(), ")"));
      }
    }
  }
  return order;
}

}  // namespace tessera::graph::onnx_import
