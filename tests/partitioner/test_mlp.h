// The small graph and cluster several planner tests share: x -> fc1 -> relu -> fc2 -> loss,
// with 256 inputs, 512 hidden units and 1000 classes, on a one-node cluster of 8 devices.
#pragma once

#include <cstdint>
#include <utility>

#include "tessera/costmodel/cluster.h"
#include "tessera/graph/builder.h"

namespace tessera::partitioner::testing {

inline graph::Graph Mlp(int64_t batch) {
  graph::GraphBuilder b("mlp");
  graph::Value x = b.Input("x", {batch, 256});
  graph::Value labels = b.Input("labels", {batch}, graph::DType::kI64);
  graph::Value h = b.Linear(x, 512, "fc1").Relu("relu");
  b.Output(b.SoftmaxCrossEntropy(b.Linear(h, 1000, "fc2"), labels, "loss"));
  return *std::move(b).Build();
}

inline costmodel::ClusterSpec MlpCluster(int64_t memory_bytes) {
  costmodel::ClusterSpec c;
  c.name = "fake";
  c.devices_per_node = 8;
  c.device.memory_bytes = memory_bytes;
  return c;
}

}  // namespace tessera::partitioner::testing
