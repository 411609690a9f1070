// MODEL "nmt" and "ocr" (the CPU-sized zoo models) in the loader and the commands that take MODEL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tessera/graph/graph_json.h"
#include "tessera/graph/parameters.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/tools/inspect_command.h"
#include "tessera/tools/model_loader.h"
#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/plan_command.h"
#endif

#include "command_runner.h"

namespace tessera::tools {
namespace {

using ::testing::HasSubstr;

TEST(SmallModelsLoaderTest, BareNamesAreTheZooModels) {
  for (const char* name : {"nmt", "ocr"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<graph::Graph> bare = LoadModel(name, {});
    absl::StatusOr<graph::Graph> zoo = LoadModel(absl::StrCat("zoo:", name), {});
    absl::StatusOr<graph::Graph> direct = graph::zoo::BuildZooModel(name);
    ASSERT_TRUE(bare.ok()) << bare.status();
    ASSERT_TRUE(zoo.ok()) << zoo.status();
    ASSERT_TRUE(direct.ok()) << direct.status();
    EXPECT_EQ(bare->name(), name);
    EXPECT_EQ(graph::GraphToJson(*bare), graph::GraphToJson(*direct));
    EXPECT_EQ(graph::GraphToJson(*zoo), graph::GraphToJson(*direct));
  }
  absl::StatusOr<graph::Graph> ocr = LoadModel("ocr", {.batch = 8});
  ASSERT_TRUE(ocr.ok()) << ocr.status();
  EXPECT_EQ(graph::CountParameters(*ocr), 844'453);
  EXPECT_EQ(ocr->tensor(*ocr->FindTensor("images")).shape, (graph::Shape{8, 1, 32, 128}));
}

TEST(SmallModelsLoaderTest, OtherBareWordsAreStillFiles) {
  // "./nmt" names a file (there is none), and so does a name that merely starts like a model.
  for (const char* path : {"./nmt", "nmt2", "gnmt"}) {
    absl::StatusOr<graph::Graph> g = LoadModel(path, {});
    ASSERT_FALSE(g.ok()) << path;
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(path));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("cannot open"));
  }
  absl::StatusOr<graph::Graph> inputs = LoadModel("nmt", {.data_inputs = {"x"}});
  ASSERT_FALSE(inputs.ok());
  EXPECT_THAT(std::string(inputs.status().message()), HasSubstr("ONNX models only"));
}

TEST(SmallModelsCommandTest, InspectOcr) {
  CommandResult table = RunCommand(RunInspect, {"ocr"});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* s : {"model ocr: 32 ops, batch 32", "LSTM", "CtcLoss", "rnn1.linear",
                        "parameters        844453"}) {
    EXPECT_THAT(table.out, HasSubstr(s));
  }
  CommandResult json = RunCommand(RunInspect, {"ocr", "--format", "json", "--batch", "16"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto model = nlohmann::json::parse(json.out).at("model");
  EXPECT_EQ(model.at("name"), "ocr");
  EXPECT_EQ(model.at("params"), 844'453);
  EXPECT_EQ(model.at("batch"), 16);
}

#ifdef TESSERA_HAVE_PLAN_COMMANDS
TEST(SmallModelsCommandTest, ExecutablePlanOfNmtOnTwoDevices) {
  CommandResult r = RunCommand(RunPlan, {"nmt", "--devices", "2", "--cluster", "v100-vpc32",
                                         "--executable", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model").at("name"), "nmt");
  EXPECT_EQ(j.at("model").at("params"), 3'131'600);
  EXPECT_EQ(j.at("model").at("batch"), 32);
  EXPECT_EQ(j.at("cluster").at("devices"), 2);
  int64_t params = 0;
  bool classifier = false;
  for (const auto& layer : j.at("layers")) {
    params += layer.at("params").get<int64_t>();
    const std::string op = layer.at("op"), strategy = layer.at("strategy");
    // The hybrid runtime splits only Gemm/MatMul (and model-parallel Embedding) layers; the
    // rest (the LSTMs here) stay data-parallel.
    if (op != "Gemm" && op != "MatMul" && op != "Embedding" &&
        layer.at("params").get<int64_t>() > 0) {
      EXPECT_EQ(strategy, "data_parallel") << layer.at("name");
    }
    if (op == "Embedding") EXPECT_NE(strategy, "late_multiply") << layer.at("name");
    for (const auto& p : layer.at("param_names")) classifier |= p == "classifier.weight";
  }
  EXPECT_EQ(params, 3'131'600);
  EXPECT_TRUE(classifier);
  EXPECT_GT(j.at("predicted").at("step_time_s").get<double>(), 0);
  // The table form of the same plan runs too.
  CommandResult table = RunCommand(RunPlan, {"nmt", "--devices", "2", "--cluster", "v100-vpc32",
                                             "--executable"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("classifier"));
}
#endif

}  // namespace
}  // namespace tessera::tools
