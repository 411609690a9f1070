#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/plan_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/tests/partitioner/plan_output_contract.h"

#include "command_runner.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

CommandResult Plan(const std::vector<std::string>& args) { return RunCommand(RunPlan, args); }

std::string TempPath(const std::string& name) {
  const fs::path p = fs::path(testing::TempDir()) / name;
  fs::remove(p);
  return p.string();
}

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const std::vector<std::string> kAlexnet64 = {"zoo:alexnet", "--devices", "64", "--cluster",
                                             "v100-vpc32", "--batch", "2048"};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PlanCommandTest, JsonFollowsTheContract) {
  CommandResult r = Plan(With(kAlexnet64, {"--format", "json", "--optimizer", "adam"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto problems = partitioner::testing_contract::PlanContractViolations(
      j, j["layers"].size(), 64);
  EXPECT_TRUE(problems.empty()) << absl::StrJoin(problems, "\n");
  EXPECT_EQ(j["model"]["name"], "alexnet");
  EXPECT_EQ(j["model"]["params"], 61100840);
  EXPECT_EQ(j["model"]["batch"], 2048);
  EXPECT_EQ(j["cluster"]["name"], "v100-vpc32");
  EXPECT_EQ(j["cluster"]["devices"], 64);
  EXPECT_EQ(j["cluster"]["nodes"], 8);
  // Every layer's parameters add up to the model's (each parameter used once in AlexNet).
  int64_t params = 0;
  for (const auto& l : j["layers"]) params += l["params"].get<int64_t>();
  EXPECT_EQ(params, 61100840);
}

// A plan is a function of the model, the options and the cluster: the same command writes the
// same bytes (the activation arena's search runs to an iteration budget, not a clock).
TEST(PlanCommandTest, TheSameInputsGiveByteIdenticalPlans) {
  for (const char* model : {"zoo:resnet50", "zoo:gnmt", "nmt", "ocr"}) {
    const std::vector<std::string> args = {model, "--devices", "8", "--cluster", "v100-ib100",
                                           "--optimizer", "adam", "--format", "json"};
    CommandResult a = Plan(args), b = Plan(args);
    ASSERT_EQ(a.code, 0) << model << ": " << a.err;
    EXPECT_EQ(a.out, b.out) << model;
    EXPECT_GT(a.out.size(), 1000u) << model;
  }
}

TEST(PlanCommandTest, DataStrategyPlansEveryLayerDataParallel) {
  CommandResult r = Plan(With(kAlexnet64, {"--format", "json", "--strategy", "data"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& l : j["layers"]) {
    EXPECT_TRUE(l["strategy"] == "data_parallel" || l["strategy"] == "replicated") << l["name"];
  }
}

TEST(PlanCommandTest, TableByDefault) {
  CommandResult r = Plan(kAlexnet64);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"plan for alexnet on v100-vpc32: 64 devices (8 nodes), global batch 2,048",
                        "classifier.1", "predicted step", "memory per device", "all data_parallel",
                        "all model_parallel"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

// --bucket-size and --first-bucket-size fix the gradient buckets (the JSON says "tuned": false);
// without them the planner chooses; the table shows them either way.
TEST(PlanCommandTest, BucketSizesAreChosenUnlessGiven) {
  CommandResult chosen = Plan(With(kAlexnet64, {"--format", "json"}));
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  const auto c = nlohmann::json::parse(chosen.out)["gradient_buckets"];
  EXPECT_TRUE(c["tuned"].get<bool>());
  EXPECT_GT(c["count"].get<int>(), 0);
  CommandResult given = Plan(With(kAlexnet64, {"--format", "json", "--bucket-size", "4MiB",
                                               "--first-bucket-size", "512KiB"}));
  ASSERT_EQ(given.code, 0) << given.err;
  const auto g = nlohmann::json::parse(given.out)["gradient_buckets"];
  EXPECT_FALSE(g["tuned"].get<bool>());
  EXPECT_EQ(g["bucket_bytes"], 4 << 20);
  EXPECT_EQ(g["first_bucket_bytes"], 512 << 10);
  CommandResult table = Plan(With(kAlexnet64, {"--bucket-size", "4MiB"}));
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("the others up to 4.00 MiB"), std::string::npos) << table.out;
  CommandResult bad = Plan(With(kAlexnet64, {"--bucket-size", "4 parsecs"}));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("'4 parsecs' is not a size in bytes"), std::string::npos) << bad.err;
}

TEST(PlanCommandTest, WritesHtmlAndTraceFiles) {
  const std::string html = TempPath("plan.html"), trace = TempPath("trace.json");
  CommandResult r = Plan(With(kAlexnet64, {"--format", "html", "-o", html, "--trace", trace}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // the plan went to the file
  const std::string page = Read(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("classifier.1"), std::string::npos);
  // The cluster's figures: the preset's device, and the 64 devices on 8 nodes it was sized to.
  const costmodel::ClusterSpec v100 = *costmodel::ClusterPreset("v100-vpc32");
  EXPECT_NE(page.find(absl::StrCat("<td>", v100.device.name, "</td>")), std::string::npos);
  EXPECT_NE(page.find("<td>64 on 8 nodes (8 per node)</td>"), std::string::npos);
  EXPECT_NE(page.find("global batch 2,048"), std::string::npos);
  const auto t = nlohmann::json::parse(Read(trace));
  EXPECT_FALSE(t["traceEvents"].empty());
  EXPECT_FALSE(fs::exists(html + ".tmp-tessera-0"));
  EXPECT_FALSE(fs::exists(trace + ".tmp-tessera-1"));
}

// Every error: the exit code, a message naming the problem, and no file written.
void ExpectFailsWritingNothing(const std::vector<std::string>& args, int code,
                               const std::string& message) {
  const std::string out = TempPath("never.json"), trace = TempPath("never_trace.json");
  CommandResult r = Plan(With(args, {"--format", "json", "-o", out, "--trace", trace}));
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << message;
  EXPECT_FALSE(fs::exists(trace)) << message;
}

TEST(PlanCommandTest, ErrorsWriteNothing) {
  const std::string bad_cluster = TempPath("bad_cluster.json");
  std::ofstream(bad_cluster) << "{\"name\": \"x\", \"devices_per_node\": \"eight\"}";
  ExpectFailsWritingNothing({"zoo:alexnet", "--devices", "8", "--cluster", bad_cluster}, 1,
                            "bad_cluster.json");
  ExpectFailsWritingNothing({"zoo:alexnet", "--devices", "0", "--cluster", "v100-vpc32"}, 2,
                            "--devices must be at least 1, got 0");
  ExpectFailsWritingNothing(
      {"zoo:alexnet", "--devices", "64", "--cluster", "v100-vpc32", "--batch", "100"}, 1,
      "the global batch 100 of model 'zoo:alexnet' does not divide over 64 devices");
  ExpectFailsWritingNothing({"zoo:alexnet", "--devices", "8", "--cluster", "v100-nvlink9"}, 1,
                            "v100-nvlink9");
  ExpectFailsWritingNothing(
      {"zoo:alexnet", "--devices", "8", "--cluster", "v100-vpc32", "--strategy", "fastest"}, 2,
      "--strategy must be one of auto, data, model, late, optimal; got 'fastest'");
  ExpectFailsWritingNothing({"zoo:nosuchnet", "--devices", "8", "--cluster", "v100-vpc32"}, 1,
                            "nosuchnet");
  ExpectFailsWritingNothing({"zoo:alexnet", "--cluster", "v100-vpc32"}, 2,
                            "--devices N is required");
  ExpectFailsWritingNothing({"zoo:alexnet", "--devices", "8"}, 2, "--cluster NAME|FILE is required");
}

TEST(PlanCommandTest, UnwritableOutputLeavesNoTrace) {
  const std::string trace = TempPath("orphan_trace.json");
  CommandResult r = Plan(With(kAlexnet64, {"-o", "/nonexistent-dir/plan.txt", "--trace", trace}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/nonexistent-dir/plan.txt"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(trace));
  for (const auto& entry : fs::directory_iterator(fs::path(trace).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("orphan_trace.json", 0), std::string::npos)
        << "left behind: " << entry.path();  // no temporary of the trace either
  }
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_PLAN_COMMANDS
