#include "tessera/tools/recommend_command.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/graph/batch.h"
#include "tessera/partitioner/planner.h"
#include "tessera/partitioner/recommend.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/cli/flag_hint.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_request.h"

namespace tessera::tools {
namespace {

struct RecommendArgs {
  std::string model, format = "table", optimizer = "sgd";
  double epochs = 1, max_hours = 0, max_cost = 0;  // 0: no limit
  int64_t samples = 0, batch_per_device = 0, max_devices = 1024;
  std::vector<std::string> clusters, inputs, dims;
};

void AddOptions(ArgParser& p, RecommendArgs& a) {
  p.AddPositional("MODEL", "an .onnx file, a graph .json file, zoo:NAME, nmt or ocr", &a.model);
  p.AddInt("--samples", "N", "training samples per epoch (required)", &a.samples, 1);
  p.AddPositiveNumber("--epochs", "E", "epochs to train (may be fractional)", &a.epochs);
  p.AddPositiveNumber("--max-hours", "H",
                      "deadline: pick the cheapest option finishing within H hours", &a.max_hours)
      .Default("no deadline");
  p.AddPositiveNumber("--max-cost", "C", "budget in USD: pick the fastest option costing at most C",
                      &a.max_cost)
      .Default("no budget");
  p.AddStringList("--cluster", "NAME|FILE", "clusters to compare, repeat or comma-separate",
                  &a.clusters)
      .Default("every preset");
  p.AddInt("--batch-per-device", "B",
           "samples per device per step; the global batch is B x devices", &a.batch_per_device, 1)
      .Default("the model's own batch");
  p.AddInt("--max-devices", "M", "largest device count tried", &a.max_devices, 1);
  p.AddChoice("--optimizer", {"sgd", "momentum", "adam"}, "optimizer state kept per parameter",
              &a.optimizer);
  p.AddChoice("--format", {"table", "json"}, "output format", &a.format);
  AddOnnxInputOptions(p, &a.inputs, &a.dims);
  p.SetEpilog(
      "Device counts tried: powers of two from 1 to M, plus the node size times each power\n"
      "of two. Each option is planned with the auto planner at a global batch of B x devices.\n"
      "Choice: with --max-hours the cheapest finishing in time (and within --max-cost if\n"
      "given); with only --max-cost the fastest within budget; with neither the cheapest.\n\n"
      "examples:\n"
      "  tessera recommend zoo:resnet50 --samples 1281167 --epochs 90 --max-hours 24\n"
      "  tessera recommend zoo:gnmt --samples 4500000 --max-cost 500 \\\n"
      "      --cluster v100-ib100,h100-dgx --format json\n\n"
      "exit codes: 0 ok (also when nothing meets the limits), 1 model/cluster error, 2 usage "
      "error.");
}

partitioner::RecommendOptions ToOptions(const RecommendArgs& a) {
  partitioner::RecommendOptions o;
  o.samples = a.samples;
  o.epochs = a.epochs;
  o.max_hours = a.max_hours;
  o.max_cost = a.max_cost;
  o.batch_per_device = a.batch_per_device;
  o.max_devices = static_cast<int>(std::min<int64_t>(a.max_devices, 1 << 20));
  return o;
}

// Loads the model once per global batch and plans it with the auto planner.
class Planner {
 public:
  Planner(const RecommendArgs& a, absl::flat_hash_map<std::string, int64_t> dims,
          costmodel::OptimizerKind optimizer)
      : args_(a), dims_(std::move(dims)), optimizer_(optimizer) {}

  absl::StatusOr<partitioner::Plan> operator()(const costmodel::ClusterSpec& cluster, int devices,
                                               int64_t global_batch) {
    auto it = graphs_.find(global_batch);
    if (it == graphs_.end()) {
      it = graphs_.emplace(global_batch,
                           LoadModel(args_.model, {.batch = global_batch,
                                                   .data_inputs = args_.inputs,
                                                   .symbolic_dims = dims_}))
               .first;
    }
    if (!it->second.ok()) return it->second.status();
    const costmodel::RooflineCostModel cost(cluster);
    return partitioner::PlanModel(*it->second, cluster, cost,
                                  {.devices = devices, .optimizer = optimizer_,
                                   .allow_over_capacity = true});
  }

 private:
  const RecommendArgs& args_;
  absl::flat_hash_map<std::string, int64_t> dims_;
  costmodel::OptimizerKind optimizer_;
  std::map<int64_t, absl::StatusOr<graph::Graph>> graphs_;
};

absl::StatusOr<partitioner::Recommendation> Run(RecommendArgs& a,
                                                const absl::flat_hash_map<std::string, int64_t>& dims) {
  partitioner::RecommendOptions options = ToOptions(a);
  std::vector<costmodel::ClusterSpec> clusters;
  if (a.clusters.empty()) a.clusters = costmodel::ClusterPresetNames();
  for (const std::string& name : a.clusters) {
    TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec c, costmodel::LoadCluster(name));
    clusters.push_back(std::move(c));
  }
  // The model must load at all; its own batch is the default batch per device.
  TS_ASSIGN_OR_RETURN(graph::Graph graph,
                      LoadModel(a.model, {.data_inputs = a.inputs, .symbolic_dims = dims}));
  if (options.batch_per_device == 0) options.batch_per_device = graph::GraphBatch(graph);
  if (options.batch_per_device < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", a.model, "' has no batch dimension; pass --batch-per-device"));
  }
  TS_ASSIGN_OR_RETURN(costmodel::OptimizerKind optimizer,
                      costmodel::ParseOptimizerKind(a.optimizer));
  Planner planner(a, dims, optimizer);
  return partitioner::Recommend(clusters, options, std::ref(planner));
}

}  // namespace

int RunRecommend(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RecommendArgs a;
  ArgParser parser("tessera recommend",
                   "How many devices of which cluster to train on: predicted step time, time to\n"
                   "train and cost for every cluster and device count, and the choice.");
  AddOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  if (a.samples == 0) {
    err << "tessera recommend: --samples N is required (see 'tessera recommend --help')\n";
    return 2;
  }
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> dims = ParseDims(a.dims);
  if (!dims.ok()) {
    err << "tessera recommend: " << dims.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<partitioner::Recommendation> r = Run(a, *dims);
  if (!r.ok()) {
    err << "tessera recommend: "
        << WithFlag(r.status(), {{"symbolic_dims", "--dim {}=N"}}).message() << "\n";
    return 1;
  }
  if (a.format == "json") {
    out << partitioner::RecommendJson(*r).dump(2) << "\n";
  } else {
    out << partitioner::RecommendTable(*r);
  }
  return 0;
}

}  // namespace tessera::tools
