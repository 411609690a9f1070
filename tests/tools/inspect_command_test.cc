#include "tessera/tools/inspect_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/graph/graph_json.h"
#include "tessera/graph/zoo/zoo.h"

#include "command_runner.h"

namespace tessera::tools {
namespace {

CommandResult Inspect(const std::vector<std::string>& args) { return RunCommand(RunInspect, args); }

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

TEST(InspectCommandTest, JsonModelObjectFollowsThePlanContract) {
  CommandResult r = Inspect({"zoo:alexnet", "--format", "json", "--batch", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& m = j.at("model");
  EXPECT_EQ(m.size(), 5u);  // exactly name, params, forward_flops, ops, batch
  EXPECT_EQ(m.at("name"), "alexnet");
  EXPECT_EQ(m.at("params"), 61100840);
  EXPECT_EQ(m.at("batch"), 2);
  EXPECT_EQ(m.at("ops").get<int>(), static_cast<int>(j.at("ops").size()));
  double sum = 0;
  for (const auto& op : j.at("ops")) sum += op.at("forward_flops").get<double>();
  EXPECT_DOUBLE_EQ(m.at("forward_flops").get<double>(), sum);
}

TEST(InspectCommandTest, BatchScalesForwardFlopsAndKeepsParams) {
  CommandResult one = Inspect({"zoo:resnet50", "--format", "json", "--batch", "1"});
  CommandResult four = Inspect({"zoo:resnet50", "--format", "json", "--batch", "4"});
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(four.code, 0) << four.err;
  const auto a = nlohmann::json::parse(one.out).at("model");
  const auto b = nlohmann::json::parse(four.out).at("model");
  EXPECT_EQ(a.at("params"), b.at("params"));
  // Every op of a CNN scales with the batch except weight-only work (none here).
  EXPECT_NEAR(b.at("forward_flops").get<double>() / a.at("forward_flops").get<double>(), 4.0,
              1e-9);
}

TEST(InspectCommandTest, TableShowsOpsAndTotals) {
  CommandResult r = Inspect({"zoo:crnn"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"model crnn", "output shape", "fwd FLOPs", "Conv", "LSTM", "total",
                        "parameters", "forward FLOPs", "activation bytes"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
}

TEST(InspectCommandTest, GraphFileGivesTheSameNumbersAsTheModel) {
  auto g = graph::zoo::BuildZooModel("crnn", 2);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string path = TempPath("crnn_graph.json");
  ASSERT_TRUE(graph::WriteGraphFile(*g, path).ok());
  CommandResult from_zoo = Inspect({"zoo:crnn", "--batch", "2", "--format", "json"});
  CommandResult from_file = Inspect({path, "--format", "json"});
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  EXPECT_EQ(nlohmann::json::parse(from_zoo.out), nlohmann::json::parse(from_file.out));
  CommandResult rebatched = Inspect({path, "--format", "json", "--batch", "6"});
  ASSERT_EQ(rebatched.code, 0) << rebatched.err;
  EXPECT_EQ(nlohmann::json::parse(rebatched.out).at("model").at("batch"), 6);
}

TEST(InspectCommandTest, OnnxFileIsInspected) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/models/alexnet.onnx";
  CommandResult r = Inspect({path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("model").at("params"), 61100840);
}

TEST(InspectCommandTest, SequenceFirstOnnxModelReportsAndChangesItsBatch) {
  // seq2seq_lstm.onnx takes tokens [T, B] with a symbolic batch: the batch is axis 1.
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/models/seq2seq_lstm.onnx";
  CommandResult two = Inspect({path, "--format", "json", "--batch", "2"});
  CommandResult eight = Inspect({path, "--format", "json", "--batch", "8"});
  ASSERT_EQ(two.code, 0) << two.err;
  ASSERT_EQ(eight.code, 0) << eight.err;
  const auto a = nlohmann::json::parse(two.out).at("model");
  const auto b = nlohmann::json::parse(eight.out).at("model");
  EXPECT_EQ(a.at("name"), "seq2seq_lstm");  // the file's name, not the exporter's "torch_jit"
  EXPECT_EQ(a.at("batch"), 2);
  EXPECT_EQ(b.at("batch"), 8);
  EXPECT_EQ(a.at("params"), b.at("params"));
  EXPECT_NEAR(b.at("forward_flops").get<double>() / a.at("forward_flops").get<double>(), 4.0,
              1e-9);
}

TEST(InspectCommandTest, SymbolicSequenceLengthNeedsDim) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/models/transformer_lm.onnx";
  CommandResult without = Inspect({path});
  EXPECT_EQ(without.code, 1);
  EXPECT_NE(without.err.find("--dim seq=N"), std::string::npos) << without.err;
  CommandResult with = Inspect({path, "--dim", "seq=32", "--batch", "2", "--format", "json"});
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_EQ(nlohmann::json::parse(with.out).at("model").at("batch"), 2);
  CommandResult bad = Inspect({path, "--dim", "seq"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("NAME=VALUE"), std::string::npos) << bad.err;
}

TEST(InspectCommandTest, BadInputGivesAClearErrorAndExitCode) {
  CommandResult missing = Inspect({"/nonexistent/dir/model.onnx"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/dir/model.onnx"), std::string::npos) << missing.err;

  const std::string garbage = TempPath("garbage.bin");
  std::ofstream(garbage) << "\x01\x02 this is not a model";
  CommandResult bad = Inspect({garbage});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find(garbage), std::string::npos) << bad.err;

  CommandResult dir = Inspect({testing::TempDir()});
  EXPECT_EQ(dir.code, 1);
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;

  CommandResult zoo = Inspect({"zoo:nope"});
  EXPECT_EQ(zoo.code, 1);
  EXPECT_NE(zoo.err.find("alexnet"), std::string::npos) << zoo.err;  // lists what exists

  CommandResult usage = Inspect({"zoo:alexnet", "--format", "xml"});
  EXPECT_EQ(usage.code, 2);
  EXPECT_TRUE(usage.out.empty());

  CommandResult inputs_on_zoo = Inspect({"zoo:alexnet", "--inputs", "x"});
  EXPECT_EQ(inputs_on_zoo.code, 1);
  EXPECT_NE(inputs_on_zoo.err.find("--inputs applies to ONNX"), std::string::npos);
}

TEST(InspectCommandTest, HelpGoesToStdoutWithExitZero) {
  CommandResult r = Inspect({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: tessera inspect MODEL"), std::string::npos);
}

}  // namespace
}  // namespace tessera::tools
