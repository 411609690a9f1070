// `tessera train`: the report JSON's contract, the parameter file, plan files, and errors that
// name what is wrong (the hybrid runtime's numbers are tested in tests/exec).
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include "tessera/tools/train_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/base/file_io.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/param_file.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/parameters.h"
#include "tessera/partitioner/plan_file.h"
#include "tessera/tools/model_loader.h"
#include "tessera/tools/plan_command.h"

#include "command_runner.h"
#include "scoped_env.h"
#include "test_files.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSmallRun = {"nmt",    "--workers", "2",       "--steps", "2",
                                            "--batch", "4",        "--cluster", "v100-vpc32",
                                            "--quiet", "--threads", "1"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(TrainCommandTest, ReportJsonAndParameterFile) {
  const std::string report = TempPath("train_report.json"), params = TempPath("train.tsp");
  CommandResult r = RunCommand(RunTrain, With(kSmallRun, {"--strategy", "late", "--report",
                                                          "--report-json", report,
                                                          "--save-params", params}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bytes sent per device"), std::string::npos) << r.out;
  const nlohmann::json j = ReadJson(report);
  for (const char* side : {"predicted", "measured"}) {
    for (const char* f : {"step_time_s", "compute_s", "comm_s", "exposed_comm_s", "comm_bytes"}) {
      EXPECT_TRUE(j[side].contains(f)) << side << "." << f;
    }
  }
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["op_times"], "model");  // another machine's cluster: its cost model
  EXPECT_TRUE(j["bytes_match_plan"].get<bool>());
  EXPECT_EQ(j["measured"]["comm_bytes"], j["predicted"]["comm_bytes"]);
  EXPECT_GT(j["measured"]["step_time_s"].get<double>(), 0);
  bool late = false;
  for (const auto& l : j["layers"]) late = late || l["strategy"] == "late_multiply";
  EXPECT_TRUE(late);
  EXPECT_EQ(j["losses"].size(), 2u);
  // Every parameter of the model, whole.
  auto file = exec::ReadParamFile(params);
  ASSERT_TRUE(file.ok()) << file.status();
  auto g = LoadModel("nmt", {.batch = 4});
  ASSERT_TRUE(g.ok());
  int64_t values = 0;
  for (const auto& p : *file) values += static_cast<int64_t>(p.values.size());
  EXPECT_EQ(values, graph::CountParameters(*g));
}

TEST(TrainCommandTest, FollowsAPlanFileAndRefusesOneForOtherWorkers) {
  const std::string plan = TempPath("plan4.json");
  ASSERT_EQ(RunCommand(RunPlan, {"nmt", "--devices", "4", "--cluster", "v100-vpc32", "--batch",
                                 "4", "--executable", "--format", "json", "-o", plan})
                .code,
            0);
  CommandResult wrong = RunCommand(RunTrain, With(kSmallRun, {"--strategy", plan}));
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("--workers 4"), std::string::npos) << wrong.err;
  CommandResult right = RunCommand(
      RunTrain, {"nmt", "--workers", "4", "--steps", "1", "--batch", "4", "--cluster",
                 "v100-vpc32", "--quiet", "--threads", "1", "--strategy", plan});
  EXPECT_EQ(right.code, 0) << right.err;
}

// A run follows its plan file's gradient buckets; --bucket-size overrides the file's; a file
// without them (older ones) gets the planner's.
TEST(TrainCommandTest, RunsWithThePlanFilesBucketsUnlessTold) {
  const std::string plan = TempPath("buckets.json"), report = TempPath("buckets_report.json");
  ASSERT_EQ(RunCommand(RunPlan, {"nmt", "--devices", "2", "--cluster", "v100-vpc32", "--batch",
                                 "4", "--executable", "--strategy", "data", "--bucket-size",
                                 "128KiB", "--first-bucket-size", "64KiB", "--format", "json",
                                 "-o", plan})
                .code,
            0);
  const auto buckets = [&](const std::vector<std::string>& more) {
    CommandResult r = RunCommand(
        RunTrain, With(kSmallRun, With({"--strategy", plan, "--report-json", report}, more)));
    EXPECT_EQ(r.code, 0) << r.err;
    return ReadJson(report)["gradient_buckets"];
  };
  const nlohmann::json file = buckets({});
  EXPECT_EQ(file["bucket_bytes"], 128 << 10);
  EXPECT_EQ(file["first_bucket_bytes"], 64 << 10);
  EXPECT_FALSE(file["tuned"].get<bool>());
  EXPECT_GT(file["measured_count"].get<int>(), 2);
  EXPECT_EQ(file["measured_count"], file["predicted_count"]);
  const nlohmann::json told = buckets({"--bucket-size", "1MiB"});
  EXPECT_EQ(told["bucket_bytes"], 1 << 20);
  EXPECT_EQ(told["first_bucket_bytes"], 64 << 10);
  EXPECT_LT(told["measured_count"].get<int>(), file["measured_count"].get<int>());
  nlohmann::json older = ReadJson(plan);
  older.erase("gradient_buckets");
  std::ofstream(plan) << older.dump();
  EXPECT_TRUE(buckets({})["tuned"].get<bool>());
}

