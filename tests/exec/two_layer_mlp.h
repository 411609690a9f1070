// The small classifier several exec tests train: x[batch, 6] -> fc1 (hidden) -> relu -> second
// (classes) -> SoftmaxCrossEntropy "loss", the logits optionally a second graph output.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/graph/builder.h"

namespace tessera::exec::fixtures {

struct MlpShape {
  std::string name = "mlp";
  int64_t batch = 8, hidden = 16, classes = 8;
  std::string relu = "relu1", second = "fc2";
  bool logits_output = false;
};

inline graph::Graph TwoLayerMlp(const MlpShape& s) {
  graph::GraphBuilder b(s.name);
  graph::Value x = b.Input("x", {s.batch, 6});
  graph::Value labels = b.Input("labels", {s.batch}, graph::DType::kI64);
  graph::Value h = b.Linear(x, s.hidden, "fc1").Relu(s.relu);
  graph::Value logits = b.Linear(h, s.classes, s.second);
  b.Output(b.SoftmaxCrossEntropy(logits, labels, "loss"));
  if (s.logits_output) b.Output(logits);
  return *std::move(b).Build();
}

}  // namespace tessera::exec::fixtures
