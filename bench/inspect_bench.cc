// Google Benchmark: the work behind `tessera inspect` on real models.
//   build/bin/tessera_bench_inspect [--benchmark_filter=Onnx]
// The peer for ONNX import is ONNX's own shape inference, measured in the same
// run by bench/inspect_vs_onnx.sh.
#include <benchmark/benchmark.h>

#include <string>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/zoo/zoo.h"

namespace {

using namespace tessera;

std::string ModelPath(const char* file) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/models/" + file;
}

void BM_ImportOnnx(benchmark::State& state, const char* file) {
  const std::string path = ModelPath(file);
  int64_t nodes = 0;
  for (auto _ : state) {
    graph::OnnxImportOptions options;
    options.symbolic_dims["seq"] = 16;  // big_1000 has a symbolic sequence length
    auto g = graph::ImportOnnxFile(path, options);
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    nodes = g->num_nodes();
    benchmark::DoNotOptimize(g);
  }
  state.counters["ir_nodes"] = static_cast<double>(nodes);
}
BENCHMARK_CAPTURE(BM_ImportOnnx, big_1000, "big_1000.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, resnet50, "resnet50.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, seq2seq_lstm, "seq2seq_lstm.onnx")->Unit(benchmark::kMillisecond);

void BM_BuildZoo(benchmark::State& state, const char* name) {
  for (auto _ : state) {
    auto g = graph::zoo::BuildZooModel(name);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK_CAPTURE(BM_BuildZoo, gnmt, "gnmt")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildZoo, transformer, "transformer")->Unit(benchmark::kMillisecond);

void BM_EstimateGraph(benchmark::State& state, const char* name) {
  auto g = graph::zoo::BuildZooModel(name);
  for (auto _ : state) benchmark::DoNotOptimize(costmodel::EstimateGraph(*g));
}
BENCHMARK_CAPTURE(BM_EstimateGraph, transformer, "transformer")->Unit(benchmark::kMicrosecond);

void BM_GraphJsonRoundTrip(benchmark::State& state, const char* name) {
  auto g = graph::zoo::BuildZooModel(name);
  for (auto _ : state) {
    auto back = graph::GraphFromJson(graph::GraphToJson(*g), name);
    benchmark::DoNotOptimize(back);
  }
}
BENCHMARK_CAPTURE(BM_GraphJsonRoundTrip, resnet50, "resnet50")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
