// The sample kernels of `tessera calibrate`: one-node graphs at CPU-sized shapes (those of the
// NMT and OCR models of one worker: a global batch of 32 on two workers), timed forward and
// backward with the CPU kernels, and priced the way the planner prices them.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/op_attrs.h"
#include "tessera/graph/shape_inference.h"
#include "tessera/tools/calibrate_measure.h"

namespace tessera::tools {
namespace {

using graph::DType;
using graph::OpKind;
using graph::Shape;
using graph::TensorRole;
using CpuTensor = exec::cpu::Tensor<float>;

// An input of the timed node. Activations are computed from a parameter (data + a learned
// shift), so they need a gradient as inside a model; a node whose inputs were all parameters
// would be a parameter derivation, which the estimates price at 0 (graph/parameters.h).
struct CaseInput {
  Shape shape;
  TensorRole role = TensorRole::kActivation;  // or kParameter, kInput (data), kConstant
  DType dtype = DType::kF32;
  double lo = -1, hi = 1;  // values drawn uniformly (integers: whole numbers in [lo, hi])
};

CaseInput Act(Shape s) { return {.shape = std::move(s)}; }
CaseInput Param(Shape s) { return {.shape = std::move(s), .role = TensorRole::kParameter}; }
CaseInput Data(Shape s) { return {.shape = std::move(s), .role = TensorRole::kInput}; }
CaseInput Const(Shape s, double lo, double hi) {
  return {.shape = std::move(s), .role = TensorRole::kConstant, .lo = lo, .hi = hi};
}
CaseInput Ints(Shape s, double lo, double hi) {
  return {.shape = std::move(s), .role = TensorRole::kInput, .dtype = DType::kI64, .lo = lo,
          .hi = hi};
}

struct KernelCase {
  std::string label;
  OpKind kind;
  graph::OpAttrs attrs;  // std::monostate: DefaultAttrs(kind)
  std::vector<CaseInput> inputs;
  int outputs = 1;
};

std::string Dims(const Shape& s) { return absl::StrJoin(s, "x"); }

KernelCase Gemm(int64_t m, int64_t k, int64_t n) {
  return {absl::StrCat("Gemm ", m, "x", k, "x", n), OpKind::kGemm,
          graph::GemmAttrs{.trans_b = true}, {Act({m, k}), Param({n, k}), Param({n})}};
}

KernelCase Conv3x3(Shape x, int64_t out, bool data_input) {
  const int64_t c = x[1];
  return {absl::StrCat("Conv 3x3 ", Dims(x), "->", out), OpKind::kConv,
          graph::ConvAttrs{.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}},
          {data_input ? Data(x) : Act(x), Param({out, c, 3, 3}), Param({out})}};
}

KernelCase Lstm(int64_t t, int64_t b, int64_t in, int64_t hidden, bool bidirectional) {
  const int64_t dirs = bidirectional ? 2 : 1;
  return {absl::StrCat(bidirectional ? "bi-LSTM " : "LSTM ", t, "x", b, "x", in, " h", hidden),
          OpKind::kLstm,
          graph::LstmAttrs{.hidden_size = hidden,
                           .direction = bidirectional ? graph::LstmDirection::kBidirectional
                                                      : graph::LstmDirection::kForward},
          {Act({t, b, in}), Param({dirs, 4 * hidden, in}), Param({dirs, 4 * hidden, hidden}),
           Param({dirs, 8 * hidden})},
          3};
}

KernelCase MaxPool(Shape x, int64_t kh, int64_t kw) {
  return {absl::StrCat("MaxPool ", kh, "x", kw, " ", Dims(x)), OpKind::kMaxPool,
          graph::PoolAttrs{.kernel_shape = {kh, kw}, .strides = {kh, kw}}, {Act(x)}};
}

KernelCase Unary(OpKind kind, absl::string_view name, Shape x, graph::OpAttrs attrs = {}) {
  return {absl::StrCat(name, " ", Dims(x)), kind, std::move(attrs), {Act(x)}};
}

KernelCase Binary(OpKind kind, absl::string_view name, Shape x, graph::OpAttrs attrs = {}) {
  return {absl::StrCat(name, " 2 x ", Dims(x)), kind, std::move(attrs), {Act(x), Act(x)}};
}

// `b`: the batch of one worker (16 of a global 32 on two workers; 4 when quick).
std::vector<KernelCase> Cases(int64_t b) {
  const int64_t frames = 32 * b, tokens = 40 * b;  // OCR: 32 frames; NMT: 20 + 20 tokens
  return {
      Gemm(32, 512, 512), Gemm(tokens, 256, 2000), Gemm(frames, 256, 128),
      Conv3x3({b, 1, 32, 128}, 32, /*data_input=*/true), Conv3x3({b, 32, 16, 64}, 64, false),
      Conv3x3({b, 64, 8, 32}, 128, false),
      Lstm(20, b, 128, 256, false), Lstm(32, b, 128, 128, true),
      {absl::StrCat("Embedding 20x", b, " of 2000x128"), OpKind::kEmbedding, {},
       {Ints({20, b}, 0, 1999), Param({2000, 128})}},
      {absl::StrCat("BatchNorm ", b, "x128x4x32"), OpKind::kBatchNorm, {},
       {Act({b, 128, 4, 32}), Param({128}), Param({128}), Const({128}, -1, 1),
        Const({128}, 0.5, 1.5)}},
      {absl::StrCat("LayerNorm ", tokens, "x256"), OpKind::kLayerNorm,
       graph::LayerNormAttrs{.axis = -1}, {Act({tokens, 256}), Param({256}), Param({256})}},
      MaxPool({b, 32, 32, 128}, 2, 2), MaxPool({b, 128, 4, 32}, 2, 1),
      Unary(OpKind::kRelu, "Relu", {b, 32, 32, 128}),
      Binary(OpKind::kAdd, "Add", {b, 64, 16, 64}),
      Unary(OpKind::kTanh, "Tanh", {b, 64, 16, 64}),
      Unary(OpKind::kReduceSum, "ReduceSum", {tokens, 2000}, graph::AxesAttrs{.axes = {1}}),
      Unary(OpKind::kSoftmax, "Softmax", {tokens, 2000}, graph::AxisAttrs{.axis = -1}),
      Unary(OpKind::kLogSoftmax, "LogSoftmax", {frames, 37}, graph::AxisAttrs{.axis = -1}),
      Unary(OpKind::kTranspose, "Transpose", {20, b, 256}, graph::PermAttrs{.perm = {1, 0, 2}}),
      Binary(OpKind::kConcat, "Concat", {32, b, 128}, graph::AxisAttrs{.axis = 2}),
      {absl::StrCat("SoftmaxCrossEntropy ", tokens, "x2000"), OpKind::kSoftmaxCrossEntropy, {},
       {Act({tokens, 2000}), Ints({tokens}, 0, 1999)}},
      {absl::StrCat("CtcLoss 32x", b, "x37"), OpKind::kCtcLoss, graph::LossAttrs{},
       {{.shape = {32, b, 37}, .lo = -4, .hi = -0.1}, Ints({b, 10}, 1, 36), Ints({b}, 32, 32),
        Ints({b}, 5, 10)}},
  };
}

// The case's node is the graph's last; each activation input is Add(data, shift) before it.
absl::StatusOr<graph::Graph> BuildCaseGraph(const KernelCase& c) {
  graph::Graph g("calibrate");
  TS_ASSIGN_OR_RETURN(const graph::TensorId shift,
                      g.AddTensor({.name = "shift", .shape = {1},
                                   .role = TensorRole::kParameter}));
  graph::Node node{.name = c.label, .kind = c.kind};
  node.attrs = c.attrs.index() == 0 ? graph::DefaultAttrs(c.kind) : c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const CaseInput& in = c.inputs[i];
    const bool computed = in.role == TensorRole::kActivation;
    const std::string name = absl::StrCat("in", i);
    TS_ASSIGN_OR_RETURN(graph::TensorId t,
                        g.AddTensor({.name = computed ? name + ".data" : name, .shape = in.shape,
                                     .dtype = in.dtype,
                                     .role = computed ? TensorRole::kInput : in.role}));
    if (computed) {
      TS_ASSIGN_OR_RETURN(const graph::TensorId sum, g.AddTensor({.name = name}));
      TS_RETURN_IF_ERROR(
          g.AddNode({.name = name + ".add", .kind = OpKind::kAdd, .inputs = {t, shift},
                     .outputs = {sum}})
              .status());
      t = sum;
    }
    node.inputs.push_back(t);
  }
  for (int j = 0; j < c.outputs; ++j) {
    TS_ASSIGN_OR_RETURN(graph::TensorId t, g.AddTensor({.name = absl::StrCat("out", j)}));
    node.outputs.push_back(t);
  }
  TS_RETURN_IF_ERROR(g.AddNode(node).status());
  for (graph::TensorId t : node.outputs) g.AddOutput(t);
  TS_RETURN_IF_ERROR(graph::InferShapes(g));
  return g;
}

