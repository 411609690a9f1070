// The training records as JSON lines (appended, flushed, valid JSON, null for NaN), the log's
// errors, and the HTML report (its curves, escaped names, nothing external).
#include "tessera/exec/training_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/exec/training_html.h"

namespace tessera::exec {
namespace {

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(TrainingLogTest, AppendsFlushedJsonLines) {
  const std::string path = testing::TempDir() + "/training_log_test.jsonl";
  { std::ofstream(path) << "{\"earlier\": true}\n"; }
  auto log = TrainingLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Write(RunJson({.model = "nmt", .workers = 2, .global_batch = 32, .steps = 4}));
  (*log)->Write(StepJson({.step = 1, .loss = 2.5, .lr = 0.003, .samples_per_s = 100,
                          .time_s = 0.32}));
  // Read while the log is open: each line is on disk as soon as it is written.
  std::vector<nlohmann::json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0]["earlier"]);  // an earlier run's lines are kept
  EXPECT_EQ(lines[1]["run"]["model"], "nmt");
  EXPECT_EQ(lines[1]["run"]["global_batch"], 32);
  EXPECT_EQ(lines[2], nlohmann::json::parse(
                          R"({"step": 1, "loss": 2.5, "lr": 0.003, "samples_per_s": 100,
                              "time_s": 0.32})"));
  (*log)->Write(StepJson({.step = 2, .loss = NAN, .lr = 0.003}));
  (*log)->Write(EvalJson({.step = 2, .metrics = {{"bleu", 1.5}, {"token_accuracy", 0.25}},
                          .eval_s = 0.5}));
  lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_TRUE(lines[3]["loss"].is_null());  // JSON has no NaN
  EXPECT_EQ(lines[4]["step"], 2);
  EXPECT_EQ(lines[4]["eval"]["bleu"], 1.5);
  EXPECT_EQ(lines[4]["eval"]["token_accuracy"], 0.25);
  EXPECT_TRUE((*log)->status().ok());
}

TEST(TrainingLogTest, AnUnwritablePathNamesTheFile) {
  auto log = TrainingLog::Open("/nonexistent-folder/run.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("/nonexistent-folder/run.jsonl"), std::string::npos);
  EXPECT_NE(log.status().message().find("No such file"), std::string::npos) << log.status();
}

TrainingHistory History(const std::string& model, const std::string& metric) {
  TrainingHistory h{.run = {.model = model, .workers = 2, .global_batch = 8, .steps = 6,
                            .eval_every = 3, .eval_batches = 1}};
  for (int s = 1; s <= 6; ++s) {
    h.steps.push_back({.step = s, .loss = 3.0 / s, .lr = 0.01 * s / 6, .samples_per_s = 50.0 + s,
                       .time_s = 0.1 * s});
  }
  h.evals.push_back({.step = 3, .metrics = {{metric, 0.25}, {"loss", 1.5}}, .eval_s = 0.2});
  h.evals.push_back({.step = 6, .metrics = {{metric, 0.5}, {"loss", 1.0}}, .eval_s = 0.2});
  return h;
}

TEST(TrainingHtmlTest, CurvesOfLossRateThroughputAndMetrics) {
  const std::string html = TrainingHtml(History("nmt", "token_accuracy"));
  for (const char* want : {"<!DOCTYPE html>", "<h2>Loss</h2>", "<h2>Learning rate</h2>",
                           "<h2>Throughput</h2>", "<h2>Held-out token_accuracy</h2>",
                           "<h2>Held-out loss</h2>", "<h2>Evaluations</h2>",
                           "held-out token_accuracy at step 6", "2 workers, global batch 8"}) {
    EXPECT_NE(html.find(want), std::string::npos) << want;
  }
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, 5u);  // loss, two metrics, learning rate, throughput
  // Self-contained: no scripts, no links to fetch.
  for (const char* external : {"<script", "http://", "https://", "src=", "<link"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
}

TEST(TrainingHtmlTest, EscapesNames) {
  const std::string html = TrainingHtml(History("<model & co>", "acc<\"x\">"));
  EXPECT_EQ(html.find("<model"), std::string::npos);
  EXPECT_EQ(html.find("acc<"), std::string::npos);
  EXPECT_NE(html.find("&lt;model &amp; co&gt;"), std::string::npos);
  EXPECT_NE(html.find("acc&lt;&quot;x&quot;&gt;"), std::string::npos);
}

TEST(TrainingHtmlTest, AnEmptyRunStillMakesAPage) {
  const std::string html = TrainingHtml({.run = {.model = "m"}});
  EXPECT_NE(html.find("(no data)"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace tessera::exec
