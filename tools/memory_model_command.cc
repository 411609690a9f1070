#include "tessera/tools/memory_model_command.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"
#include "tessera/memory/buffer_csv.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/memory/offset_planner.h"
#include "tessera/partitioner/activation_memory.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/cli/flag_hint.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_request.h"

namespace tessera::tools {
namespace {

constexpr char kName[] = "tessera memory";

struct Args {
  PlanRequest request{.cluster = "v100-vpc32", .devices = 1};
  std::string format = "table", export_buffers;
  int64_t top = 10;
  double time_limit_s = 1;
};

void AddOptions(ArgParser& p, Args& a) {
  AddPlanRequestOptions(p, a.request,
                        {.devices = "devices the model is planned for",
                         .cluster = "cluster preset or JSON file: device capacity and the "
                                    "planner's costs",
                         .strategy = "how layers are split (as in tessera plan)"});
  p.AddPositiveNumber("--time-limit", "S", "seconds the offset planner may search",
                      &a.time_limit_s);
  p.AddInt("--top", "K", "largest tensors live at the peak to list", &a.top, 0);
  p.AddChoice("--format", {"table", "json"}, "output format", &a.format);
  p.AddString("--export-buffers", "FILE",
              "also write device 0's planned buffers as MiniMalloc CSV (id,lower,upper,size,"
              "offset)",
              &a.export_buffers);
  AddOnnxInputOptions(p, &a.request.inputs, &a.request.dims);
  p.SetEpilog(
      "examples:\n"
      "  tessera memory zoo:resnet50 --batch 64\n"
      "  tessera memory zoo:gnmt --devices 8 --cluster v100-ib100 --batch 128 --optimizer adam\n"
      "  tessera memory model.onnx --devices 4 --format json --export-buffers dev0.csv\n\n"
      "Every device holds the same share under a Tessera plan, so one device is reported for\n"
      "all. The list form, tessera memory --buffers IN.csv, plans a MiniMalloc CSV instead.\n\n"
      "exit codes: 0 ok, 1 model/cluster/plan/file error, 2 usage error, 3 internal error\n"
      "(the arena failed the independent checker; nothing is written).\n"
      "See docs/memory-command.md.");
}

// One device's memory under the plan.
struct Report {
  partitioner::Plan plan;
  partitioner::DeviceActivations activations;
  memory::OffsetPlan arena;
  double seconds = 0;
  int64_t peak_step = 0;
  std::vector<size_t> at_peak;  // buffer indices, largest first
  int64_t persistent_bytes = 0, total_bytes = 0, no_reuse_bytes = 0;
};

absl::StatusOr<Report> Build(const Args& a, const absl::flat_hash_map<std::string, int64_t>& dims) {
  TS_ASSIGN_OR_RETURN(PlannedModel planned, PlanRequestedModel(a.request, dims));
  Report r;
  r.plan = std::move(planned.plan);
  TS_ASSIGN_OR_RETURN(r.activations,
                      partitioner::PlanDeviceActivations(planned.graph, r.plan, planned.optimizer));
  const auto start = std::chrono::steady_clock::now();
  TS_ASSIGN_OR_RETURN(r.arena, memory::PlanOffsets(r.activations.buffers,
                                                   {.time_limit_s = a.time_limit_s}));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const partitioner::MemoryPrediction& m = r.plan.memory;
  r.persistent_bytes = m.params_bytes + m.grads_bytes + m.optimizer_bytes;
  r.total_bytes = r.persistent_bytes + m.comm_buffer_bytes + m.workspace_bytes + r.arena.arena_bytes;
  for (const memory::Buffer& b : r.activations.buffers) r.no_reuse_bytes += b.size;
  return r;
}

// The first step with the most live bytes and the buffers live there, largest first.
void FindPeak(Report& r) {
  const std::vector<memory::Buffer>& b = r.activations.buffers;
  r.peak_step = memory::FindBusiestStep(b).step;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].start <= r.peak_step && r.peak_step < b[i].end) r.at_peak.push_back(i);
  }
  std::stable_sort(r.at_peak.begin(), r.at_peak.end(),
                   [&](size_t x, size_t y) { return b[x].size > b[y].size; });
}

std::string StepName(const Report& r, int64_t step) {
  const auto& steps = r.activations.lifetimes.steps;
  if (step < 0 || step >= static_cast<int64_t>(steps.size())) return absl::StrCat(step);
  static constexpr const char* kPhase[] = {"forward", "backward", "update"};
  return absl::StrCat(step, " (", kPhase[static_cast<int>(steps[step].phase)], " ",
                      steps[step].name, ")");
}