// A plan file's output layouts are followed too, so one no option of the runtime's has is
// refused (naming the layer) before anything runs.
TEST(TrainCommandTest, FollowsAPlanFilesOutputLayouts) {
  const std::string plan = TempPath("layouts.json");
  std::ofstream(plan) << R"({"layers": [{"name": "classifier", "strategy": "model_parallel",
                                         "layouts": {"output": "replicated"}}]})";
  CommandResult r = RunCommand(RunTrain, With(kSmallRun, {"--strategy", plan}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("layer 'classifier' ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot be model_parallel with its output in the replicated layout here "
                       "in a plan the runtime executes"),
            std::string::npos)
      << r.err;
}

// A file that is not a plan is refused naming the field at fault (the library's error), and
// the command says how to write a plan file.
TEST(TrainCommandTest, RefusesABrokenPlanFileSayingHowToWriteOne) {
  const std::string plan = TempPath("broken_plan.json");
  std::ofstream(plan) << R"({"layers": [{"name": "classifier", "strategy": "fastest"}]})";
  CommandResult r = RunCommand(RunTrain, With(kSmallRun, {"--strategy", plan}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(plan + ": layers[0] (\"classifier\").strategy: unknown strategy 'fastest'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; write a plan file with `tessera plan MODEL ... --format json -o " + plan +
                       "`"),
            std::string::npos)
      << r.err;
}

// The NMT classifier (256 -> 2000) at 80 rows: the formula says late-multiply's gathers of X and
// dY (80 x 2256 values) move fewer bytes than data parallelism's all-reduce of 514,000 weights;
// the measured bytes agree, and each equals its plan's.
TEST(TrainCommandTest, LateMultiplyMovesFewerBytesWhereTheFormulaSaysSo) {
  std::map<std::string, nlohmann::json> row;
  for (const std::string strategy : {"data", "late"}) {
    const std::string report = TempPath("bytes_" + strategy + ".json");
    CommandResult r = RunCommand(RunTrain, With(kSmallRun, {"--strategy", strategy,
                                                            "--report-json", report}));
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = ReadJson(report);
    for (const auto& l : j["layers"]) {
      if (l["name"] == "classifier") row[strategy] = l;
    }
    ASSERT_TRUE(row.contains(strategy)) << strategy;
    EXPECT_EQ(row[strategy]["measured"]["comm_bytes"], row[strategy]["predicted"]["comm_bytes"]);
  }
  EXPECT_EQ(row["late"]["strategy"], "late_multiply");
  const int64_t p = 2, rows = 20 * 4, m = 256, n = 2000;
  EXPECT_EQ(row["late"]["predicted"]["comm_bytes"].get<int64_t>(), (p - 1) * rows * (m + n) * 4 / p);
  EXPECT_EQ(row["data"]["predicted"]["comm_bytes"].get<int64_t>(), 2 * (p - 1) * (m * n + n) * 4 / p);
  EXPECT_LT(row["late"]["measured"]["comm_bytes"].get<int64_t>(),
            row["data"]["measured"]["comm_bytes"].get<int64_t>());
}

// Where the planner's cost model makes the hybrid plan cheaper in bytes (the m40-pcie cluster
// puts nmt's classifier late-multiply at 4 sentences per worker), the bytes measured per step
// are below the data-parallel plan's by exactly the factor the plan predicted.
TEST(TrainCommandTest, HybridPlanMovesFewerBytesByThePredictedFactor) {
  std::map<std::string, nlohmann::json> run;
  for (const std::string strategy : {"data", "auto"}) {
    const std::string report = TempPath("factor_" + strategy + ".json");
    CommandResult r = RunCommand(RunTrain, {"nmt", "--workers", "2", "--steps", "2", "--batch",
                                            "8", "--cluster", "m40-pcie", "--strategy", strategy,
                                            "--eval-batches", "0", "--threads", "1", "--quiet",
                                            "--report-json", report});
    ASSERT_EQ(r.code, 0) << r.err;
    run[strategy] = ReadJson(report);
  }
  bool hybrid = false;
  for (const auto& l : run["auto"]["layers"]) hybrid = hybrid || l["strategy"] != "data_parallel";
  EXPECT_TRUE(hybrid) << "the auto plan should split some layer other than data-parallel";
  const auto bytes = [&](const std::string& s, const char* side) {
    return run[s][side]["comm_bytes"].get<double>();
  };
  const double predicted = bytes("auto", "predicted") / bytes("data", "predicted");
  const double measured = bytes("auto", "measured") / bytes("data", "measured");
  EXPECT_LT(measured, 1.0);
  EXPECT_DOUBLE_EQ(measured, predicted);
}

// nmt and ocr train on their task and are evaluated on the held-out split: the metrics are
// printed and written with the run's facts.
TEST(TrainCommandTest, JobsWriteTheirHeldOutMetrics) {
  const std::map<std::string, std::vector<std::string>> keys = {
      {"nmt", {"token_accuracy", "bleu", "loss"}},
      {"ocr", {"char_accuracy", "line_accuracy", "loss"}}};
  for (const auto& [model, names] : keys) {
    const std::string metrics = TempPath(model + "_metrics.json");
    std::vector<std::string> args = kSmallRun;
    args[0] = model;
    CommandResult r = RunCommand(RunTrain, With(args, {"--eval-batches", "1", "--metrics-json",
                                                       metrics}));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("held-out  " + names[0]), std::string::npos) << r.out;
    const nlohmann::json j = ReadJson(metrics);
    for (const std::string& k : names) {
      ASSERT_TRUE(j.contains(k)) << model << ": " << k;
      EXPECT_GE(j[k].get<double>(), 0.0) << model << ": " << k;
    }
    EXPECT_LE(j[names[0]].get<double>(), 1.0);
    EXPECT_EQ(j["steps"], 2);
    EXPECT_EQ(j["workers"], 2);
    EXPECT_EQ(j["model"], model);
    EXPECT_GT(j["seconds"].get<double>(), 0.0);
  }
}

