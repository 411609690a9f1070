// Test helpers for the CPU kernels: a one-node graph from an op description, running its forward
// and backward in float or double, and a numeric gradient check in float64.
//
//   OpCase c{.kind = OpKind::kRelu, .inputs = {{.shape = {3, 4}}}};
//   EXPECT_TRUE(GradientCheck(c));                       // every floating input, central differences
//   auto y = RunForwardF64(c);                           // outputs as doubles
//   ASSERT_TRUE(y.ok());
//
// Inputs with no values get uniform random ones in [lo, hi] (seeded); integer inputs must be given.
// The loss of the check is sum_j <r_j, Y_j> with fixed random r_j, so dY_j = r_j.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessera/costmodel/op_estimate_impl.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::exec::cpu::testing {

struct OpInput {
  graph::Shape shape;
  graph::DType dtype = graph::DType::kF32;
  std::vector<double> values;  // empty: random in [lo, hi] (floating only)
  double lo = -1, hi = 1;
  bool check = true;           // include in the gradient check (floating only)
  bool absent = false;         // an absent optional input (kNoTensor)
  graph::TensorRole role = graph::TensorRole::kInput;
};

struct OpCase {
  graph::OpKind kind = graph::OpKind::kIdentity;
  graph::OpAttrs attrs;  // default: DefaultAttrs(kind)
  std::vector<OpInput> inputs;
  int num_outputs = 1;
  uint32_t seed = 1;
};

inline bool IsIntegral(graph::DType d) {
  return d == graph::DType::kI32 || d == graph::DType::kI64 || d == graph::DType::kBool;
}

inline absl::StatusOr<graph::Graph> BuildOpGraph(const OpCase& c) {
  graph::Graph g("op_test");
  graph::Node node{.name = absl::StrCat("test_", graph::OpName(c.kind)), .kind = c.kind};
  node.attrs = c.attrs.index() == 0 ? graph::DefaultAttrs(c.kind) : c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].absent) {
      node.inputs.push_back(graph::kNoTensor);
      continue;
    }
    auto t = g.AddTensor({.name = absl::StrCat("in", i), .shape = c.inputs[i].shape,
                          .dtype = c.inputs[i].dtype, .role = c.inputs[i].role});
    if (!t.ok()) return t.status();
    node.inputs.push_back(*t);
  }
  for (int j = 0; j < c.num_outputs; ++j) {
    auto t = g.AddTensor({.name = absl::StrCat("out", j)});
    if (!t.ok()) return t.status();
    node.outputs.push_back(*t);
  }
  auto id = g.AddNode(node);
  if (!id.ok()) return id.status();
  for (graph::TensorId t : node.outputs) g.AddOutput(t);
  if (absl::Status s = graph::InferShapes(g); !s.ok()) return s;
  return g;
}

// Storage for one tensor: doubles for floating tensors, int64 for integer ones.
struct Storage {
  std::vector<double> reals;
  std::vector<int64_t> ints;
};

