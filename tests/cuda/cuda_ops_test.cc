// The CUDA op kernels against the CPU kernels, forward and backward, on random inputs. Each test
// is skipped where no GPU is present ("no GPU present: compiled, not run").
#include "tessera/tests/cuda/cuda_op_test_util.h"

namespace tessera::exec::cuda::testing {
namespace {

using graph::OpKind;

TEST(CudaOpsTest, UnaryOpsMatchCpu) {
  SKIP_WITHOUT_GPU();
  for (OpKind k : {OpKind::kRelu, OpKind::kSigmoid, OpKind::kTanh, OpKind::kGelu, OpKind::kErf,
                   OpKind::kExp, OpKind::kNeg, OpKind::kAbs}) {
    EXPECT_TRUE(MatchesCpu({.kind = k, .inputs = {{.shape = {7, 33}}}})) << graph::OpName(k);
  }
  for (OpKind k : {OpKind::kSqrt, OpKind::kLog, OpKind::kReciprocal}) {
    EXPECT_TRUE(MatchesCpu({.kind = k, .inputs = {{.shape = {5, 9}, .lo = 0.5, .hi = 2}}}))
        << graph::OpName(k);
  }
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kLeakyRelu, .attrs = graph::ScalarAttrs{.alpha = 0.1},
                          .inputs = {{.shape = {4, 5}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kClip,
                          .attrs = graph::ScalarAttrs{.alpha = -0.3, .beta = 0.4},
                          .inputs = {{.shape = {4, 5}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kDropout, .attrs = graph::ScalarAttrs{.alpha = 0.3},
                          .inputs = {{.shape = {3, 70}}}}));
}

TEST(CudaOpsTest, BroadcastingBinaryOpsMatchCpu) {
  SKIP_WITHOUT_GPU();
  for (OpKind k : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow}) {
    EXPECT_TRUE(MatchesCpu({.kind = k,
                            .inputs = {{.shape = {2, 3, 4}, .lo = 0.5, .hi = 2},
                                       {.shape = {3, 1}, .lo = 0.5, .hi = 2}}}))
        << graph::OpName(k);
  }
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kWhere,
                          .inputs = {{.shape = {3, 1}, .dtype = graph::DType::kBool,
                                      .values = {1, 0, 1}},
                                     {.shape = {3, 4}},
                                     {.shape = {4}}}}));
}

TEST(CudaOpsTest, ReductionsAndSoftmaxMatchCpu) {
  SKIP_WITHOUT_GPU();
  for (OpKind k : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax}) {
    EXPECT_TRUE(MatchesCpu({.kind = k, .attrs = graph::AxesAttrs{.axes = {0, 2}, .keepdims = false},
                            .inputs = {{.shape = {3, 4, 5}}}}))
        << graph::OpName(k);
  }
  for (OpKind k : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
    for (int64_t axis : {-1, 1}) {
      EXPECT_TRUE(MatchesCpu({.kind = k, .attrs = graph::AxisAttrs{.axis = axis},
                              .inputs = {{.shape = {2, 6, 5}}}}))
          << graph::OpName(k) << " axis " << axis;
    }
  }
}

TEST(CudaOpsTest, LayoutOpsMatchCpu) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kTranspose, .attrs = graph::PermAttrs{.perm = {2, 0, 1}},
                          .inputs = {{.shape = {2, 3, 4}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kReshape, .attrs = graph::ReshapeAttrs{.shape = {6, -1}},
                          .inputs = {{.shape = {2, 3, 4}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kConcat, .attrs = graph::AxisAttrs{.axis = 1},
                          .inputs = {{.shape = {2, 3}}, {.shape = {2, 5}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kSplit,
                          .attrs = graph::SplitAttrs{.axis = 1, .sizes = {1, 3}},
                          .inputs = {{.shape = {2, 4, 3}}},
                          .num_outputs = 2}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kSlice,
                          .attrs = graph::SliceAttrs{.starts = {1, -1}, .ends = {3, 0},
                                                     .axes = {0, 1}, .steps = {1, -2}},
                          .inputs = {{.shape = {4, 6}}}}));
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kExpand, .attrs = graph::ExpandAttrs{.shape = {2, 3, 4}},
                          .inputs = {{.shape = {3, 1}}}}));
  for (graph::PadMode m : {graph::PadMode::kConstant, graph::PadMode::kReflect,
                           graph::PadMode::kEdge}) {
    EXPECT_TRUE(MatchesCpu({.kind = OpKind::kPad,
                            .attrs = graph::PadAttrs{.pads = {1, 2, 0, 3}, .mode = m, .value = 0.5},
                            .inputs = {{.shape = {3, 4}}}}));
  }
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kGather, .attrs = graph::AxisAttrs{.axis = 1},
                          .inputs = {{.shape = {2, 5, 3}},
                                     {.shape = {4}, .dtype = graph::DType::kI64,
                                      .values = {4, 0, -1, 4}}}}));
}

