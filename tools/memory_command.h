// `tessera memory --buffers IN.csv [-o OUT.csv] [--time-limit S] [--format table|json]`:
// plans arena offsets for a buffer list in MiniMalloc's CSV format (`id,lower,upper,size`; ids
// are any text and are written back unchanged, memory/buffer_csv.h),
// checks the plan with the independent checker, prints the arena size, the lower bound and
// their ratio, and writes the rows with an `offset` column added (docs/memory-command.md).
//
//   std::ostringstream out, err;
//   int code = RunMemory({"--buffers", "A.1048576.csv", "-o", "A.out.csv"}, out, err);
//
// Without --buffers, the arguments go to the model form (tools/memory_model_command.h).
// -o is written only after the plan passed the checker, through a temporary file renamed into
// place: on any error nothing is written.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/memory/buffer.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::tools {

// Runs the subcommand; `args` exclude "tessera memory". Returns the exit code (0 ok,
// 1 input/file error, 2 usage error, 3 internal error: the plan failed the checker).
int RunMemory(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One planned buffer list and how it was planned.
struct BufferPlanRun {
  std::string input;  // the CSV path
  std::vector<memory::Buffer> buffers;  // numbered by row: buffers[i].id == i
  std::vector<std::string> ids;         // each row's id as the CSV spells it (written back)
  memory::OffsetPlan plan;
  double time_limit_s = 1.0;
  double seconds = 0;  // wall time of PlanOffsets
};

// Checks `run.plan` with memory::CheckOffsets, then writes `output` (if not empty) and prints
// the summary in `format` ("table" or "json") to `out`. Returns 0, 1 when `output` cannot be
// written, 3 (with the checker's message, nothing written) when the plan is invalid.
int FinishBufferPlan(const BufferPlanRun& run, const std::string& format,
                     const std::string& output, std::ostream& out, std::ostream& err);

// arena_bytes / lower_bound (1 when both are 0).
double ArenaOverLowerBound(const memory::OffsetPlan& plan);
std::string BufferPlanTable(const BufferPlanRun& run);
// {"input", "buffers", "arena_bytes", "lower_bound", "arena_over_lower_bound",
//  "greedy_arena_bytes", "iterations", "proven_optimal", "time_s", "time_limit_s"}
nlohmann::json BufferPlanJson(const BufferPlanRun& run);

}  // namespace tessera::tools
