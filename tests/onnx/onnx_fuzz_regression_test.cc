// Inputs that once broke a fuzz target (fuzz/regressions/fuzz_onnx_import/, docs/fuzzing.md)
// now give clean errors naming the file and the value.
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "onnx_test_util.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph {
namespace {

namespace fs = std::filesystem;
using testing::OnnxModel;

const fs::path kRegressions =
    fs::path(TESSERA_SOURCE_DIR) / "fuzz" / "regressions" / "fuzz_onnx_import";

// A data input of 4 x 1 x 1e18 floats: 1.6e19 bytes, past int64. The importer took it (only
// node outputs were checked) and its graph then failed to read back from a graph file;
// byte counts downstream would overflow.
TEST(OnnxFuzzRegression, InputWhoseByteSizeOverflowsInt64) {
  const std::string path = (kRegressions / "input_bytes_overflow_int64.onnx").string();
  auto g = ImportOnnxFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(g.status().message());
  EXPECT_TRUE(absl::StartsWith(message, path + ": ")) << message;
  EXPECT_TRUE(absl::StrContains(message, "tensor 'x' has shape [4,1,1000000000000000000] f32"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "overflows 64 bits")) << message;
}

// The same rule for an initializer without data, and its limit: 8e18 bytes still fit.
TEST(OnnxFuzzRegression, InitializerWhoseByteSizeOverflowsInt64AndTheLimit) {
  for (int64_t rows : {2, 4}) {
    SCOPED_TRACE(rows);
    OnnxModel m(13);
    m.Input("x", {2, rows});
    onnx::TensorProto w;
    w.set_data_type(onnx::TensorProto::FLOAT);
    w.add_dims(rows);
    w.add_dims(1000000000000000000);  // structure only: no values
    m.Initializer(w, "w");
    OnnxModel::AttrInt(m.Node("ReduceSum", {"w"}, {"s"}), "keepdims", 0);
    m.Node("Add", {"x", "s"}, {"y"});
    m.Output("y");
    auto g = m.Import();
    if (rows == 2) {  // 2e18 floats, 8e18 bytes: fits in int64
      EXPECT_TRUE(g.ok()) << g.status();
      continue;
    }
    ASSERT_FALSE(g.ok());
    const std::string message(g.status().message());
    EXPECT_TRUE(absl::StartsWith(message, "test.onnx: tensor 'w' has shape [4,1000000000000000000]"))
        << message;
    EXPECT_TRUE(absl::StrContains(message, "overflows 64 bits")) << message;
  }
}

// Every kept input gives a graph or an error that names the file.
TEST(OnnxFuzzRegression, EveryKeptInputFailsCleanly) {
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(kRegressions)) {
    SCOPED_TRACE(entry.path().string());
    auto g = ImportOnnxFile(entry.path().string());
    if (!g.ok()) {
      EXPECT_TRUE(absl::StartsWith(g.status().message(), entry.path().string() + ": "))
          << g.status();
    }
    ++inputs;
  }
  EXPECT_GE(inputs, 1);
}

}  // namespace
}  // namespace tessera::graph