// The layout ops' forward on int64 tensors (token ids transposed to time-major, sliced, joined):
// each element moves whole. Values whose 32-bit halves differ show a copy of 4-byte words: it
// once turned id 12 into 12 << 32 ahead of nmt's embedding.
absl::StatusOr<std::vector<int64_t>> Int64Forward(const OpCase& c,
                                                  const std::vector<std::vector<int64_t>>& ins) {
  TS_ASSIGN_OR_RETURN(const graph::Graph g, cpu::testing::BuildOpGraph(c));
  const graph::Node& node = g.node(0);
  TS_ASSIGN_OR_RETURN(std::unique_ptr<memory::CudaMemory> gpu, memory::CudaMemory::Create(0));
  std::vector<memory::DeviceAllocation> keep;
  std::vector<Tensor> in, out;
  const auto alloc = [&](const void* host, int64_t bytes) -> absl::StatusOr<float*> {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation b,
                        memory::DeviceAllocation::Create(*gpu, std::max<int64_t>(8, bytes), 256));
    if (host != nullptr) TS_RETURN_IF_ERROR(memory::CopyToDevice(host, bytes, b));
    keep.push_back(std::move(b));
    return static_cast<float*>(keep.back().data());
  };
  for (size_t i = 0; i < ins.size(); ++i) {
    TS_ASSIGN_OR_RETURN(float* d, alloc(ins[i].data(), 8 * ins[i].size()));
    in.push_back({.shape = g.tensor(node.inputs[i]).shape, .data = d, .dtype = graph::DType::kI64});
  }
  const graph::Tensor& y = g.tensor(node.outputs[0]);
  if (y.dtype != graph::DType::kI64) return absl::InternalError("the output is not int64");
  TS_ASSIGN_OR_RETURN(float* d, alloc(nullptr, 8 * cpu::testing::NumElements(y.shape)));
  out.push_back({.shape = y.shape, .data = d, .dtype = y.dtype});
  OpState state;
  TS_RETURN_IF_ERROR(Forward(node, in, out, {.memory = gpu.get()}, state));
  std::vector<int64_t> host(cpu::testing::NumElements(y.shape));
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(host.data(), d, 8 * host.size(), cudaMemcpyDeviceToHost));
  return host;
}

TEST(CudaOpsTest, LayoutOpsMoveInt64ElementsWhole) {
  SKIP_WITHOUT_GPU();
  const auto id = [](int64_t i) { return (i + 1) * (int64_t{1} << 33) + 12 + i; };
  std::vector<int64_t> x(6);  // [2, 3]
  for (int64_t i = 0; i < 6; ++i) x[i] = id(i);
  const auto i64 = [](graph::Shape s) {
    return cpu::testing::OpInput{.shape = std::move(s), .dtype = graph::DType::kI64};
  };
  auto t = Int64Forward({.kind = OpKind::kTranspose, .attrs = graph::PermAttrs{.perm = {1, 0}},
                         .inputs = {i64({2, 3})}}, {x});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, (std::vector<int64_t>{x[0], x[3], x[1], x[4], x[2], x[5]}));
  auto c = Int64Forward({.kind = OpKind::kConcat, .attrs = graph::AxisAttrs{.axis = 1},
                         .inputs = {i64({2, 3}), i64({2, 1})}}, {x, {id(7), id(8)}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, (std::vector<int64_t>{x[0], x[1], x[2], id(7), x[3], x[4], x[5], id(8)}));
  auto s = Int64Forward({.kind = OpKind::kSlice,
                         .attrs = graph::SliceAttrs{.starts = {1}, .ends = {3}, .axes = {1}},
                         .inputs = {i64({2, 3})}}, {x});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<int64_t>{x[1], x[2], x[4], x[5]}));
  auto e = Int64Forward({.kind = OpKind::kExpand, .attrs = graph::ExpandAttrs{.shape = {2, 3}},
                         .inputs = {i64({1, 3})}}, {{x[0], x[1], x[2]}});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(*e, (std::vector<int64_t>{x[0], x[1], x[2], x[0], x[1], x[2]}));
}