// Host memory and kernel views of one case's inputs, outputs and gradients.
struct CaseBuffers {
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<int64_t>> ints;
  std::vector<CpuTensor> in, out, dout, din;
};

CpuTensor NewFloats(CaseBuffers& m, const Shape& shape, int64_t n, std::mt19937& rng, double lo,
                    double hi) {
  std::uniform_real_distribution<float> dist(static_cast<float>(lo), static_cast<float>(hi));
  std::vector<float>& v = m.floats.emplace_back(n);
  for (float& x : v) x = dist(rng);
  return {.shape = shape, .data = v.data()};
}

void MakeBuffers(const KernelCase& c, const graph::Graph& g, CaseBuffers& m) {
  const graph::Node& node = g.node(g.num_nodes() - 1);
  const std::vector<bool> needs_grad = costmodel::AnalyzeBackward(g).needs_grad;
  std::mt19937 rng(7);
  // The views point into the inner vectors, whose storage moves with them when the outer
  // vectors grow.
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const graph::Tensor& t = g.tensor(node.inputs[i]);
    const int64_t n = graph::NumElements(t.shape);
    const CaseInput& spec = c.inputs[i];
    if (t.dtype == DType::kI64) {
      std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(spec.lo),
                                                  static_cast<int64_t>(spec.hi));
      std::vector<int64_t>& v = m.ints.emplace_back(n);
      for (int64_t& x : v) x = dist(rng);
      m.in.push_back({.shape = t.shape, .data = reinterpret_cast<float*>(v.data()),
                      .dtype = DType::kI64});
      m.din.push_back({.shape = t.shape, .dtype = DType::kI64});
      continue;
    }
    m.in.push_back(NewFloats(m, t.shape, n, rng, spec.lo, spec.hi));
    m.din.push_back(needs_grad[node.inputs[i]] ? NewFloats(m, t.shape, n, rng, 0, 0)
                                               : CpuTensor{.shape = t.shape});
  }
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    const graph::Tensor& t = g.tensor(node.outputs[j]);
    const int64_t n = graph::NumElements(t.shape);
    m.out.push_back(NewFloats(m, t.shape, n, rng, 0, 0));
    // As in a model: the loss, or the main output, carries the gradient; LSTM states do not.
    m.dout.push_back(j == 0 ? NewFloats(m, t.shape, n, rng, -1, 1) : CpuTensor{.shape = t.shape});
  }
}

