// `tessera train --trace FILE`: the measured timeline as Chrome trace JSON, a process per
// worker with its nodes' forward and backward spans, and per worker and step the collectives'
// bytes equal to the report's bytes per device (docs/timeline.md).
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "tessera/tools/train_command.h"

#include "command_runner.h"
#include "test_files.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

struct Worker {
  std::map<int, std::string> tracks;                   // tid -> name
  std::map<int64_t, int64_t> bytes;                    // step -> collectives' bytes
  std::map<int64_t, std::set<std::string>> compute;    // step -> compute span names
  std::map<std::string, int> spans_per_track;
};

std::map<int, Worker> ReadTrace(const nlohmann::json& trace, std::map<int, std::string>& names) {
  std::map<int, Worker> workers;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const int pid = e.at("pid");
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name") names[pid] = e.at("args").at("name");
      if (e.at("name") == "thread_name") workers[pid].tracks[e.at("tid")] = e.at("args").at("name");
      continue;
    }
    EXPECT_EQ(e.at("ph"), "X");
    EXPECT_GE(e.at("ts").get<double>(), 0);
    EXPECT_GE(e.at("dur").get<double>(), 0);
    Worker& w = workers[pid];
    const std::string track = w.tracks.at(e.at("tid"));
    ++w.spans_per_track[track];
    const int64_t step = e.at("args").at("step");
    if (track == "compute") w.compute[step].insert(e.at("name").get<std::string>());
    if (e.at("args").contains("bytes")) {
      EXPECT_TRUE(e.at("args").at("collective").is_string());
      w.bytes[step] += e.at("args").at("bytes").get<int64_t>();
    }
  }
  return workers;
}

void CheckTrace(const std::string& strategy, const std::vector<std::string>& extra,
                size_t steps_traced, const std::string& channel) {
  const std::string trace = TempPath("train_trace_" + strategy + ".json");
  const std::string report = TempPath("train_trace_report_" + strategy + ".json");
  std::vector<std::string> args = {"nmt", "--workers", "2", "--steps", "3", "--batch", "4",
                                   "--cluster", "v100-vpc32", "--op-times", "model",
                                   "--threads", "1", "--eval-batches", "0", "--quiet",
                                   "--strategy", strategy, "--trace", trace,
                                   "--report-json", report};
  args.insert(args.end(), extra.begin(), extra.end());
  CommandResult r = RunCommand(RunTrain, args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("tessera train: wrote " + trace), std::string::npos) << r.err;
  const nlohmann::json j = ReadJson(trace);
  const int64_t per_device = ReadJson(report).at("measured").at("comm_bytes");
  ASSERT_GT(per_device, 0);
  std::map<int, std::string> names;
  const std::map<int, Worker> workers = ReadTrace(j, names);
  EXPECT_EQ(names, (std::map<int, std::string>{{0, "worker 0"}, {1, "worker 1"}}));
  ASSERT_EQ(workers.size(), 2u);
  for (const auto& [pid, w] : workers) {
    const std::string what = strategy + " worker " + std::to_string(pid);
    EXPECT_EQ(w.tracks.at(0), "compute") << what;
    EXPECT_GT(w.spans_per_track.count(channel) ? w.spans_per_track.at(channel) : 0, 0) << what;
    ASSERT_EQ(w.compute.size(), steps_traced) << what;
    EXPECT_EQ(w.compute.rbegin()->first, 2) << what << ": the last steps are kept";
    for (const auto& [step, spans] : w.compute) {
      for (const char* n : {"classifier forward", "classifier backward", "optimizer update"}) {
        EXPECT_TRUE(spans.contains(n)) << what << " step " << step << ": no " << n;
      }
      ASSERT_TRUE(w.bytes.contains(step)) << what << " step " << step;
      EXPECT_EQ(w.bytes.at(step), per_device) << what << " step " << step;
    }
  }
}

TEST(TrainTraceTest, DataParallelGradientBuckets) {
  CheckTrace("data", {}, /*steps_traced=*/3, "gradients");
}

TEST(TrainTraceTest, ModelParallelActivationCollectives) {
  CheckTrace("model", {"--trace-steps", "2"}, /*steps_traced=*/2, "activations");
}

// Training that fails (its checkpoint folder cannot be made: a file is in the way) writes no
// trace.
TEST(TrainTraceTest, NoFileWhenTrainingFails) {
  const std::string trace = TempPath("train_trace_failed.json");
  const std::string in_the_way = TempPath("train_trace_not_a_folder");
  std::ofstream(in_the_way) << "a file\n";
  CommandResult r = RunCommand(RunTrain, {"nmt", "--workers", "2", "--steps", "1", "--batch",
                                          "4", "--cluster", "v100-vpc32", "--op-times", "model",
                                          "--eval-batches", "0", "--quiet", "--threads", "1",
                                          "--checkpoint", in_the_way + "/run", "--trace", trace});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("checkpoint"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(trace));
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_CALIBRATE_COMMAND
