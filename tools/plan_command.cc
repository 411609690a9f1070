#include "tessera/tools/plan_command.h"

#include "tessera/base/file_io.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/cli/flag_hint.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_request.h"

namespace tessera::tools {
namespace {

struct PlanArgs {
  PlanRequest request;
  std::string format = "table", output, trace;
};

void AddOptions(ArgParser& p, PlanArgs& a) {
  AddPlanRequestOptions(
      p, a.request,
      {.devices = "number of devices to plan for (required)",
       .cluster = "cluster preset (m40-pcie, v100-vpc32, v100-ib100, h100-dgx), local (this "
                  "machine, see tessera calibrate) or cluster JSON file (required)",
       .strategy = "auto: heuristic planner; data/model/late: every layer that admits it so; "
                   "optimal: exact planner"});
  p.AddFlag("--executable", "plan only what `tessera train` runs (docs/partitioner.md)",
            &a.request.executable);
  p.AddChoice("--format", {"table", "json", "html"}, "output format", &a.format);
  p.AddString("-o", "FILE", "write the plan to FILE instead of standard output", &a.output);
  p.AddString("--trace", "FILE", "also write the predicted step as Chrome trace JSON", &a.trace);
  AddOnnxInputOptions(p, &a.request.inputs, &a.request.dims);
  p.SetEpilog(
      "examples:\n"
      "  tessera plan zoo:alexnet --devices 64 --cluster v100-vpc32 --batch 2048\n"
      "  tessera plan zoo:gnmt --devices 64 --cluster v100-ib100 --batch 128 --format json -o p.json\n"
      "  tessera plan model.onnx --devices 8 --cluster my_cluster.json --format html -o plan.html \\\n"
      "      --trace step.json\n\n"
      "exit codes: 0 ok, 1 model/cluster/plan/file error, 2 usage error.\n"
      "See docs/plan-format.md for every field of the output.");
}

std::string Render(const PlannedModel& planned, const std::string& format) {
  if (format == "json") return partitioner::PlanToJson(planned.plan).dump(2) + "\n";
  if (format == "html") return partitioner::PlanHtml(planned.plan, planned.cluster);
  return partitioner::PlanTable(planned.plan);
}

}  // namespace

int RunPlan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  PlanArgs a;
  ArgParser parser("tessera plan",
                   "Plans a model for a cluster: per layer data-parallel, model-parallel or\n"
                   "late-multiply, memory per device, predicted step time and the baselines.");
  AddOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  if (a.request.devices == 0 || a.request.cluster.empty()) {
    err << "tessera plan: " << (a.request.devices == 0 ? "--devices N" : "--cluster NAME|FILE")
        << " is required (see 'tessera plan --help')\n";
    return 2;
  }
  if (!a.output.empty() && a.output == a.trace) {
    err << "tessera plan: -o and --trace name the same file '" << a.output << "'\n";
    return 2;
  }
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> dims = ParseDims(a.request.dims);
  if (!dims.ok()) {
    err << "tessera plan: " << dims.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<PlannedModel> planned = PlanRequestedModel(a.request, *dims);
  if (!planned.ok()) {
    err << "tessera plan: " << WithFlag(planned.status(), kPlanFlags).message() << "\n";
    return 1;
  }
  const partitioner::Plan& plan = planned->plan;
  std::vector<std::pair<std::string, std::string>> files;
  const std::string text = Render(*planned, a.format);
  if (!a.output.empty()) files.emplace_back(a.output, text);
  if (!a.trace.empty()) files.emplace_back(a.trace, partitioner::PlanTrace(plan).dump(1) + "\n");
  if (absl::Status s = base::WriteFilesAtomically(files, "output file"); !s.ok()) {
    err << "tessera plan: " << s.message() << "\n";
    return 1;
  }
  if (a.output.empty()) out << text;
  for (const auto& [path, contents] : files) err << "tessera plan: wrote " << path << "\n";
  return 0;
}

}  // namespace tessera::tools
