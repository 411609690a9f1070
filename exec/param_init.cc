#include "tessera/exec/param_init.h"

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace tessera::exec {
namespace {

using graph::OpKind;

struct Use {
  const graph::Node* node = nullptr;
  int slot = -1;
};

// The first node (in id order) reading `tensor`, possibly through parameter derivations
// (a Transpose or Identity of the weight), and the slot it reads.
Use FirstUse(const graph::Graph& g, graph::TensorId tensor, int depth = 0) {
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
    const graph::Node& node = g.node(n);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != tensor) continue;
      const bool derivation = node.kind == OpKind::kTranspose || node.kind == OpKind::kIdentity ||
                              node.kind == OpKind::kReshape || node.kind == OpKind::kCast;
      if (derivation && depth < 4 && !node.outputs.empty()) {
        Use next = FirstUse(g, node.outputs[0], depth + 1);
        if (next.node != nullptr) return next;
      }
      return {&node, static_cast<int>(i)};
    }
  }
  return {};
}

int64_t FanIn(const graph::Shape& shape, const Use& use) {
  if (shape.size() < 2) return shape.empty() ? 1 : shape[0];
  if (use.node != nullptr && use.node->kind == OpKind::kConv) {
    int64_t fan = 1;
    for (size_t i = 1; i < shape.size(); ++i) fan *= shape[i];
    return fan;
  }
  if (use.node != nullptr && use.node->kind == OpKind::kGemm) {
    const auto* a = std::get_if<graph::GemmAttrs>(&use.node->attrs);
    const bool trans = use.slot == 1 ? (a != nullptr && a->trans_b) : (a != nullptr && !a->trans_a);
    return trans ? shape[1] : shape[0];
  }
  return shape[shape.size() - 2];  // MatMul B [.., K, N]
}

uint64_t Seed(uint64_t seed, const std::string& name) {
  return std::hash<std::string>{}(name) ^ (seed * 0x9E3779B97F4A7C15ull);
}

}  // namespace

absl::StatusOr<std::vector<float>> InitialValues(const graph::Graph& graph,
                                                 graph::TensorId tensor, uint64_t seed) {
  if (tensor < 0 || tensor >= graph.num_tensors()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor id ", tensor, " is not in the graph"));
  }
  const graph::Tensor& t = graph.tensor(tensor);
  const int64_t n = graph::NumElements(t.shape);
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name, "' has no inferred shape; run InferShapes first"));
  }
  std::vector<float> values(n, 0.f);
  const Use use = FirstUse(graph, tensor);
  const OpKind kind = use.node != nullptr ? use.node->kind : OpKind::kIdentity;
  if (t.role == graph::TensorRole::kConstant) {
    if (!t.data.empty()) {
      for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(t.data[i % t.data.size()]);
    } else if (kind == OpKind::kBatchNorm && use.slot == 4) {
      std::fill(values.begin(), values.end(), 1.f);
    }
    return values;
  }
  if (t.role != graph::TensorRole::kParameter) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name, "' is not a parameter or constant"));
  }
  std::mt19937_64 rng(Seed(seed, t.name));
  const auto uniform = [&](double bound) {
    std::uniform_real_distribution<double> d(-bound, bound);
    for (float& v : values) v = static_cast<float>(d(rng));
  };
  const bool norm = kind == OpKind::kBatchNorm || kind == OpKind::kLayerNorm;
  if (norm && use.slot == 1) {
    std::fill(values.begin(), values.end(), 1.f);
  } else if (kind == OpKind::kEmbedding && use.slot == 1) {
    std::normal_distribution<double> d(0, 1);
    for (float& v : values) v = static_cast<float>(d(rng));
  } else if (kind == OpKind::kLstm && use.slot >= 1 && use.slot <= 3) {
    const auto* a = std::get_if<graph::LstmAttrs>(&use.node->attrs);
    uniform(1.0 / std::sqrt(static_cast<double>(a != nullptr && a->hidden_size > 0
                                                    ? a->hidden_size : 1)));
  } else if (t.shape.size() >= 2 && !norm) {
    uniform(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, FanIn(t.shape, use)))));
  } else if (t.shape.size() == 1 && (kind == OpKind::kMul || kind == OpKind::kDiv ||
                                     kind == OpKind::kMatMul)) {
    // A gain or a weight vector (an attention vector v, normalised as v / |v|): zeros would
    // stop it, or make it NaN.
    uniform(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, n))));
  }
  return values;
}

}  // namespace tessera::exec
