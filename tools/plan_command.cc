#include "tessera/tools/plan_command.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/batch.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/planner.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/model_loader.h"

namespace tessera::tools {
namespace {


struct PlanArgs {
  std::string model, cluster, format = "table", output, trace;
  std::string optimizer = "sgd", strategy = "auto";
  int64_t devices = 0, batch = 0;
  std::vector<std::string> inputs, dims;
};

void AddOptions(ArgParser& p, PlanArgs& a) {
  p.AddPositional("MODEL", "an .onnx file, a graph .json file, or zoo:NAME", &a.model);
  p.AddInt("--devices", "N", "number of devices to plan for (required)", &a.devices, 1);
  p.AddString("--cluster", "NAME|FILE",
              "cluster preset (m40-pcie, v100-vpc32, v100-ib100, h100-dgx) or cluster JSON file "
              "(required)",
              &a.cluster);
  p.AddInt("--batch", "B", "global batch in place of the model's own; must divide by N",
           &a.batch, 1);
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"}, "optimizer state kept per parameter",
              &a.optimizer);
  p.AddChoice("--strategy", {"auto", "data", "model", "optimal"},
              "auto: heuristic planner; data/model: every layer so; optimal: exact planner",
              &a.strategy);
  p.AddChoice("--format", {"table", "json", "html"}, "output format", &a.format);
  p.AddString("-o", "FILE", "write the plan to FILE instead of standard output", &a.output);
  p.AddString("--trace", "FILE", "also write the predicted step as Chrome trace JSON", &a.trace);
  p.AddStringList("--inputs", "NAMES", "ONNX: comma-separated names of the data inputs",
                  &a.inputs);
  p.AddStringList("--dim", "NAME=N", "ONNX: value of a symbolic dimension (repeatable)", &a.dims);
  p.SetEpilog(
      "examples:\n"
      "  tessera plan zoo:alexnet --devices 64 --cluster v100-vpc32 --batch 2048\n"
      "  tessera plan zoo:gnmt --devices 64 --cluster v100-ib100 --batch 128 --format json -o p.json\n"
      "  tessera plan model.onnx --devices 8 --cluster my_cluster.json --format html -o plan.html "
      "--trace step.json\n\n"
      "exit codes: 0 ok, 1 model/cluster/plan/file error, 2 usage error.\n"
      "See docs/plan-format.md for every field of the output.");
}

absl::StatusOr<partitioner::Plan> MakePlan(const PlanArgs& a,
                                           const absl::flat_hash_map<std::string, int64_t>& dims) {
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec cluster, costmodel::LoadCluster(a.cluster));
  TS_ASSIGN_OR_RETURN(graph::Graph graph,
                      LoadModel(a.model, {.batch = a.batch, .data_inputs = a.inputs,
                                          .symbolic_dims = dims}));
  const int64_t batch = graph::GraphBatch(graph);
  if (batch % a.devices != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the global batch ", batch, " of model '", a.model, "' does not divide over ", a.devices,
        " devices; pass a --batch that is a multiple of ", a.devices));
  }
  TS_ASSIGN_OR_RETURN(partitioner::PlannerKind kind, partitioner::ParsePlannerKind(a.strategy));
  TS_ASSIGN_OR_RETURN(partitioner::Optimizer optimizer,
                      partitioner::ParseOptimizer(a.optimizer));
  const costmodel::ClusterSpec sized = cluster.WithDevices(static_cast<int>(a.devices));
  const costmodel::RooflineCostModel cost(sized);
  return partitioner::PlanModel(
      graph, sized, cost,
      {.devices = static_cast<int>(a.devices), .optimizer = optimizer, .planner = kind});
}

std::string Render(const partitioner::Plan& plan, const std::string& format) {
  if (format == "json") return partitioner::PlanToJson(plan).dump(2) + "\n";
  if (format == "html") return partitioner::PlanHtml(plan);
  return partitioner::PlanTable(plan);
}

}  // namespace

int RunPlan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  PlanArgs a;
  ArgParser parser("tessera plan",
                   "Plans a model for a cluster: per layer data-parallel, model-parallel or\n"
                   "late-multiply, memory per device, predicted step time and the baselines.");
  AddOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  if (a.devices == 0 || a.cluster.empty()) {
    err << "tessera plan: " << (a.devices == 0 ? "--devices N" : "--cluster NAME|FILE")
        << " is required (see 'tessera plan --help')\n";
    return 2;
  }
  if (!a.output.empty() && a.output == a.trace) {
    err << "tessera plan: -o and --trace name the same file '" << a.output << "'\n";
    return 2;
  }
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> dims = ParseDims(a.dims);
  if (!dims.ok()) {
    err << "tessera plan: " << dims.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<partitioner::Plan> plan = MakePlan(a, *dims);
  if (!plan.ok()) {
    err << "tessera plan: " << plan.status().message() << "\n";
    return 1;
  }
  std::vector<std::pair<std::string, std::string>> files;
  const std::string text = Render(*plan, a.format);
  if (!a.output.empty()) files.emplace_back(a.output, text);
  if (!a.trace.empty()) files.emplace_back(a.trace, partitioner::PlanTrace(*plan).dump(1) + "\n");
  if (absl::Status s = base::WriteFilesAtomically(files, "output file"); !s.ok()) {
    err << "tessera plan: " << s.message() << "\n";
    return 1;
  }
  if (a.output.empty()) out << text;
  for (const auto& [path, contents] : files) err << "tessera plan: wrote " << path << "\n";
  return 0;
}

}  // namespace tessera::tools
