#include "tessera/tools/memory_command.h"

#include <chrono>
#include <cmath>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/file_io.h"
#include "tessera/base/text_format.h"
#include "tessera/memory/buffer_csv.h"
#include "tessera/memory/offset_checker.h"
#include "tessera/tools/cli/arg_parser.h"
#include "tessera/tools/memory_model_command.h"

namespace tessera::tools {
namespace {

constexpr char kName[] = "tessera memory";
constexpr int64_t kMaxInputBytes = int64_t{1} << 30;

struct MemoryArgs {
  std::string buffers, output, format = "table";
  double time_limit_s = 1;
};

void AddOptions(ArgParser& p, MemoryArgs& a) {
  p.AddString("--buffers", "IN.csv",
              "plan this buffer list (MiniMalloc CSV: id,lower,upper,size, the buffer live on "
              "[lower, upper); ids are any text and are written back unchanged)",
              &a.buffers);
  p.AddString("-o", "OUT.csv", "write the rows with an offset column added", &a.output);
  p.AddPositiveNumber("--time-limit", "S", "seconds the planner may search", &a.time_limit_s);
  p.AddChoice("--format", {"table", "json"}, "output format", &a.format);
  p.SetEpilog(
      "examples:\n"
      "  tessera memory --buffers A.1048576.csv -o A.out.csv\n"
      "  tessera memory --buffers trace.csv --time-limit 0.2 --format json\n\n"
      "exit codes: 0 ok, 1 input/file error, 2 usage error, 3 internal error (the plan\n"
      "failed the independent checker; nothing is written).\n"
      "See docs/memory-command.md.");
}

bool HasBuffersFlag(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--buffers" || arg.rfind("--buffers=", 0) == 0) return true;
  }
  return false;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

absl::StatusOr<BufferPlanRun> PlanBufferFile(const std::string& path, double time_limit_s) {
  BufferPlanRun run{.input = path, .time_limit_s = time_limit_s};
  // base::ReadFileText names the OS reason (no such file, a directory) and caps the size.
  absl::StatusOr<std::string> text = base::ReadFileText(path, "buffer list", kMaxInputBytes);
  if (!text.ok()) return text.status();
  absl::StatusOr<memory::BufferTable> table = memory::ParseBufferCsv(*text, path);
  if (!table.ok()) return table.status();
  run.buffers = std::move(table->buffers);
  run.ids = std::move(table->ids);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<memory::OffsetPlan> plan =
      memory::PlanOffsets(run.buffers, {.time_limit_s = time_limit_s});
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat(path, ": ", plan.status().message()));
  }
  run.plan = *std::move(plan);
  return run;
}

}  // namespace

double ArenaOverLowerBound(const memory::OffsetPlan& plan) {
  if (plan.lower_bound <= 0) return plan.arena_bytes <= 0 ? 1.0 : INFINITY;
  return static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.lower_bound);
}

std::string BufferPlanTable(const BufferPlanRun& run) {
  const memory::OffsetPlan& p = run.plan;
  const auto bytes = [](int64_t b) { return absl::StrCat(b, " (", base::HumanBytes(b), ")"); };
  std::string text;
  const auto line = [&text](absl::string_view key, absl::string_view value) {
    absl::StrAppend(&text, absl::StrFormat("%-20s %s\n", key, value));
  };
  line("input", run.input);
  line("buffers", absl::StrCat(run.buffers.size()));
  line("arena bytes", bytes(p.arena_bytes));
  line("lower bound", bytes(p.lower_bound));
  line("arena / lower bound", absl::StrFormat("%.4f", ArenaOverLowerBound(p)));
  line("greedy arena bytes", bytes(p.greedy_arena_bytes));
  line("orderings tried", absl::StrCat(p.iterations));
  line("time", absl::StrCat(base::HumanSeconds(run.seconds), " (limit ",
                            base::HumanSeconds(run.time_limit_s), ")"));
  line("proven optimal", p.proven_optimal ? "yes (arena = lower bound)" : "no");
  return text;
}

nlohmann::json BufferPlanJson(const BufferPlanRun& run) {
  const memory::OffsetPlan& p = run.plan;
  const double ratio = ArenaOverLowerBound(p);
  return {{"input", run.input},
          {"buffers", run.buffers.size()},
          {"arena_bytes", p.arena_bytes},
          {"lower_bound", p.lower_bound},
          {"arena_over_lower_bound", std::isfinite(ratio) ? nlohmann::json(ratio) : nullptr},
          {"greedy_arena_bytes", p.greedy_arena_bytes},
          {"iterations", p.iterations},
          {"proven_optimal", p.proven_optimal},
          {"time_s", run.seconds},
          {"time_limit_s", run.time_limit_s}};
}

int FinishBufferPlan(const BufferPlanRun& run, const std::string& format,
                     const std::string& output, std::ostream& out, std::ostream& err) {
  if (absl::Status s = memory::CheckOffsets(run.buffers, run.plan); !s.ok()) {
    err << kName << ": internal error: the plan for '" << run.input
        << "' failed the independent checker: " << s.message()
        << (run.ids.empty() ? "" : " (buffers numbered by row from 0)")
        << "\nnothing was written; please report this with the input file\n";
    return 3;
  }
  if (!output.empty()) {
    const std::string csv = memory::FormatBufferCsv(run.buffers, run.plan.offsets, run.ids);
    if (absl::Status s = base::WriteFileAtomically(output, csv, "buffer list"); !s.ok()) {
      err << kName << ": " << s.message() << "\n";
      return 1;
    }
  }
  if (format == "json") {
    out << BufferPlanJson(run).dump(2) << "\n";
  } else {
    out << BufferPlanTable(run);
  }
  if (!output.empty()) err << kName << ": wrote " << output << "\n";
  return 0;
}

int RunMemory(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!HasBuffersFlag(args)) {
    // The model form; its --help is followed by the list form's.
    const int code = RunMemoryModel(args, out, err);
    if (!WantsHelp(args)) return code;
    out << "\n";
  }
  MemoryArgs a;
  ArgParser parser("tessera memory --buffers IN.csv",
                   "Plans arena offsets for a buffer list in MiniMalloc's CSV format, checks\n"
                   "the plan independently, and prints the arena size against the lower bound\n"
                   "(the most bytes live at any moment).");
  AddOptions(parser, a);
  if (std::optional<int> code = parser.ParseOrExitCode(args, out, err)) return *code;
  if (a.buffers.empty()) {
    err << kName << ": --buffers needs a file name (see 'tessera memory --help')\n";
    return 2;
  }
  absl::StatusOr<BufferPlanRun> run = PlanBufferFile(a.buffers, a.time_limit_s);
  if (!run.ok()) {
    err << kName << ": " << run.status().message() << "\n";
    return 1;
  }
  return FinishBufferPlan(*run, a.format, a.output, out, err);
}

}  // namespace tessera::tools
