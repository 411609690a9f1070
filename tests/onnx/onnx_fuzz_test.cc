// Hostile input: every truncation of a small model and seeded random byte
// mutations of the test models must give an error naming the file or a valid
// graph, never a crash.
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph {
namespace {

const std::string kModels = std::string(TESSERA_SOURCE_DIR) + "/tests/models/";

std::string ReadModel(const std::string& name) {
  std::ifstream in(kModels + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Either a graph whose every shape is static, or an error that names the source.
void ExpectGraphOrNamedError(const std::string& bytes, const std::string& source) {
  OnnxImportOptions options;
  options.symbolic_dims["seq"] = 8;
  auto g = ImportOnnxBytes(bytes, source, options);
  if (g.ok()) {
    EXPECT_TRUE(g->Validate().ok()) << source;
    for (const Tensor& t : g->tensors()) {
      for (int64_t d : t.shape) ASSERT_GE(d, 0) << source << " tensor " << t.name;
    }
  } else {
    ASSERT_EQ(std::string(g.status().message()).rfind(source + ": ", 0), 0u)
        << g.status().message();
  }
}

TEST(OnnxFuzz, EveryTruncationOfASmallModel) {
  const std::string bytes = ReadModel("tied_embedding_nofold.onnx");
  ASSERT_GT(bytes.size(), 500u);
  ASSERT_TRUE(ImportOnnxBytes(bytes, "whole.onnx").ok());
  int errors = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string source = "cut" + std::to_string(n) + ".onnx";
    ExpectGraphOrNamedError(bytes.substr(0, n), source);
    errors += !ImportOnnxBytes(bytes.substr(0, n), source).ok();
  }
  // A prefix that ends on a field boundary can still parse; most must fail.
  EXPECT_GT(errors, static_cast<int>(bytes.size()) / 2);
}

TEST(OnnxFuzz, SeededRandomMutationsOfTheTestModels) {
  const std::vector<std::string> files = {
      "tied_embedding_nofold.onnx", "shared_linear.onnx", "gemm_trans.onnx",
      "conv_variants.onnx", "lstm_states.onnx", "seq2seq_lstm.onnx", "crnn.onnx",
      "transformer_lm.onnx", "default_quirks.onnx", "unsupported.onnx"};
  std::vector<std::string> models;
  for (const auto& f : files) {
    models.push_back(ReadModel(f));
    ASSERT_FALSE(models.back().empty()) << f;
  }
  std::mt19937_64 rng(20240607);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  int iterations = 0, valid = 0;
  while (std::chrono::steady_clock::now() < deadline || iterations < 200) {
    const size_t which = rng() % models.size();
    std::string bytes = models[which];
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[at] = static_cast<char>(rng()); break;                  // overwrite
        case 1: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;  // flip
        case 2: bytes.insert(at, 1, static_cast<char>(rng())); break;         // insert
        default: bytes.erase(at, 1); break;                                   // delete
      }
      if (bytes.empty()) bytes = "x";
    }
    const std::string source = files[which] + "#" + std::to_string(iterations);
    ExpectGraphOrNamedError(bytes, source);
    if (::testing::Test::HasFatalFailure()) return;
    valid += ImportOnnxBytes(bytes, source, {.symbolic_dims = {{"seq", 8}}}).ok();
    ++iterations;
  }
  std::cout << iterations << " mutated models imported, " << valid << " still valid\n";
  EXPECT_GE(iterations, 200);
}

}  // namespace
}  // namespace tessera::graph
