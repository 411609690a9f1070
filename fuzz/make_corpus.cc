// Writes the generated seeds of the fuzz corpus (fuzz/corpus/, docs/fuzzing.md): small
// ONNX models, one per group of ops (onnx_seeds.cc); graph files of a sample graph per op
// (tests/graph/sample_graphs.h), of zoo models and of small imported test models; the
// cluster presets (and variants with a partial node and measured efficiencies) as cluster
// files; plans of the CPU-sized "nmt" model (the one fuzz_plan_file plans) as plan files.
// The other ONNX seeds are test models of tests/models, copied by hand.
//
//   build-fuzz/bin/fuzz_make_corpus fuzz/corpus
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/sample_graphs.h"  // tests/graph: a small graph per op kind
#include "tessera/base/check.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/planner.h"

namespace tessera::fuzz {
std::vector<std::pair<std::string, std::string>> OnnxSeeds();  // onnx_seeds.cc
}  // namespace tessera::fuzz

namespace {

namespace fs = std::filesystem;
using namespace tessera;  // NOLINT: a small generator

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  TS_CHECK(out.good()) << "cannot write " << path;
  std::cout << path.string() << " (" << text.size() << " bytes)\n";
}

void OnnxSeeds(const fs::path& out) {
  for (const auto& [name, bytes] : fuzz::OnnxSeeds()) {
    Write(out / "fuzz_onnx_import" / (name + ".onnx"), bytes);
  }
}

void GraphSeeds(const fs::path& out, const fs::path& models) {
  for (graph::OpKind kind : graph::AllOpKinds()) {
    Write(out / "fuzz_graph_json" / (absl::StrCat("op_", graph::OpName(kind), ".json")),
          graph::GraphToJson(graph::testing::SampleGraph(kind)));
  }
  for (const char* name : {"nmt", "ocr", "alexnet", "crnn"}) {
    auto g = graph::zoo::BuildZooModel(name, 2);
    TS_CHECK(g.ok()) << g.status();
    Write(out / "fuzz_graph_json" / (std::string("zoo_") + name + ".json"), graph::GraphToJson(*g));
  }
  graph::OnnxImportOptions options;
  options.symbolic_dims["seq"] = 8;
  for (const char* name : {"tied_embedding", "shared_linear", "gemm_trans", "conv_variants",
                           "lstm_states", "default_quirks"}) {
    auto g = graph::ImportOnnxFile((models / (std::string(name) + ".onnx")).string(), options);
    TS_CHECK(g.ok()) << g.status();
    Write(out / "fuzz_graph_json" / (std::string("onnx_") + name + ".json"),
          graph::GraphToJson(*g));
  }
}

void ClusterSeeds(const fs::path& out) {
  for (const std::string& name : costmodel::ClusterPresetNames()) {
    auto c = costmodel::ClusterPreset(name);
    TS_CHECK(c.ok()) << c.status();
    Write(out / "fuzz_cluster_spec" / (name + ".json"), costmodel::ClusterToJson(*c));
  }
  auto c = costmodel::ClusterPreset("v100-vpc32");
  TS_CHECK(c.ok()) << c.status();
  costmodel::ClusterSpec partial = c->WithDevices(12);
  partial.name = "v100-partial";
  Write(out / "fuzz_cluster_spec" / "partial_node.json", costmodel::ClusterToJson(partial));
  costmodel::ClusterSpec measured = *c;
  measured.name = "measured";
  measured.efficiency = costmodel::Efficiency{};
  measured.efficiency->flops[0] = 0.42;
  measured.efficiency->op_overhead_s = 2e-5;
  Write(out / "fuzz_cluster_spec" / "efficiency.json", costmodel::ClusterToJson(measured));
}

// Plans of nmt at batch 8 (fuzz_plan_file's model) for each planner that differs.
void PlanSeeds(const fs::path& out) {
  auto g = graph::zoo::BuildZooModel("nmt", 8);
  TS_CHECK(g.ok()) << g.status();
  auto cluster = costmodel::ClusterPreset("v100-vpc32");
  TS_CHECK(cluster.ok()) << cluster.status();
  for (auto [kind, name, devices] :
       std::vector<std::tuple<partitioner::PlannerKind, std::string, int>>{
           {partitioner::PlannerKind::kAuto, "auto", 2},
           {partitioner::PlannerKind::kModel, "model", 4},
           {partitioner::PlannerKind::kLate, "late", 8}}) {
    const costmodel::RooflineCostModel cost(cluster->WithDevices(devices));
    partitioner::PlanOptions options{.devices = devices, .planner = kind};
    auto plan = partitioner::PlanModel(*g, *cluster, cost, options);
    TS_CHECK(plan.ok()) << plan.status();
    Write(out / "fuzz_plan_file" / ("nmt_" + name + ".json"),
          partitioner::PlanToJson(*plan).dump(2) + "\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_corpus OUT_DIR   (e.g. fuzz/corpus)\n";
    return 2;
  }
  const fs::path out = argv[1];
  OnnxSeeds(out);
  GraphSeeds(out, fs::path(TESSERA_SOURCE_DIR) / "tests" / "models");
  ClusterSeeds(out);
  PlanSeeds(out);
  return 0;
}