TEST(CudaOpsTest, EmbeddingCrossEntropyAndLayerNormMatchCpu) {
  SKIP_WITHOUT_GPU();
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kEmbedding,
                          .inputs = {{.shape = {2, 3}, .dtype = graph::DType::kI64,
                                      .values = {1, 4, 1, 0, 2, 4}},
                                     {.shape = {5, 6}}}}));
  for (graph::Reduction red : {graph::Reduction::kMean, graph::Reduction::kSum,
                               graph::Reduction::kNone}) {
    EXPECT_TRUE(MatchesCpu({.kind = OpKind::kSoftmaxCrossEntropy,
                            .attrs = graph::LossAttrs{.reduction = red, .ignore_index = 2},
                            .inputs = {{.shape = {3, 4, 2}},
                                       {.shape = {3, 2}, .dtype = graph::DType::kI64,
                                        .values = {0, 2, 3, 1, 2, 0}}}}));
  }
  EXPECT_TRUE(MatchesCpu({.kind = OpKind::kLayerNorm, .attrs = graph::LayerNormAttrs{.axis = -1},
                          .inputs = {{.shape = {4, 8}}, {.shape = {8}}, {.shape = {8}}}},
                         1e-3f));
}

// Without a GPU nothing runs, but the dispatcher's table is host code and is checked here.
TEST(CudaOpsTest, OpsWithoutACudaKernelAreReportedByName) {
  EXPECT_TRUE(HasCudaKernel(OpKind::kRelu));
  EXPECT_TRUE(HasCudaKernel(OpKind::kSoftmaxCrossEntropy));
  for (OpKind kind : graph::AllOpKinds()) {  // whichever ops still lack a CUDA kernel
    if (HasCudaKernel(kind)) continue;
    graph::Node node{.name = "my_node", .kind = kind};
    OpState state;
    const absl::Status s = Forward(node, {}, {}, KernelContext{}, state);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_NE(s.message().find("my_node"), std::string::npos) << s;
    EXPECT_NE(s.message().find(graph::OpName(kind)), std::string::npos) << s;
  }
}

// Kernels take their scratch from KernelContext::memory, before any device call: without one the
// error names the node and the field; a budget too small for the scratch is ResourceExhausted
// from the back-end (host memory stands in for a GPU here; nothing is launched).
TEST(CudaOpsTest, ScratchComesFromTheContextsDeviceMemory) {
  auto g = cpu::testing::BuildOpGraph({.kind = OpKind::kLayerNorm,
                                       .attrs = graph::LayerNormAttrs{.axis = -1},
                                       .inputs = {{.shape = {4, 8}}, {.shape = {8}}}});
  ASSERT_TRUE(g.ok()) << g.status();
  const graph::Node& node = g->node(0);
  std::vector<float> backing(32);
  std::vector<Tensor> in, out;
  for (graph::TensorId t : node.inputs) {
    in.push_back({.shape = g->tensor(t).shape, .data = backing.data()});
  }
  for (graph::TensorId t : node.outputs) {
    out.push_back({.shape = g->tensor(t).shape, .data = backing.data()});
  }
  OpState state;
  absl::Status s = Forward(node, in, out, KernelContext{}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(node.name), std::string::npos) << s;
  EXPECT_NE(s.message().find("KernelContext::memory"), std::string::npos) << s;

  memory::HostMemory small(/*capacity=*/8);  // the 4 row means alone need 16 bytes
  s = Forward(node, in, out, KernelContext{.memory = &small}, state);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(small.bytes_allocated(), 0);
}

}  // namespace
}  // namespace tessera::exec::cuda::testing