inline int64_t NumElements(const graph::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The input values of a case (random where not given), as doubles / int64.
inline std::vector<Storage> MakeInputs(const OpCase& c) {
  std::mt19937 rng(c.seed);
  std::vector<Storage> in(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const OpInput& x = c.inputs[i];
    if (x.absent) continue;
    const int64_t n = NumElements(x.shape);
    if (IsIntegral(x.dtype)) {
      for (double v : x.values) in[i].ints.push_back(static_cast<int64_t>(v));
      in[i].ints.resize(n, 0);
      continue;
    }
    std::uniform_real_distribution<double> dist(x.lo, x.hi);
    in[i].reals = x.values;
    while (static_cast<int64_t>(in[i].reals.size()) < n) in[i].reals.push_back(dist(rng));
  }
  return in;
}

// Runs Forward<T> (and Backward<T> when `grad_outputs` is given) on `inputs`.
template <typename T>
struct Run {
  std::vector<std::vector<T>> outputs;
  std::vector<std::vector<T>> grad_inputs;  // empty where the input is not floating
};

template <typename T>
absl::StatusOr<Run<T>> RunOp(const graph::Graph& g, const std::vector<Storage>& inputs,
                             const std::vector<std::vector<double>>* grad_outputs,
                             const KernelContext& ctx = {}) {
  const graph::Node& node = g.node(0);
  std::vector<std::vector<T>> reals(inputs.size());
  std::vector<Tensor<T>> in, out, dout, din;
  Run<T> run;
  run.grad_inputs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNoTensor) {
      in.push_back({});
      din.push_back({});
      continue;
    }
    const graph::Tensor& t = g.tensor(node.inputs[i]);
    Tensor<T> view{.shape = t.shape, .dtype = t.dtype};
    if (IsIntegral(t.dtype)) {
      view.dtype = graph::DType::kI64;
      view.data = reinterpret_cast<T*>(const_cast<int64_t*>(inputs[i].ints.data()));
      din.push_back({.shape = t.shape, .dtype = t.dtype});
    } else {
      reals[i].assign(inputs[i].reals.begin(), inputs[i].reals.end());
      view.data = reals[i].data();
      run.grad_inputs[i].assign(reals[i].size(), T(0));
      din.push_back({.shape = t.shape, .data = run.grad_inputs[i].data(), .dtype = t.dtype});
    }
    in.push_back(view);
  }
  run.outputs.resize(node.outputs.size());
  std::vector<std::vector<T>> dys(node.outputs.size());
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    const graph::Tensor& t = g.tensor(node.outputs[j]);
    run.outputs[j].assign(NumElements(t.shape), T(0));
    out.push_back({.shape = t.shape, .data = run.outputs[j].data(), .dtype = t.dtype});
    if (grad_outputs != nullptr) dys[j].assign((*grad_outputs)[j].begin(), (*grad_outputs)[j].end());
    dout.push_back({.shape = t.shape, .data = dys[j].empty() ? nullptr : dys[j].data(), .dtype = t.dtype});
  }
  OpState state;
  absl::Status s = Forward<T>(node, in, out, ctx, state);
  if (!s.ok()) return s;
  if (grad_outputs == nullptr) return run;
  // The backward may read only what it declares it keeps (docs/estimates.md): the
  // runtime reuses the memory of everything else. Every other floating input and output is
  // replaced by NaNs, so a kernel that reads one gives NaN gradients and fails its check.
  // The test graph's inputs are data inputs, which the estimates think need no gradient, so the
  // facts are set by hand: every floating tensor needs one, and nothing is a derivation.
  costmodel::estimate::GraphFacts facts = costmodel::estimate::AnalyzeGraph(g);
  for (graph::TensorId t = 0; t < g.num_tensors(); ++t) {
    facts.needs_grad[t] = graph::IsFloating(g.tensor(t).dtype);
    facts.depends_on_data[t] = true;
  }
  std::fill(facts.derivation.begin(), facts.derivation.end(), false);
  const std::vector<graph::TensorId> reads = costmodel::estimate::CostNode(g, 0, facts).keeps;
  const auto kept = [&](graph::TensorId t) {
    return std::find(reads.begin(), reads.end(), t) != reads.end();
  };
  std::vector<std::vector<T>> poison;
  poison.reserve(in.size() + out.size());
  const auto poisoned = [&](Tensor<T> view, graph::TensorId t) {
    // In evaluation mode a backward also reads running statistics, which a real graph keeps
    // as persistent constants: only training-mode calls are poisoned.
    if (!ctx.training || !view.present() || IsIntegral(view.dtype) || kept(t)) return view;
    poison.emplace_back(view.size(), std::numeric_limits<T>::quiet_NaN());
    view.data = poison.back().data();
    return view;
  };
  std::vector<Tensor<T>> in_b, out_b;
  for (size_t i = 0; i < in.size(); ++i) in_b.push_back(poisoned(in[i], node.inputs[i]));
  for (size_t j = 0; j < out.size(); ++j) out_b.push_back(poisoned(out[j], node.outputs[j]));
  s = Backward<T>(node, in_b, out_b, dout, din, ctx, state);
  if (!s.ok()) return s;
  return run;
}

