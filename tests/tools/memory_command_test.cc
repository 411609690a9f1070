#ifdef TESSERA_HAVE_MEMORY_COMMAND
#include "tessera/tools/memory_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/memory/buffer_csv.h"
#include "tessera/memory/offset_checker.h"

#include "command_runner.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

CommandResult Memory(const std::vector<std::string>& args) { return RunCommand(RunMemory, args); }

std::string TempPath(const std::string& name) {
  const fs::path p = fs::path(testing::TempDir()) / ("memory_command_" + name);
  fs::remove(p);
  return p.string();
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

// Live bytes per step: 100, 150, 150, 150, 50, so no arena is below 150; 150 is reached with
// buffers 0 and 2 at offset 0 and buffers 1 and 3 at offset 100.
constexpr char kStaircase[] =
    "id,lower,upper,size\n"
    "0,0,2,100\n"
    "1,1,3,50\n"
    "2,2,4,100\n"
    "3,3,5,50\n";

TEST(MemoryCommandTest, PlansASmallListToItsKnownOptimumAndWritesCheckableOffsets) {
  const std::string in = WriteTemp("staircase.csv", kStaircase);
  const std::string out_csv = TempPath("staircase.out.csv");
  CommandResult r = Memory({"--buffers", in, "-o", out_csv, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["buffers"], 4);
  EXPECT_EQ(j["arena_bytes"], 150);
  EXPECT_EQ(j["lower_bound"], 150);
  EXPECT_DOUBLE_EQ(j["arena_over_lower_bound"].get<double>(), 1.0);
  EXPECT_EQ(j["proven_optimal"], true);
  EXPECT_GE(j["greedy_arena_bytes"].get<int64_t>(), 150);
  EXPECT_DOUBLE_EQ(j["time_limit_s"].get<double>(), 1.0);
  EXPECT_EQ(j["input"], in);
  EXPECT_NE(r.err.find("wrote " + out_csv), std::string::npos) << r.err;

  // The written file is re-read and checked independently of the command.
  absl::StatusOr<memory::BufferTable> table = memory::ReadBufferCsv(out_csv);
  ASSERT_TRUE(table.ok()) << table.status();
  const std::vector<memory::Buffer>& rows = table->buffers;
  ASSERT_EQ(rows.size(), 4u);
  std::ifstream f(out_csv);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header, "id,lower,upper,size,offset");
  memory::OffsetPlan plan{.lower_bound = 150};
  for (std::string line; std::getline(f, line);) {
    plan.offsets.push_back(std::stoll(line.substr(line.rfind(',') + 1)));
  }
  ASSERT_EQ(plan.offsets.size(), 4u);
  for (size_t i = 0; i < rows.size(); ++i) {
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + rows[i].size);
  }
  EXPECT_EQ(plan.arena_bytes, 150);
  EXPECT_TRUE(memory::CheckOffsets(rows, plan).ok()) << memory::CheckOffsets(rows, plan);
}