// nmt and ocr on files (the committed corpus samples): each trains, evaluates on its held-out
// part and writes what it says; the vocabulary is kept in the checkpoint directory and reused
// on resume; options of the other job, or without --train, are usage errors; a bad line is
// named by file and line.
TEST(TrainCommandTest, JobsTrainOnFilesAndRefuseMisuse) {
  const std::string samples = std::string(TESSERA_SOURCE_DIR) + "/tests/data/corpora/";
  const auto fresh_dir = [](const std::string& name) {  // TempPath removes files, not folders
    const fs::path p = fs::path(testing::TempDir()) / name;
    fs::remove_all(p);
    return p.string();
  };
  const std::string ck = fresh_dir("nmt_files_ck"), metrics = TempPath("nmt_files.json");
  const std::string translations = TempPath("nmt_predictions.tsv");
  const std::vector<std::string> nmt = {"nmt", "--train", samples + "nmt_sample.tsv",
                                        "--vocab-size", "300", "--max-length", "24",
                                        "--workers", "2", "--steps", "2", "--batch", "4",
                                        "--cluster", "v100-vpc32", "--threads", "1",
                                        "--eval-batches", "1", "--checkpoint", ck};
  CommandResult r = RunCommand(RunTrain, With(nmt, {"--metrics-json", metrics, "--beam", "2",
                                                    "--predictions", translations}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("training a vocabulary of 300 pieces"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(ck + "/sentencepiece.model"));
  EXPECT_TRUE(ReadJson(metrics).contains("sacrebleu"));
  EXPECT_EQ(ReadJson(metrics)["sentences"], 4);  // one batch of the held-out pairs
  {  // each held-out pair's source and its translation, as in the training file
    const std::string sample = *base::ReadFileText(samples + "nmt_sample.tsv", "sample", 1 << 24);
    std::ifstream in(translations);
    int lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      const size_t tab = line.find('\t');
      ASSERT_NE(tab, std::string::npos) << line;
      EXPECT_NE(sample.find(line.substr(0, tab) + "\t"), std::string::npos) << line;
    }
    EXPECT_EQ(lines, 4);
  }
  // A sentence's beam hypotheses run as rows of the batch: a wider beam is refused up front.
  r = RunCommand(RunTrain, With(nmt, {"--beam", "5", "--steps", "3"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--beam 5 is more than the global batch 4"), std::string::npos) << r.err;
  const std::string resumed = TempPath("nmt_files_resumed.tsp");
  r = RunCommand(RunTrain, With(nmt, {"--steps", "3", "--save-params", resumed}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("reusing the vocabulary"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resumed from step 2"), std::string::npos) << r.err;
  // Resuming with --dropout would add layers the checkpoint's model lacks: refused, naming it.
  r = RunCommand(RunTrain, With(nmt, {"--steps", "4", "--dropout", "0.2"}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("layer encoder.embedding.dropout: checkpoint absent, this run "),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--dropout: the model's layers differ)"), std::string::npos) << r.err;
  // Resumed on file data, the parameters equal an uninterrupted run's byte for byte.
  const std::string ck2 = fresh_dir("nmt_files_ck2"), straight = TempPath("nmt_files_straight.tsp");
  std::vector<std::string> once = nmt;
  once.back() = ck2;
  r = RunCommand(RunTrain, With(once, {"--steps", "3", "--vocab", ck + "/sentencepiece.model",
                                       "--save-params", straight}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(*base::ReadFileText(resumed, "params", 1 << 30),
            *base::ReadFileText(straight, "params", 1 << 30));
  // One vocabulary per side, both kept in the checkpoint directory.
  std::vector<std::string> per_side = nmt;
  per_side.back() = fresh_dir("nmt_files_ck3");
  r = RunCommand(RunTrain, With(per_side, {"--steps", "1", "--separate-vocab", "--dropout", "0.2",
                                           "--quiet"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("training a vocabulary per side of 300 pieces"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(per_side.back() + "/sentencepiece.src.model"));
  EXPECT_TRUE(fs::exists(per_side.back() + "/sentencepiece.tgt.model"));

  const std::string predictions = TempPath("ocr_predictions.tsv");
  r = RunCommand(RunTrain, {"ocr", "--train", samples + "ocr_sample/lines.tsv", "--width", "512",
                            "--workers", "2", "--steps", "2", "--batch", "4", "--cluster",
                            "v100-vpc32", "--threads", "1", "--eval-batches", "1", "--augment",
                            "--predictions", predictions, "--length-buckets", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("held-out  char_accuracy"), std::string::npos) << r.out;
  // Lines of up to 44 characters: the 128 frames' bucket of 32 is too narrow for their labels.
  EXPECT_NE(r.err.find("smallest of 3 shapes that holds it: images [4,1,32,256], [4,1,32,384], "
                       "[4,1,32,512]"),
            std::string::npos)
      << r.err;
  std::ifstream in(predictions);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 2);  // every 20th of the 50 lines held out

  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"ocr", "--train", "x.tsv", "--vocab", "v.model"}, "--vocab is for the nmt job"},
           {{"nmt", "--charset", "c.txt"}, "--charset goes with --train FILE"},
           {{"nmt", "--train", "x.tsv", "--separate-vocab", "--vocab", "v.model"},
            "with --vocab give SRC.model,TGT.model"},
           {{"zoo:alexnet", "--train", "x.tsv"}, "zoo:alexnet cannot read it"},
           {{"ocr", "--train", "x.tsv", "--dropout", "0.2"}, "--dropout is for the nmt job"},
           {{"ocr", "--train", "x.tsv", "--beam", "4"}, "--beam is for the nmt job"},
           {{"nmt", "--beam", "4"}, "--beam goes with --train FILE"},
           {{"nmt", "--train", "x.tsv", "--length-penalty", "-1"},
            "--length-penalty takes a number from 0 to 10, got '-1'"},
           {{"nmt", "--train", "x.tsv", "--dropout", "1"}, "would drop everything"}}) {
    r = RunCommand(RunTrain, args);
    EXPECT_EQ(r.code, 2) << says;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  const std::string bad = TempPath("bad.tsv");
  std::ofstream(bad) << "one\tuno\ntwo dos\n";
  r = RunCommand(RunTrain, {"nmt", "--train", bad, "--quiet"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(bad + ":2: want one tab"), std::string::npos) << r.err;
}

// --length-buckets: the nmt job runs each batch at the shortest length bucket that holds it.
// Its model masks its padding, so three steps on buckets train the parameters of three steps
// with every batch at --max-length, within float rounding.
TEST(TrainCommandTest, NmtLengthBucketsTrainAsTheFullLength) {
  const std::string samples = std::string(TESSERA_SOURCE_DIR) + "/tests/data/corpora/";
  const fs::path ck = fs::path(testing::TempDir()) / "nmt_buckets_ck";
  fs::remove_all(ck);
  const std::vector<std::string> nmt = {"nmt", "--train", samples + "nmt_sample.tsv",
                                        "--vocab-size", "300", "--max-length", "32",
                                        "--workers", "2", "--steps", "3", "--batch", "8",
                                        "--cluster", "v100-vpc32", "--threads", "1",
                                        "--eval-batches", "0", "--quiet"};
  const std::string full = TempPath("nmt_full.tsp"), bucketed = TempPath("nmt_bucketed.tsp");
  CommandResult r = RunCommand(RunTrain, With(nmt, {"--length-buckets", "1", "--checkpoint",
                                                    ck.string(), "--save-params", full}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> loud = nmt;
  loud.pop_back();  // not --quiet: the shapes are noted
  r = RunCommand(RunTrain, With(loud, {"--length-buckets", "4", "--vocab",
                                       (ck / "sentencepiece.model").string(), "--save-params",
                                       bucketed}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("smallest of 4 shapes that holds it: src_tokens [8,8], [8,16], [8,24], "
                       "[8,32]"),
            std::string::npos)
      << r.err;
  auto want = exec::ReadParamFile(full), got = exec::ReadParamFile(bucketed);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const std::vector<float>& w = (*want)[i].values;
    const std::vector<float>& g = (*got)[i].values;
    ASSERT_EQ((*want)[i].name, (*got)[i].name);
    ASSERT_EQ(w.size(), g.size());
    double diff = 0, scale = 1e-30;
    for (size_t k = 0; k < w.size(); ++k) {
      diff = std::max(diff, std::abs(double(w[k]) - g[k]));
      scale = std::max(scale, std::abs(double(w[k])));
    }
    EXPECT_LE(diff / scale, 1e-4) << (*want)[i].name;
  }
  r = RunCommand(RunTrain, {"nmt", "--length-buckets", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--length-buckets goes with --train FILE"), std::string::npos) << r.err;
}

TEST(TrainCommandTest, JobOptionsAreRefusedForModelsWithoutAHeldOutSplit) {
  CommandResult r = RunCommand(RunTrain, {"zoo:alexnet", "--metrics-json", TempPath("m.json"),
                                          "--quiet"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--metrics-json is for the nmt and ocr jobs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(TempPath("m.json")));
}

// --device: cuda trains one worker; where CUDA cannot run (no GPU, or a build without CUDA) the
// run ends before planning, naming the check that failed; --tf32 is cuda's.
TEST(TrainCommandTest, DeviceCudaIsOneWorkerAndSaysWhyItCannotRun) {
  CommandResult two = RunCommand(RunTrain, {"nmt", "--device", "cuda", "--workers", "2"});
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.err.find("--device cuda trains one worker"), std::string::npos) << two.err;
  CommandResult tf32 = RunCommand(RunTrain, {"nmt", "--tf32"});
  EXPECT_EQ(tf32.code, 2);
  EXPECT_NE(tf32.err.find("--tf32 is for --device cuda"), std::string::npos) << tf32.err;
  if (exec::MakeBackend({.device = exec::Device::kCuda}).ok()) {
    GTEST_SKIP() << "a GPU is present: the refusal cannot be seen here";
  }
  CommandResult r = RunCommand(RunTrain, With(kSmallRun, {"--device", "cuda", "--workers", "1"}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("device cuda: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("plan"), std::string::npos) << "refused before planning: " << r.err;
}

// On the `local` cluster the plan's compute is this model's ops timed on this machine, unless
// --op-times model; measured times are refused for another machine's cluster and for MPI.
TEST(TrainCommandTest, LocalPredictionsUseMeasuredOpTimes) {
  absl::StatusOr<costmodel::ClusterSpec> preset = costmodel::LoadCluster("v100-vpc32");
  ASSERT_TRUE(preset.ok()) << preset.status();
  costmodel::ClusterSpec local = *preset;
  local.name = "local";
  const std::string path = TempPath(std::to_string(getpid()) + "_local.json");
  ASSERT_TRUE(base::WriteFileAtomically(path, costmodel::ClusterToJson(local), "cluster").ok());
  std::optional<ScopedEnv> env(std::in_place, "TESSERA_LOCAL_CLUSTER", path);
  const std::vector<std::string> run = {"nmt", "--workers", "2", "--steps", "1", "--batch", "4",
                                        "--threads", "1", "--cluster", "local"};
  const std::string measured_json = TempPath("measured_report.json");
  CommandResult measured = RunCommand(RunTrain, With(run, {"--report-json", measured_json}));
  ASSERT_EQ(measured.code, 0) << measured.err;
  EXPECT_NE(measured.err.find("timing the model's ops"), std::string::npos) << measured.err;
  // The times are kept in the cluster file: the same command plans the same plan, untimed.
  EXPECT_NE(ReadJson(path).dump().find("\"op_times\""), std::string::npos);
  const std::string again_json = TempPath("again_report.json");
  CommandResult again = RunCommand(RunTrain, With(run, {"--report-json", again_json}));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("timing the model's ops"), std::string::npos) << again.err;
  EXPECT_EQ(ReadJson(again_json)["predicted"], ReadJson(measured_json)["predicted"]);
  EXPECT_EQ(ReadJson(again_json)["layers"], ReadJson(measured_json)["layers"]);
  CommandResult remeasured = RunCommand(RunTrain, With(run, {"--op-times", "remeasure"}));
  ASSERT_EQ(remeasured.code, 0) << remeasured.err;
  EXPECT_NE(remeasured.err.find("timing the model's ops"), std::string::npos) << remeasured.err;
  const std::string model_json = TempPath("model_report.json");
  CommandResult model = RunCommand(
      RunTrain, With(run, {"--op-times", "model", "--quiet", "--report-json", model_json}));
  ASSERT_EQ(model.code, 0) << model.err;
  const nlohmann::json m = ReadJson(measured_json), r = ReadJson(model_json);
  EXPECT_EQ(m["op_times"], "measured");
  EXPECT_EQ(r["op_times"], "model");
  // A V100's roofline and this CPU's kernels price the same step very differently.
  EXPECT_NE(m["predicted"]["compute_s"], r["predicted"]["compute_s"]);
  env.reset();

  CommandResult other = RunCommand(RunTrain, With(kSmallRun, {"--op-times", "measured"}));
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("not the preset 'v100-vpc32'"), std::string::npos) << other.err;
  CommandResult mpi = RunCommand(
      RunTrain, {"nmt", "--comm", "mpi", "--cluster", "local", "--op-times", "remeasure"});
  EXPECT_EQ(mpi.code, 2);
  EXPECT_NE(mpi.err.find("thread back-end"), std::string::npos) << mpi.err;
}

// --checkpoint DIR records the plan the run trained with (DIR/plan.json): the same command,
// run again, resumes with it and takes the settings it left out from it; explicit options that
// contradict it are refused, one line per difference with the flag behind it, no JSON.
TEST(TrainCommandTest, ResumesWithTheCheckpointsPlanAndRefusesContradictions) {
  const std::string dir =
      (fs::path(testing::TempDir()) / ("resume_ck_" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  const std::vector<std::string> model = {"nmt",       "--batch", "4",     "--cluster",
                                          "v100-vpc32", "--quiet", "--threads", "1",
                                          "--checkpoint", dir};
  CommandResult first = RunCommand(
      RunTrain, With(model, {"--workers", "2", "--strategy", "model", "--steps", "2",
                             "--bucket-size", "2MiB", "--first-bucket-size", "512KiB"}));
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(fs::exists(dir + "/plan.json"));
  absl::StatusOr<partitioner::PlanFileStrategies> saved =
      partitioner::ReadPlanStrategies(dir + "/plan.json");
  ASSERT_TRUE(saved.ok()) << saved.status();
  // Left out: --workers, --strategy (auto would choose another plan) and the bucket sizes (the
  // planner would choose others): the checkpoint's.
  const std::string report = TempPath("resume_report.json");
  CommandResult resumed =
      RunCommand(RunTrain, With(model, {"--steps", "3", "--report-json", report}));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const nlohmann::json j = ReadJson(report);
  EXPECT_EQ(j["workers"], 2);
  for (const auto& l : j["layers"]) {
    const partitioner::Strategy s = saved->strategies.at(l["name"].get<std::string>());
    EXPECT_EQ(l["strategy"], std::string(partitioner::StrategyName(s))) << l["name"];
  }
  EXPECT_EQ(j["losses"].size(), 1u);  // steps 2 to 3
  EXPECT_EQ(j["gradient_buckets"]["bucket_bytes"], 2 << 20) << j["gradient_buckets"];
  EXPECT_EQ(j["gradient_buckets"]["first_bucket_bytes"], 512 << 10) << j["gradient_buckets"];
  // Contradicting options: refused before training, one line each.
  CommandResult other = RunCommand(
      RunTrain, With(model, {"--workers", "4", "--strategy", "data", "--steps", "4"}));
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("\n  workers: checkpoint 2, this run 4 (--workers)"),
            std::string::npos) << other.err;
  CommandResult data = RunCommand(RunTrain, With(model, {"--strategy", "data", "--steps", "4"}));
  EXPECT_EQ(data.code, 1);
  EXPECT_NE(data.err.find("checkpoint model_parallel, this run data_parallel (--strategy)"),
            std::string::npos) << data.err;
  EXPECT_EQ(data.err.find("{"), std::string::npos) << "no JSON dumps: " << data.err;
  CommandResult seed = RunCommand(RunTrain, With(model, {"--seed", "9", "--steps", "4"}));
  EXPECT_EQ(seed.code, 1);
  EXPECT_NE(seed.err.find("seed: checkpoint 1, this run 9 (--seed)"), std::string::npos)
      << seed.err;
  CommandResult buckets = RunCommand(RunTrain, With(model, {"--bucket-size", "8MiB"}));
  EXPECT_EQ(buckets.code, 1);
  EXPECT_NE(buckets.err.find("bucket-size: checkpoint 2097152, this run 8388608 (--bucket-size)"),
            std::string::npos) << buckets.err;
}

TEST(TrainCommandTest, ErrorsNameWhatIsWrong) {
  CommandResult missing = RunCommand(RunTrain, With(kSmallRun, {"--strategy", "/no/such.json"}));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("/no/such.json"), std::string::npos) << missing.err;
  CommandResult odd = RunCommand(RunTrain, {"nmt", "--workers", "3", "--batch", "4", "--cluster",
                                            "v100-vpc32", "--quiet"});
  EXPECT_EQ(odd.code, 1);
  EXPECT_NE(odd.err.find("does not divide"), std::string::npos) << odd.err;
  CommandResult bad = RunCommand(RunTrain, With(kSmallRun, {"--strategy", "fastest"}));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("fastest"), std::string::npos) << bad.err;
  CommandResult usage = RunCommand(RunTrain, {"nmt", "--workers", "0"});
  EXPECT_EQ(usage.code, 2);
}

// --comm nccl needs a CUDA build and a GPU per worker; where either is missing the run ends
// with exit code 1 and a message that says which and what to use instead, before any step.
TEST(TrainCommandTest, NcclSaysWhatItNeeds) {
  const std::vector<comm::Backend> backends = comm::CompiledBackends();
  const bool compiled =
      std::find(backends.begin(), backends.end(), comm::Backend::kNccl) != backends.end();
  const std::string params = TempPath("nccl.tsp");
  CommandResult r =
      RunCommand(RunTrain, With(kSmallRun, {"--comm", "nccl", "--save-params", params}));
  if (compiled && r.code == 0) GTEST_SKIP() << "GPUs are present: the nccl run succeeded";
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(compiled ? "the nccl back-end needs one GPU per rank: 2 ranks but"
                                : "the nccl back-end is not compiled into this build"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(compiled ? "--comm thread" : "available: thread"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(params));
}

}  // namespace
}  // namespace tessera::tools
#endif  // TESSERA_HAVE_CALIBRATE_COMMAND
