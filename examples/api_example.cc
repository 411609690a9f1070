// Builds a small convolutional classifier with the GraphBuilder and prints the
// cost model's per-op estimates: name, op, output shape, parameters, FLOPs.
#include <cstdio>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/builder.h"

using namespace tessera::graph;

int main() {
  GraphBuilder b("tiny_cnn");
  Value x = b.Input("images", {32, 3, 32, 32});
  Value labels = b.Input("labels", {32}, DType::kI64);
  x = b.Conv2d(x, 32, 3, "conv1", {.padding = 1}).Relu();
  x = b.MaxPool2d(b.BatchNorm2d(x, "bn1"), 2, "pool1");            // [32, 32, 16, 16]
  x = b.Conv2d(x, 64, 3, "conv2", {.stride = 2, .padding = 1}).Relu();
  x = b.GlobalAvgPool(x).Flatten(1);                                // [32, 64]
  b.Output(b.SoftmaxCrossEntropy(b.Linear(x, 10, "fc"), labels, "loss"));
  absl::StatusOr<Graph> g = std::move(b).Build();
  if (!g.ok()) {
    std::fprintf(stderr, "%s\n", g.status().ToString().c_str());  // names the node and shapes
    return 1;
  }

  const tessera::costmodel::GraphEstimate est = tessera::costmodel::EstimateGraph(*g);
  std::printf("%-18s %-20s %-16s %10s %14s\n", "name", "op", "output", "params", "fwd FLOPs");
  for (NodeId n = 0; n < g->num_nodes(); ++n) {
    const Node& node = g->node(n);
    std::printf("%-18s %-20s %-16s %10lld %14.0f\n", node.name.c_str(),
                std::string(OpName(node.kind)).c_str(),
                ShapeString(g->tensor(node.outputs[0]).shape).c_str(),
                static_cast<long long>(est.ops[n].params), est.ops[n].flops_forward);
  }
  std::printf("total: %lld params, %.4g forward FLOPs, %.4g backward FLOPs, %.4g MB kept\n",
              static_cast<long long>(est.params), est.flops_forward, est.flops_backward,
              est.activation_bytes / 1e6);
  return 0;
}