TEST(MemoryCommandTest, TableNamesEveryFigure) {
  const std::string in = WriteTemp("table.csv", kStaircase);
  CommandResult r = Memory({"--buffers", in, "--time-limit", "0.5"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* want : {"buffers", "arena bytes          150", "lower bound          150",
                           "arena / lower bound  1.0000", "greedy arena bytes", "time",
                           "proven optimal       yes"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

TEST(MemoryCommandTest, PlansAMiniMallocCaseValidly) {
  const std::string in = TESSERA_SOURCE_DIR "/../shared/data/minimalloc/A.1048576.csv";
  if (!fs::exists(in)) GTEST_SKIP() << "no MiniMalloc data at " << in;
  const std::string out_csv = TempPath("A.out.csv");
  CommandResult r =
      Memory({"--buffers", in, "-o", out_csv, "--format", "json", "--time-limit", "0.5"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  absl::StatusOr<memory::BufferTable> input = memory::ReadBufferCsv(in);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(j["buffers"], input->buffers.size());
  EXPECT_EQ(j["lower_bound"], memory::LiveBytesLowerBound(input->buffers));
  EXPECT_GE(j["arena_bytes"].get<int64_t>(), j["lower_bound"].get<int64_t>());
  // How close it gets is the planner's own tests' business (memory/); here: never worse than the
  // greedy baseline it reports.
  EXPECT_LE(j["arena_bytes"].get<int64_t>(), j["greedy_arena_bytes"].get<int64_t>());

  absl::StatusOr<memory::BufferTable> output = memory::ReadBufferCsv(out_csv);
  ASSERT_TRUE(output.ok()) << output.status();
  const std::vector<memory::Buffer>& rows = output->buffers;
  ASSERT_EQ(rows.size(), input->buffers.size());
  EXPECT_EQ(output->ids, input->ids);
  std::ifstream f(out_csv);
  std::string line;
  std::getline(f, line);
  memory::OffsetPlan plan{.lower_bound = j["lower_bound"].get<int64_t>()};
  for (size_t i = 0; std::getline(f, line); ++i) {
    plan.offsets.push_back(std::stoll(line.substr(line.rfind(',') + 1)));
    EXPECT_EQ(rows[i].size, input->buffers[i].size);
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets.back() + rows[i].size);
  }
  EXPECT_EQ(plan.arena_bytes, j["arena_bytes"].get<int64_t>());
  EXPECT_TRUE(memory::CheckOffsets(rows, plan).ok()) << memory::CheckOffsets(rows, plan);
}

TEST(MemoryCommandTest, MalformedCsvNamesFileLineAndFieldAndWritesNothing) {
  const std::string in = WriteTemp("bad.csv", "id,lower,upper,size\n0,0,2,8\n1,0,x,4\n");
  const std::string out_csv = TempPath("bad.out.csv");
  CommandResult r = Memory({"--buffers", in, "-o", out_csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(in + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("upper"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(out_csv));
}

// MiniMalloc's ids are text: any id reads, and the output names each row as the input did.
TEST(MemoryCommandTest, TextIdsAreWrittenBackUnchanged) {
  const std::string in = WriteTemp("text_ids.csv",
                                   "id,lower,upper,size\n"
                                   "b12,0,2,100\n"
                                   "x,1,3,50\n"
                                   "\"conv1, out\",2,4,100\n"
                                   "\" say \"\"hi\"\" \",3,5,50\n");
  const std::string out_csv = TempPath("text_ids.out.csv");
  CommandResult r = Memory({"--buffers", in, "-o", out_csv, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["arena_bytes"], 150);
  std::ifstream f(out_csv);
  std::vector<std::string> ids;
  for (std::string line; std::getline(f, line);) ids.push_back(line.substr(0, line.find(",")));
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids[1], "b12");
  EXPECT_EQ(ids[2], "x");
  absl::StatusOr<memory::BufferTable> back = memory::ReadBufferCsv(out_csv);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ids,
            (std::vector<std::string>{"b12", "x", "conv1, out", " say \"hi\" "}));
}

TEST(MemoryCommandTest, RepeatedIdNamesBothLines) {
  const std::string in = WriteTemp("repeated.csv", "id,lower,upper,size\nb1,0,2,8\nb1,1,3,8\n");
  CommandResult r = Memory({"--buffers", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(in + ":3: id 'b1' repeats line 2"), std::string::npos) << r.err;
}

TEST(MemoryCommandTest, InvalidBufferNamesItAndWritesNothing) {
  const std::string in = WriteTemp("empty_life.csv", "id,lower,upper,size\n0,0,2,8\n7,5,5,4\n");
  const std::string out_csv = TempPath("empty_life.out.csv");
  CommandResult r = Memory({"--buffers", in, "-o", out_csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(in + ":3: buffer '7': end 5 must be greater than start 5"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out_csv));
}

TEST(MemoryCommandTest, MissingFileIsAnInputError) {
  const std::string in = TempPath("does_not_exist.csv");
  const std::string out_csv = TempPath("missing.out.csv");
  CommandResult r = Memory({"--buffers", in, "-o", out_csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(in), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_csv));

  const std::string dir = testing::TempDir();
  CommandResult d = Memory({"--buffers", dir, "-o", out_csv});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.err.find(dir), std::string::npos) << d.err;
  EXPECT_FALSE(fs::exists(out_csv));
}

TEST(MemoryCommandTest, BadTimeLimitIsAUsageError) {
  const std::string in = WriteTemp("tl.csv", kStaircase);
  const std::string out_csv = TempPath("tl.out.csv");
  for (const char* bad : {"0", "-1", "abc", "nan", "inf"}) {
    CommandResult r = Memory({"--buffers", in, "--time-limit", bad, "-o", out_csv});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--time-limit"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("'") + bad + "'"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out_csv)) << bad;
  }
}

TEST(MemoryCommandTest, AMistypedBuffersFlagSuggestsTheListForm) {
  CommandResult r = Memory({"--buffer", "x.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown option '--buffer'; did you mean '--buffers'?"), std::string::npos)
      << r.err;
}

TEST(MemoryCommandTest, ModelFormWithoutAModelIsAUsageError) {
  CommandResult r = Memory({});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing MODEL"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(MemoryCommandTest, HelpListsBothForms) {
  CommandResult r = Memory({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* want : {"tessera memory MODEL", "--devices N", "--optimizer", "--top K",
                           "--export-buffers FILE", "--buffers IN.csv", "-o OUT.csv",
                           "--time-limit S", "--format"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

TEST(MemoryCommandTest, ModelFormReportsACheckedArenaPerDevice) {
  const std::string csv = TempPath("alexnet_dev0.csv");
  CommandResult r = Memory({"zoo:alexnet", "--devices", "4", "--batch", "32", "--optimizer",
                            "adam", "--format", "json", "--top", "3", "--export-buffers", csv});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "alexnet");
  EXPECT_EQ(j["batch"], 32);
  ASSERT_EQ(j["devices"].size(), 4u);
  const nlohmann::json& d = j["devices"][0];
  const int64_t arena = d["arena_bytes"], lower = d["lower_bound_bytes"],
                no_reuse = d["no_reuse_bytes"], params = d["params_bytes"];
  EXPECT_GT(lower, 0);
  EXPECT_GE(arena, lower);
  EXPECT_LE(arena, no_reuse);
  EXPECT_EQ(d["optimizer_bytes"], 2 * params);  // Adam: m and v
  EXPECT_EQ(d["total_bytes"], params + int64_t{d["grads_bytes"]} + int64_t{d["optimizer_bytes"]} +
                                  int64_t{d["comm_buffer_bytes"]} + arena);
  ASSERT_EQ(d["live_at_peak"].size(), 3u);
  EXPECT_GE(d["live_at_peak"][0]["bytes"], d["live_at_peak"][1]["bytes"]);
  // The exported buffers re-check independently and give the same arena and bound.
  absl::StatusOr<memory::BufferTable> buffers = memory::ReadBufferCsv(csv);
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  EXPECT_EQ(static_cast<int64_t>(buffers->buffers.size()), int64_t{d["transient_buffers"]});
  EXPECT_EQ(memory::LiveBytesLowerBound(buffers->buffers), lower);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "id,lower,upper,size,offset");
}

TEST(MemoryCommandTest, MoreDevicesHoldLessActivationMemoryEach) {
  int64_t previous = INT64_MAX;
  for (const char* devices : {"1", "2", "8"}) {
    CommandResult r = Memory({"zoo:resnet50", "--devices", devices, "--batch", "16",
                              "--strategy", "data", "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const int64_t lower = nlohmann::json::parse(r.out)["devices"][0]["lower_bound_bytes"];
    EXPECT_LT(lower, previous) << devices;
    previous = lower;
  }
}

TEST(MemoryCommandTest, ModelFormErrorsNameTheProblem) {
  CommandResult missing = Memory({"zoo:lenet"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("lenet"), std::string::npos) << missing.err;
  CommandResult uneven = Memory({"zoo:alexnet", "--devices", "3", "--batch", "32"});
  EXPECT_EQ(uneven.code, 1);
  EXPECT_NE(uneven.err.find("multiple of 3"), std::string::npos) << uneven.err;
  CommandResult table = Memory({"zoo:crnn", "--batch", "4"});
  EXPECT_EQ(table.code, 0) << table.err;
  for (const char* want : {"arena (planned)", "lower bound", "without reuse",
                           "largest tensors live at the peak"}) {
    EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
  }
}

TEST(MemoryCommandTest, PlanFailingTheCheckerIsAnInternalErrorAndWritesNothing) {
  BufferPlanRun run{.input = "two.csv",
                    .buffers = {{.id = 4, .start = 0, .end = 2, .size = 8},
                                {.id = 9, .start = 1, .end = 3, .size = 8}}};
  // Both at offset 0 while both live at step 1: overlapping.
  run.plan = {.offsets = {0, 0}, .arena_bytes = 8, .lower_bound = 16};
  const std::string out_csv = TempPath("internal.out.csv");
  std::ostringstream out, err;
  EXPECT_EQ(FinishBufferPlan(run, "table", out_csv, out, err), 3);
  EXPECT_NE(err.str().find("internal error"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("two.csv"), std::string::npos) << err.str();
  EXPECT_TRUE(out.str().empty());
  EXPECT_FALSE(fs::exists(out_csv));
}

TEST(MemoryCommandTest, UnwritableOutputIsAFileError) {
  const std::string in = WriteTemp("unwritable.csv", kStaircase);
  const std::string out_csv = TempPath("no_such_dir") + "/out.csv";
  CommandResult r = Memory({"--buffers", in, "-o", out_csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(out_csv), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_csv));
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_MEMORY_COMMAND