// The fastest forward and backward of the case over a time budget.
absl::StatusOr<KernelSample> TimeCase(const KernelCase& c, const MeasureOptions& o) {
  TS_ASSIGN_OR_RETURN(const graph::Graph g, BuildCaseGraph(c));
  const graph::NodeId id = g.num_nodes() - 1;
  const graph::Node& node = g.node(id);
  const graph::OpClass op_class = graph::GetOpSchema(node.kind).op_class;
  KernelSample s{.label = c.label, .op_class = op_class};
  s.work = PlannerOpWork(g, id, costmodel::EstimateGraph(g).ops[id]);
  CaseBuffers m;
  MakeBuffers(c, g, m);
  const bool backward = std::any_of(m.din.begin(), m.din.end(),
                                    [](const CpuTensor& t) { return t.present(); });
  const exec::cpu::KernelContext ctx{.threads = o.threads};
  exec::cpu::OpState state;
  const double budget = o.quick ? 0.04 : 0.3;
  const int min_runs = 3, max_runs = 1000;
  s.forward_s = s.backward_s = 1e30;
  double spent = 0;
  for (int run = 0; run <= max_runs && (run <= min_runs || spent < budget); ++run) {
    const double start = KernelClockSeconds(o);
    TS_RETURN_IF_ERROR(exec::cpu::Forward<float>(node, m.in, m.out, ctx, state));
    const double middle = KernelClockSeconds(o);
    if (backward) {
      TS_RETURN_IF_ERROR(
          exec::cpu::Backward<float>(node, m.in, m.out, m.dout, m.din, ctx, state));
    }
    const double forward = middle - start;
    const double back = backward ? KernelClockSeconds(o) - middle : 0;
    if (run == 0) continue;  // warm-up
    spent += forward + back;
    s.forward_s = std::min(s.forward_s, forward);
    s.backward_s = std::min(s.backward_s, back);
  }
  return s;
}

}  // namespace

absl::StatusOr<std::vector<KernelSample>> MeasureKernels(const MeasureOptions& options) {
  exec::cpu::SetBlasThreads(options.threads);
  std::vector<KernelSample> samples;
  for (const KernelCase& c : Cases(options.quick ? 4 : 16)) {
    absl::StatusOr<KernelSample> s = TimeCase(c, options);
    if (!s.ok()) {
      return absl::Status(s.status().code(),
                          absl::StrCat("timing ", c.label, ": ", s.status().message()));
    }
    samples.push_back(*std::move(s));
  }
  return samples;
}

}  // namespace tessera::tools