std::string Table(const Args& a, const Report& r) {
  const memory::OffsetPlan& p = r.arena;
  const partitioner::MemoryPrediction& m = r.plan.memory;
  const auto bytes = [](int64_t b) { return absl::StrCat(b, " (", base::HumanBytes(b), ")"); };
  std::string text;
  const auto line = [&text](absl::string_view key, absl::string_view value) {
    absl::StrAppend(&text, absl::StrFormat("%-24s %s\n", key, value));
  };
  line("model", absl::StrCat(r.plan.model_name, ", batch ", r.plan.batch, ", ", a.request.optimizer));
  line("devices", absl::StrCat(r.plan.devices, " of ", r.plan.cluster_name,
                               r.plan.devices > 1 ? " (every device holds the same share)" : ""));
  text += "per device:\n";
  line("  parameters", bytes(m.params_bytes));
  line("  gradients", bytes(m.grads_bytes));
  line("  optimizer state", bytes(m.optimizer_bytes));
  line("  bucket buffers", bytes(m.comm_buffer_bytes));
  line("  transient buffers", absl::StrCat(r.activations.buffers.size()));
  line("  arena (planned)", bytes(p.arena_bytes));
  line("  lower bound", bytes(p.lower_bound));
  line("  arena / lower bound", absl::StrFormat("%.4f", p.lower_bound > 0
      ? static_cast<double>(p.arena_bytes) / p.lower_bound : 1.0));
  line("  without reuse", bytes(r.no_reuse_bytes));
  line("  total", absl::StrCat(bytes(r.total_bytes), r.total_bytes <= m.device_capacity_bytes
      ? " fits " : " DOES NOT FIT ", base::HumanBytes(m.device_capacity_bytes)));
  line("  planning time", base::HumanSeconds(r.seconds));
  absl::StrAppend(&text, "largest tensors live at the peak, step ", StepName(r, r.peak_step), ":\n");
  std::vector<std::vector<std::string>> rows;
  for (size_t k = 0; k < r.at_peak.size() && static_cast<int64_t>(k) < a.top; ++k) {
    const size_t i = r.at_peak[k];
    const memory::Buffer& b = r.activations.buffers[i];
    rows.push_back({base::Elide(r.activations.names[i], 48), r.activations.kinds[i],
                    base::HumanBytes(b.size), absl::StrCat(b.start, "-", b.end - 1)});
  }
  return text + base::RenderTable({"tensor", "kind", "bytes", "live steps"},
                                  {false, false, true, true}, rows);
}

nlohmann::json Json(const Args& a, const Report& r) {
  const partitioner::MemoryPrediction& m = r.plan.memory;
  nlohmann::json live = nlohmann::json::array();
  for (size_t k = 0; k < r.at_peak.size() && static_cast<int64_t>(k) < a.top; ++k) {
    const size_t i = r.at_peak[k];
    const memory::Buffer& b = r.activations.buffers[i];
    live.push_back({{"name", r.activations.names[i]}, {"kind", r.activations.kinds[i]},
                    {"bytes", b.size}, {"first_step", b.start}, {"last_step", b.end - 1}});
  }
  const nlohmann::json device = {
      {"params_bytes", m.params_bytes},
      {"grads_bytes", m.grads_bytes},
      {"optimizer_bytes", m.optimizer_bytes},
      {"comm_buffer_bytes", m.comm_buffer_bytes},
      {"transient_buffers", r.activations.buffers.size()},
      {"arena_bytes", r.arena.arena_bytes},
      {"lower_bound_bytes", r.arena.lower_bound},
      {"no_reuse_bytes", r.no_reuse_bytes},
      {"greedy_arena_bytes", r.arena.greedy_arena_bytes},
      {"total_bytes", r.total_bytes},
      {"fits", r.total_bytes <= m.device_capacity_bytes},
      {"peak_step", r.peak_step},
      {"peak_step_name", StepName(r, r.peak_step)},
      {"live_at_peak", live}};
  nlohmann::json devices = nlohmann::json::array();
  for (int d = 0; d < r.plan.devices; ++d) {
    nlohmann::json one = device;
    one["device"] = d;
    devices.push_back(std::move(one));
  }
  return {{"model", r.plan.model_name},
          {"batch", r.plan.batch},
          {"optimizer", a.request.optimizer},
          {"strategy", a.request.strategy},
          {"cluster", r.plan.cluster_name},
          {"device_capacity_bytes", m.device_capacity_bytes},
          {"steps", r.activations.lifetimes.steps.size()},
          {"planning_time_s", r.seconds},
          {"devices", devices}};
}

}  // namespace

int RunMemoryModel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Args a;
  ArgParser parser("tessera memory",
                   "Per-device memory of a model's training step: the activation arena planned\n"
                   "from lifetimes, against its lower bound and the size without reuse, plus\n"
                   "parameters, gradients and optimizer state.");
  AddOptions(parser, a);
  parser.SuggestAlso({"--buffers"});  // the list form's flag
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> dims = ParseDims(a.request.dims);
  if (!dims.ok()) {
    err << kName << ": " << dims.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<Report> report = Build(a, *dims);
  if (!report.ok()) {
    err << kName << ": " << WithFlag(report.status(), kPlanFlags).message() << "\n";
    return 1;
  }
  if (absl::Status s = memory::CheckOffsets(report->activations.buffers, report->arena); !s.ok()) {
    err << kName << ": internal error: the arena of '" << a.request.model
        << "' failed the independent checker: " << s.message()
        << "\nnothing was written; please report this with the command line\n";
    return 3;
  }
  FindPeak(*report);
  if (!a.export_buffers.empty()) {
    const std::string csv =
        memory::FormatBufferCsv(report->activations.buffers, report->arena.offsets);
    if (absl::Status s = base::WriteFileAtomically(a.export_buffers, csv, "buffer list");
        !s.ok()) {
      err << kName << ": " << s.message() << "\n";
      return 1;
    }
  }
  out << (a.format == "json" ? Json(a, *report).dump(2) + "\n" : Table(a, *report));
  if (!a.export_buffers.empty()) err << kName << ": wrote " << a.export_buffers << "\n";
  return 0;
}

}  // namespace tessera::tools
