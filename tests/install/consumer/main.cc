// Built against the installed package: builds a zoo model and a hand-made graph,
// and prints their parameter counts.
#include <iostream>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/builder.h"
#include "tessera/graph/zoo/zoo.h"

int main() {
  using namespace tessera;
  auto alexnet = graph::zoo::BuildZooModel("alexnet", 1);
  if (!alexnet.ok()) {
    std::cerr << alexnet.status() << "\n";
    return 1;
  }
  graph::GraphBuilder b("tiny");
  graph::Value x = b.Input("x", {4, 16});
  b.Output(b.Linear(x, 8, "fc"));
  auto tiny = std::move(b).Build();
  if (!tiny.ok()) {
    std::cerr << tiny.status() << "\n";
    return 1;
  }
  std::cout << "alexnet params " << costmodel::EstimateGraph(*alexnet).params << "\n";
  std::cout << "tiny params " << costmodel::EstimateGraph(*tiny).params << "\n";
  return 0;
}
