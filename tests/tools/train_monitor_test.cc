// `tessera train --eval-every N --log FILE --html FILE`: evaluations during training on the nmt
// and ocr jobs (and nmt on parallel text), the log's lines, the report, training unchanged by
// them, and files that cannot be written refused before training.
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/exec/param_file.h"
#include "tessera/tools/train_command.h"

#include "command_runner.h"
#include "test_files.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Args(const std::string& model, const std::vector<std::string>& more) {
  std::vector<std::string> a = {model,       "--workers", "2", "--steps",   "6",
                                "--batch",   "4",         "--cluster",   "v100-vpc32",
                                "--threads", "1",         "--eval-batches", "1"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line));  // throws (fails the test) on a bad line
  }
  return lines;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The log: a run line, a line per step, an evaluation after step 3 and the final one at 6.
void CheckLog(const std::string& path, const std::string& model, const std::string& metric) {
  const std::vector<nlohmann::json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u + 6u + 2u) << model;
  EXPECT_EQ(lines[0]["run"]["model"], model);
  EXPECT_EQ(lines[0]["run"]["eval_every"], 3);
  EXPECT_EQ(lines[0]["run"]["first_step"], 0);
  std::vector<int64_t> step_lines, eval_lines;
  for (size_t i = 1; i < lines.size(); ++i) {
    const nlohmann::json& j = lines[i];
    if (j.contains("eval")) {
      eval_lines.push_back(j["step"]);
      EXPECT_TRUE(j["eval"].contains(metric)) << j;
      EXPECT_TRUE(j["eval"][metric].is_number()) << j;
      continue;
    }
    step_lines.push_back(j["step"]);
    for (const char* f : {"loss", "lr", "samples_per_s", "time_s"}) {
      EXPECT_TRUE(j[f].is_number()) << model << " " << f << ": " << j;
    }
    EXPECT_GT(j["samples_per_s"].get<double>(), 0) << j;
  }
  EXPECT_EQ(step_lines, (std::vector<int64_t>{1, 2, 3, 4, 5, 6})) << model;
  EXPECT_EQ(eval_lines, (std::vector<int64_t>{3, 6})) << model;
}

TEST(TrainMonitorTest, NmtAndOcrLogEveryStepAndEvaluationAndWriteTheReport) {
  for (const auto& [model, metric] : {std::pair{"nmt", "token_accuracy"},
                                      std::pair{"ocr", "char_accuracy"}}) {
    const std::string log = TempPath(std::string(model) + "_train.jsonl");
    const std::string html = TempPath(std::string(model) + "_train.html");
    CommandResult r =
        RunCommand(RunTrain, Args(model, {"--eval-every", "3", "--log", log, "--html", html}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("step 3  held-out  " + std::string(metric)), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("tessera train: wrote " + html), std::string::npos) << r.err;
    CheckLog(log, model, metric);
    const std::string page = ReadText(html);
    EXPECT_NE(page.find("<h2>Held-out " + std::string(metric) + "</h2>"), std::string::npos);
    EXPECT_NE(page.find("<h2>Loss</h2>"), std::string::npos);
  }
}

// nmt on parallel text (the committed sample; a small vocabulary trained on it).
TEST(TrainMonitorTest, NmtOnParallelTextEvaluatesEveryNSteps) {
  const std::string log = TempPath("corpus_train.jsonl");
  const std::string params = TempPath("corpus_train.tsp");
  CommandResult r = RunCommand(
      RunTrain, Args("nmt", {"--train", TESSERA_SOURCE_DIR "/tests/data/corpora/nmt_sample.tsv",
                            "--vocab-size", "120", "--max-length", "16", "--save-params",
                            params, "--eval-every", "3", "--log", log, "--quiet"}));
  ASSERT_EQ(r.code, 0) << r.err;
  CheckLog(log, "nmt", "sacrebleu");
}

// The same run with and without evaluations during training: the same parameters, bit for bit.
TEST(TrainMonitorTest, EvaluatingDuringTrainingChangesNothing) {
  const std::string plain = TempPath("monitor_plain.tsp"), hooked = TempPath("monitor_hook.tsp");
  ASSERT_EQ(RunCommand(RunTrain, Args("nmt", {"--quiet", "--save-params", plain})).code, 0);
  CommandResult r = RunCommand(RunTrain, Args("nmt", {"--quiet", "--save-params", hooked,
                                                     "--eval-every", "2"}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = exec::ReadParamFile(plain), b = exec::ReadParamFile(hooked);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].name, (*b)[i].name);
    EXPECT_EQ((*a)[i].values, (*b)[i].values) << (*a)[i].name;
  }
}

TEST(TrainMonitorTest, TheLogIsAppendedToAndUnwritableFilesAreRefusedFirst) {
  const std::string log = TempPath("appended.jsonl");
  std::ofstream(log) << "{\"earlier\": 1}\n";
  ASSERT_EQ(RunCommand(RunTrain, Args("nmt", {"--quiet", "--steps", "2", "--log", log})).code, 0);
  const std::vector<nlohmann::json> lines = ReadLines(log);
  ASSERT_EQ(lines.size(), 1u + 1u + 2u + 1u);  // earlier, run, 2 steps, the final evaluation
  EXPECT_EQ(lines[0]["earlier"], 1);
  for (const char* flag : {"--log", "--html"}) {
    const std::string bad = TempPath("no_such_folder") + "/run.out";
    CommandResult r = RunCommand(RunTrain, Args("nmt", {"--quiet", flag, bad}));
    EXPECT_EQ(r.code, 1) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + " " + bad), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pass a file in a folder you can write"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("final loss"), std::string::npos) << flag << ": trained first";
  }
  CommandResult folder =
      RunCommand(RunTrain, Args("nmt", {"--quiet", "--html", testing::TempDir()}));
  EXPECT_EQ(folder.code, 1);
  EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
}

TEST(TrainMonitorTest, EvalEveryNeedsAJobWithHeldOutBatches) {
  CommandResult zoo = RunCommand(RunTrain, {"zoo:alexnet", "--eval-every", "2", "--quiet"});
  EXPECT_EQ(zoo.code, 1);
  EXPECT_NE(zoo.err.find("--eval-every is for the nmt and ocr jobs"), std::string::npos)
      << zoo.err;
  CommandResult none =
      RunCommand(RunTrain, Args("nmt", {"--quiet", "--eval-every", "2", "--eval-batches", "0"}));
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("--eval-batches 0 turns evaluation off"), std::string::npos)
      << none.err;
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_CALIBRATE_COMMAND
