#include "tessera/exec/data_source.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/hash.h"

namespace tessera::exec {
namespace {

using graph::Graph;
using graph::OpKind;
using graph::TensorId;

using base::Fnv1a64;
using base::Mix64;

// SplitMix64 stream.
class Stream {
 public:
  explicit Stream(uint64_t state) : state_(state) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return Mix64(state_ - 0x9e3779b97f4a7c15ull);
  }
  float Uniform() {  // [-1, 1): 24 random bits
    return static_cast<float>(Next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
  uint64_t Below(uint64_t n) {  // [0, n), Lemire's multiply-high
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

int64_t Dim(const Graph& g, TensorId t, int64_t axis) {
  const graph::Shape& s = g.tensor(t).shape;
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  return axis >= 0 && axis < static_cast<int64_t>(s.size()) ? s[axis] : -1;
}

// What a reader of integer input `t` (slot `slot` of `node`) accepts: [low, high) and the
// value to skip, or nothing when the reader does not constrain it.
bool ReaderRange(const Graph& g, const graph::Node& node, size_t slot, RandomDataSource::Input& in) {
  const auto& x = node.inputs;
  switch (node.kind) {
    case OpKind::kEmbedding:
      if (slot != 0 || Dim(g, x[1], 0) < 0) return false;
      in.high = std::min(in.high, Dim(g, x[1], 0));
      return true;
    case OpKind::kGather: {
      const auto* a = std::get_if<graph::AxisAttrs>(&node.attrs);
      const int64_t n = Dim(g, x[0], a != nullptr ? a->axis : 0);
      if (slot != 1 || n < 0) return false;
      in.high = std::min(in.high, n);
      return true;
    }
    case OpKind::kSoftmaxCrossEntropy:
      if (slot != 1 || Dim(g, x[0], 1) < 0) return false;
      in.high = std::min(in.high, Dim(g, x[0], 1));
      return true;
    case OpKind::kCtcLoss: {  // log_probs[T, N, C], targets[N, S], input_lengths, target_lengths
      const auto* a = std::get_if<graph::LossAttrs>(&node.attrs);
      const int64_t lengths[] = {0, 0, Dim(g, x[0], 0), Dim(g, x[1], 1)};
      if (slot == 1 && Dim(g, x[0], 2) > 0) {
        in.high = std::min(in.high, Dim(g, x[0], 2) - 1);
        in.skip = a != nullptr ? a->blank : 0;
        return true;
      }
      if (slot < 2 || lengths[slot] < 0) return false;
      in.low = lengths[slot];
      in.high = lengths[slot] + 1;
      return true;
    }
    case OpKind::kLstm: {  // sequence_lens (slot 4): every sequence whole, T
      const auto* a = std::get_if<graph::LstmAttrs>(&node.attrs);
      const int64_t steps = Dim(g, x[0], a != nullptr && a->layout == 1 ? 1 : 0);
      if (slot != 4 || steps < 0) return false;
      in.low = steps;
      in.high = steps + 1;
      return true;
    }
    default:
      return false;
  }
}

// Ops whose output holds their (first) input's values, only re-laid out.
bool KeepsValues(OpKind kind) {
  switch (kind) {
    case OpKind::kIdentity:
    case OpKind::kReshape:
    case OpKind::kFlatten:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kTranspose: return true;
    default: return false;
  }
}

RandomDataSource::Input DescribeInput(const Graph& g, TensorId t,
                                      const std::vector<std::vector<graph::NodeId>>& consumers,
                                      const RandomDataOptions& options) {
  const graph::Tensor& x = g.tensor(t);
  RandomDataSource::Input in{.name = x.name, .elements = graph::NumElements(x.shape),
                             .floating = graph::IsFloating(x.dtype)};
  if (in.floating) return in;
  if (x.dtype == graph::DType::kBool) return in;  // [0, 2)
  in.high = std::numeric_limits<int64_t>::max();
  bool constrained = false;
  // The readers of t, and of its values re-laid out (a sequence's targets flattened for the
  // loss, say).
  std::vector<TensorId> frontier = {t};
  for (size_t i = 0; i < frontier.size() && i < 64; ++i) {
    for (graph::NodeId id : consumers[frontier[i]]) {
      const graph::Node& node = g.node(id);
      if (KeepsValues(node.kind)) {
        frontier.push_back(node.outputs[0]);
        continue;
      }
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (node.inputs[slot] == frontier[i]) constrained |= ReaderRange(g, node, slot, in);
      }
    }
  }
  if (!constrained) in.high = options.classes;
  if (auto it = options.classes_per_input.find(x.name); it != options.classes_per_input.end()) {
    in.low = 0;
    in.high = it->second;
    in.skip = -1;
  }
  return in;
}

}  // namespace

std::vector<float>& Batch::Floats(const std::string& name) {
  Values& v = values[name];
  if (!std::holds_alternative<std::vector<float>>(v)) v = std::vector<float>();
  return std::get<std::vector<float>>(v);
}

std::vector<int64_t>& Batch::Ints(const std::string& name) {
  Values& v = values[name];
  if (!std::holds_alternative<std::vector<int64_t>>(v)) v = std::vector<int64_t>();
  return std::get<std::vector<int64_t>>(v);
}

int64_t Batch::MaxInt(const std::string& name) const {
  const auto it = values.find(name);
  if (it == values.end()) return 0;
  const auto* ints = std::get_if<std::vector<int64_t>>(&it->second);
  return ints == nullptr || ints->empty() ? 0 : *std::max_element(ints->begin(), ints->end());
}

DataSource::~DataSource() = default;

bool DataSource::HasRows() const { return false; }

absl::Status DataSource::NextRows(int64_t, int64_t, int64_t, Batch&) {
  return absl::UnimplementedError("this data source decodes whole batches only (HasRows false)");
}

int DataSource::Variant(const Batch&) const { return kWhole; }

absl::Status DataSource::FitVariant(int variant, Batch&) const {
  if (variant == kWhole) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "this data source has no shape variants; asked to fit variant ", variant));
}

absl::Status SetInputs(TrainingProgram& program, const Batch& batch) {
  for (const auto& [name, values] : batch.values) {
    if (const auto* f = std::get_if<std::vector<float>>(&values)) {
      TS_RETURN_IF_ERROR(program.SetInput(name, *f));
    } else {
      TS_RETURN_IF_ERROR(program.SetInput(name, std::get<std::vector<int64_t>>(values)));
    }
  }
  return absl::OkStatus();
}

RandomDataSource::RandomDataSource(const graph::Graph& graph, const RandomDataOptions& options)
    : seed_(options.seed) {
  const std::vector<std::vector<graph::NodeId>> consumers = graph.Consumers();
  for (TensorId t : graph.TensorsWithRole(graph::TensorRole::kInput)) {
    inputs_.push_back(DescribeInput(graph, t, consumers, options));
  }
}

absl::Status RandomDataSource::Next(int64_t step, Batch& batch) {
  for (const Input& in : inputs_) {
    Stream rng(Mix64(seed_ ^ Mix64(static_cast<uint64_t>(step) ^ Mix64(Fnv1a64(in.name)))));
    const size_t n = static_cast<size_t>(std::max<int64_t>(in.elements, 0));
    if (in.floating) {
      std::vector<float>& v = batch.Floats(in.name);
      v.resize(n);
      for (float& x : v) x = rng.Uniform();
      continue;
    }
    if (in.high <= in.low) {
      return absl::InvalidArgumentError(absl::StrCat(
          "random data for integer input '", in.name, "': the range [", in.low, ", ", in.high,
          ") is empty; give the input a number of classes >= 1 (RandomDataOptions)"));
    }
    const uint64_t range = static_cast<uint64_t>(in.high) - static_cast<uint64_t>(in.low);
    std::vector<int64_t>& v = batch.Ints(in.name);
    v.resize(n);
    for (int64_t& x : v) {
      x = in.low + static_cast<int64_t>(rng.Below(range));
      if (in.skip >= 0 && x >= in.skip) ++x;
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
