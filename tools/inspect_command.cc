#include "tessera/tools/inspect_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/graph/batch.h"
#include "tessera/base/text_format.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/cli/flag_hint.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/model_summary.h"

namespace tessera::tools {
namespace {

using base::Elide;
using base::HumanBytes;
using base::HumanCount;
using base::HumanFlops;
using base::RenderTable;

constexpr size_t kNameWidth = 48;

std::string OutputShapes(const graph::Graph& graph, const graph::Node& node) {
  std::vector<std::string> shapes;
  for (graph::TensorId t : node.outputs) shapes.push_back(graph::ShapeString(graph.tensor(t).shape));
  return absl::StrJoin(shapes, " ");
}

nlohmann::json TensorNames(const graph::Graph& graph, const std::vector<graph::TensorId>& ids) {
  nlohmann::json names = nlohmann::json::array();
  for (graph::TensorId t : ids) {
    names.push_back(t == graph::kNoTensor ? nlohmann::json(nullptr)
                                          : nlohmann::json(graph.tensor(t).name));
  }
  return names;
}

}  // namespace

std::string InspectTable(const graph::Graph& graph, const costmodel::GraphEstimate& estimate) {
  std::vector<std::vector<std::string>> rows;
  for (graph::NodeId n = 0; n < graph.num_nodes(); ++n) {
    const graph::Node& node = graph.node(n);
    const costmodel::OpEstimate& e = estimate.ops[n];
    rows.push_back({absl::StrCat(n), Elide(node.name, kNameWidth),
                  std::string(graph::OpName(node.kind)), OutputShapes(graph, node),
                  e.params ? HumanCount(e.params) : "-",
                  e.flops_forward > 0 ? HumanFlops(e.flops_forward) : "-",
                  e.activation_bytes ? HumanBytes(e.activation_bytes) : "-"});
  }
  rows.emplace_back();  // a rule
  rows.push_back({"", "total", "", "", HumanCount(estimate.params),
                  HumanFlops(estimate.flops_forward), HumanBytes(estimate.activation_bytes)});
  const std::string table =
      RenderTable({"#", "name", "op", "output shape", "params", "fwd FLOPs", "act. bytes"},
                  {true, false, false, false, true, true, true}, rows);
  std::string text = absl::StrCat("model ", graph.name(), ": ", graph.num_nodes(), " ops, batch ",
                                  graph::GraphBatch(graph), "\n\n", table);
  absl::StrAppend(&text, "\nparameters        ", estimate.params, " (", HumanCount(estimate.params),
                  ", distinct parameters counted once)\n",
                  "forward FLOPs     ", HumanFlops(estimate.flops_forward), " per step (whole batch)\n",
                  "backward FLOPs    ", HumanFlops(estimate.flops_backward), "\n",
                  "activation bytes  ", HumanBytes(estimate.activation_bytes),
                  " kept for backward\n");
  return text;
}

nlohmann::json InspectJson(const graph::Graph& graph, const costmodel::GraphEstimate& estimate) {
  nlohmann::json ops = nlohmann::json::array();
  for (graph::NodeId n = 0; n < graph.num_nodes(); ++n) {
    const graph::Node& node = graph.node(n);
    const costmodel::OpEstimate& e = estimate.ops[n];
    ops.push_back({{"name", node.name},
                   {"op", graph::OpName(node.kind)},
                   {"inputs", TensorNames(graph, node.inputs)},
                   {"outputs", TensorNames(graph, node.outputs)},
                   {"output_shape", graph.tensor(node.outputs.front()).shape},
                   {"params", e.params},
                   {"forward_flops", e.flops_forward},
                   {"backward_flops", e.flops_backward},
                   {"bytes_read", e.bytes_read},
                   {"bytes_written", e.bytes_written},
                   {"activation_bytes", e.activation_bytes}});
  }
  return {{"model", ModelSummaryJson(graph, estimate)},
          {"totals",
           {{"params", estimate.params},
            {"forward_flops", estimate.flops_forward},
            {"backward_flops", estimate.flops_backward},
            {"activation_bytes", estimate.activation_bytes},
            {"bytes_read", estimate.bytes_read},
            {"bytes_written", estimate.bytes_written}}},
          {"ops", std::move(ops)}};
}

int RunInspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string model;
  std::string format = "table";
  int64_t batch = 0;
  std::vector<std::string> inputs;
  std::vector<std::string> dims;
  ArgParser parser("tessera inspect",
                   "Per-op estimates of a model: output shapes, parameters, forward FLOPs and\n"
                   "activation bytes kept for backward, with totals.");
  parser.AddPositional("MODEL", "an .onnx file, a graph .json file, zoo:NAME, nmt or ocr", &model);
  parser.AddInt("--batch", "B", "global batch in place of the model's own", &batch, 1)
      .Default("the model's");
  parser.AddChoice("--format", {"table", "json"}, "output format", &format);
  AddOnnxInputOptions(parser, &inputs, &dims);
  parser.SetEpilog(
      "examples:\n"
      "  tessera inspect zoo:gnmt\n"
      "  tessera inspect resnet50.onnx --batch 64 --format json\n"
      "  tessera inspect transformer.onnx --batch 8 --dim seq=256\n\n"
      "zoo models: alexnet, vgg16, resnet50, gnmt, crnn, transformer, nmt, ocr\n\n"
      "exit codes: 0 ok, 1 the model could not be loaded (the message names the file, node or\n"
      "value), 2 usage error.");
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> symbolic_dims = ParseDims(dims);
  if (!symbolic_dims.ok()) {
    err << "tessera inspect: " << symbolic_dims.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<graph::Graph> graph = LoadModel(
      model, {.batch = batch, .data_inputs = inputs, .symbolic_dims = *symbolic_dims});
  if (!graph.ok()) {
    err << "tessera inspect: "
        << WithFlag(graph.status(), {{"symbolic_dims", "--dim {}=N"}}).message() << "\n";
    return 1;
  }
  const costmodel::GraphEstimate estimate = costmodel::EstimateGraph(*graph);
  if (format == "json") {
    out << InspectJson(*graph, estimate).dump(2) << "\n";
  } else {
    out << InspectTable(*graph, estimate);
  }
  return 0;
}

}  // namespace tessera::tools