inline absl::StatusOr<std::vector<std::vector<double>>> RunForwardF64(const OpCase& c) {
  auto g = BuildOpGraph(c);
  if (!g.ok()) return g.status();
  auto run = RunOp<double>(*g, MakeInputs(c), nullptr);
  if (!run.ok()) return run.status();
  return run->outputs;
}

struct GradCheckOptions {
  double eps = 1e-6;
  double rtol = 1e-5;
  double atol = 1e-7;
  int max_elements = 48;  // per input, spread over the tensor
};

// Compares Backward<double> with central differences of the forward for every floating input
// with check = true. Also checks that Backward<float> agrees with Backward<double> to 1e-3.
inline ::testing::AssertionResult GradientCheck(const OpCase& c, const GradCheckOptions& o = {}) {
  auto g = BuildOpGraph(c);
  if (!g.ok()) return ::testing::AssertionFailure() << "graph: " << g.status();
  std::vector<Storage> inputs = MakeInputs(c);
  std::mt19937 rng(c.seed + 1000);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> r(g->node(0).outputs.size());
  for (size_t j = 0; j < r.size(); ++j) {
    r[j].resize(NumElements(g->tensor(g->node(0).outputs[j]).shape));
    for (double& v : r[j]) v = dist(rng);
  }
  auto analytic = RunOp<double>(*g, inputs, &r);
  if (!analytic.ok()) return ::testing::AssertionFailure() << analytic.status();
  const auto loss = [&](const std::vector<Storage>& in) -> double {
    auto run = RunOp<double>(*g, in, nullptr);
    if (!run.ok()) return NAN;
    double l = 0;
    for (size_t j = 0; j < r.size(); ++j)
      for (size_t k = 0; k < r[j].size(); ++k) l += r[j][k] * run->outputs[j][k];
    return l;
  };
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].absent || !c.inputs[i].check || IsIntegral(c.inputs[i].dtype)) continue;
    const int64_t n = static_cast<int64_t>(inputs[i].reals.size());
    const int64_t stride = std::max<int64_t>(1, n / o.max_elements);
    for (int64_t k = 0; k < n; k += stride) {
      std::vector<Storage> plus = inputs, minus = inputs;
      plus[i].reals[k] += o.eps;
      minus[i].reals[k] -= o.eps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * o.eps);
      const double got = analytic->grad_inputs[i][k];
      // Written as !(a <= b) so that a NaN on either side fails the check.
      if (!(std::abs(got - numeric) <= o.atol + o.rtol * std::max(std::abs(numeric), 1.0))) {
        return ::testing::AssertionFailure()
               << graph::OpName(c.kind) << ": d loss / d input " << i << "[" << k
               << "]: backward gives " << got << ", central difference " << numeric;
      }
    }
  }
  // float32 kernels agree with the float64 ones.
  auto single = RunOp<float>(*g, inputs, &r);
  if (!single.ok()) return ::testing::AssertionFailure() << "float: " << single.status();
  for (size_t j = 0; j < r.size(); ++j)
    for (size_t k = 0; k < r[j].size(); ++k)
      if (!(std::abs(single->outputs[j][k] - analytic->outputs[j][k]) <=
            1e-3 * std::max(1.0, std::abs(analytic->outputs[j][k]))))
        return ::testing::AssertionFailure() << "float forward output " << j << "[" << k << "] "
                                             << single->outputs[j][k] << " vs double "
                                             << analytic->outputs[j][k];
  for (size_t i = 0; i < single->grad_inputs.size(); ++i)
    for (size_t k = 0; k < single->grad_inputs[i].size(); ++k)
      if (!(std::abs(single->grad_inputs[i][k] - analytic->grad_inputs[i][k]) <=
            1e-3 * std::max(1.0, std::abs(analytic->grad_inputs[i][k]))))
        return ::testing::AssertionFailure() << "float gradient of input " << i << "[" << k
                                             << "] " << single->grad_inputs[i][k] << " vs double "
                                             << analytic->grad_inputs[i][k];
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::exec::cpu::testing
