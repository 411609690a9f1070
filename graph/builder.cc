// GraphBuilder core: Values, tensors, naming, scopes, emitting nodes, Build().
#include "tessera/graph/builder.h"

#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph {

// ---------------------------------------------------------------- Value

Shape Value::shape() const {
  if (!valid() || id_ >= builder_->graph_.num_tensors()) return {};
  return builder_->graph_.tensor(id_).shape;
}

DType Value::dtype() const {
  if (!valid() || id_ >= builder_->graph_.num_tensors()) return DType::kF32;
  return builder_->graph_.tensor(id_).dtype;
}

std::string Value::name() const {
  if (!valid() || id_ >= builder_->graph_.num_tensors()) return "";
  return builder_->graph_.tensor(id_).name;
}

int64_t Value::dim(int64_t axis) const {
  const Shape s = shape();
  const auto n = NormalizeAxis(axis, static_cast<int64_t>(s.size()));
  return n ? s[*n] : 0;
}

namespace {

// Runs `f(builder)` when the value has a builder; an invalid Value otherwise.
template <typename F>
Value Fluent(const Value& v, F f) {
  return v.builder() == nullptr ? Value() : f(*v.builder());
}

}  // namespace

Value Value::Relu(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Relu(*this, n); });
}
Value Value::Tanh(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kTanh, *this, n); });
}
Value Value::Sigmoid(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kSigmoid, *this, n); });
}
Value Value::Gelu(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kGelu, *this, n); });
}
Value Value::Exp(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kExp, *this, n); });
}
Value Value::Log(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kLog, *this, n); });
}
Value Value::Sqrt(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kSqrt, *this, n); });
}
Value Value::Neg(absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unary(OpKind::kNeg, *this, n); });
}
Value Value::Reshape(Shape s, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Reshape(*this, std::move(s), n); });
}
Value Value::Transpose(std::vector<int64_t> perm, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Transpose(*this, std::move(perm), n); });
}
Value Value::Flatten(int64_t axis, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Flatten(*this, axis, n); });
}
Value Value::Squeeze(std::vector<int64_t> axes, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Squeeze(*this, std::move(axes), n); });
}
Value Value::Unsqueeze(std::vector<int64_t> axes, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Unsqueeze(*this, std::move(axes), n); });
}
Value Value::Softmax(int64_t axis, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Softmax(*this, axis, n); });
}
Value Value::LogSoftmax(int64_t axis, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.LogSoftmax(*this, axis, n); });
}
Value Value::Dropout(double p, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Dropout(*this, p, n); });
}
Value Value::Cast(DType to, absl::string_view n) const {
  return Fluent(*this, [&](GraphBuilder& b) { return b.Cast(*this, to, n); });
}

namespace {

// The builder of either operand (a's first), for the free operators.
GraphBuilder* BuilderOf(const Value& a, const Value& b) {
  return a.builder() != nullptr ? a.builder() : b.builder();
}

}  // namespace

Value operator+(const Value& a, const Value& b) {
  GraphBuilder* g = BuilderOf(a, b);
  return g == nullptr ? Value() : g->Add(a, b);
}
Value operator-(const Value& a, const Value& b) {
  GraphBuilder* g = BuilderOf(a, b);
  return g == nullptr ? Value() : g->Sub(a, b);
}
Value operator*(const Value& a, const Value& b) {
  GraphBuilder* g = BuilderOf(a, b);
  return g == nullptr ? Value() : g->Mul(a, b);
}
Value operator/(const Value& a, const Value& b) {
  GraphBuilder* g = BuilderOf(a, b);
  return g == nullptr ? Value() : g->Div(a, b);
}

// ---------------------------------------------------------------- scopes

NameScope::NameScope(GraphBuilder* builder, std::string prefix) : builder_(builder) {
  builder_->scopes_.push_back(std::move(prefix));
}

NameScope::~NameScope() { builder_->scopes_.pop_back(); }

NameScope GraphBuilder::Scope(absl::string_view name) {
  return NameScope(this, absl::StrCat(Prefix(), name, "."));
}

// ---------------------------------------------------------------- core

GraphBuilder::GraphBuilder(std::string graph_name) : graph_(std::move(graph_name)) {}

void GraphBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

bool GraphBuilder::CheckInputs(absl::string_view what, absl::Span<const Value> values) {
  if (!status_.ok()) return false;
  int i = 0;
  for (const Value& v : values) {
    if (!v.valid() || v.builder_ != this || v.id_ >= graph_.num_tensors()) {
      Fail(absl::InvalidArgumentError(absl::StrCat(
          what, ": input ", i, " is not a valid Value of graph '", graph_.name(),
          "' (default-constructed, or from another GraphBuilder)")));
      return false;
    }
    ++i;
  }
  return true;
}

bool GraphBuilder::Taken(absl::string_view full) const {
  return used_names_.contains(full) || graph_.FindTensor(full).has_value();
}

std::string GraphBuilder::Describe(absl::string_view kind, absl::string_view name) const {
  if (name.empty()) return absl::StrCat(kind, " (automatic name, scope '", Prefix(), "')");
  return absl::StrCat(kind, " '", Prefix(), name, "'");
}

std::string GraphBuilder::LayerName(absl::string_view given, absl::string_view auto_base) {
  if (!status_.ok()) return "";
  if (!given.empty()) {
    std::string full = absl::StrCat(Prefix(), given);
    if (Taken(full)) {
      Fail(absl::AlreadyExistsError(absl::StrCat(
          "name '", full, "' is already used in graph '", graph_.name(),
          "'; give each layer its own name (or build it inside a different Scope())")));
      return "";
    }
    used_names_.insert(full);
    return full;
  }
  const std::string base = absl::StrCat(Prefix(), auto_base);
  int64_t& counter = auto_counters_[base];
  std::string full;
  do {
    full = absl::StrCat(base, "_", ++counter);
  } while (Taken(full));
  used_names_.insert(full);
  return full;
}

std::string GraphBuilder::SubName(absl::string_view full, absl::string_view suffix) {
  if (!status_.ok()) return "";
  std::string name = absl::StrCat(full, ".", suffix);
  if (Taken(name)) {
    Fail(absl::AlreadyExistsError(absl::StrCat("name '", name, "' (part of layer '", full,
                                               "') is already used in graph '", graph_.name(),
                                               "'; rename one of them")));
    return "";
  }
  used_names_.insert(name);
  return name;
}

Value GraphBuilder::NewTensor(std::string full_name, Shape shape, DType dtype, TensorRole role,
                              std::vector<double> data) {
  if (!status_.ok() || full_name.empty()) return Value();
  for (int64_t d : shape) {
    if (d < 0) {
      Fail(absl::InvalidArgumentError(absl::StrCat("tensor '", full_name, "' has shape ",
                                                   ShapeString(shape),
                                                   "; dimensions must be >= 0")));
      return Value();
    }
  }
  if (!data.empty() && static_cast<int64_t>(data.size()) != NumElements(shape)) {
    Fail(absl::InvalidArgumentError(absl::StrCat("constant '", full_name, "' of shape ",
                                                 ShapeString(shape), " has ", data.size(),
                                                 " values; expected ", NumElements(shape))));
    return Value();
  }
  auto id = graph_.AddTensor({.name = std::move(full_name), .shape = std::move(shape),
                              .dtype = dtype, .role = role, .data = std::move(data)});
  if (!id.ok()) {
    Fail(id.status());
    return Value();
  }
  return Value(this, *id);
}

Value GraphBuilder::Input(absl::string_view name, Shape shape, DType dtype) {
  return NewTensor(LayerName(name, "input"), std::move(shape), dtype, TensorRole::kInput);
}

Value GraphBuilder::Parameter(absl::string_view name, Shape shape, DType dtype) {
  return NewTensor(LayerName(name, "param"), std::move(shape), dtype, TensorRole::kParameter);
}

Value GraphBuilder::Constant(absl::string_view name, Shape shape, std::vector<double> data,
                             DType dtype) {
  return NewTensor(LayerName(name, "const"), std::move(shape), dtype, TensorRole::kConstant,
                   std::move(data));
}

Value GraphBuilder::Scalar(double value, DType dtype) {
  return NewTensor(LayerName("", "const"), {}, dtype, TensorRole::kConstant, {value});
}

Value GraphBuilder::Find(absl::string_view full_name) {
  if (!status_.ok()) return Value();
  const auto id = graph_.FindTensor(full_name);
  if (!id) {
    Fail(absl::NotFoundError(absl::StrCat("graph '", graph_.name(), "' has no tensor named '",
                                          full_name, "' (Find takes the full, scoped name)")));
    return Value();
  }
  return Value(this, *id);
}

void GraphBuilder::Output(Value v) {
  if (!CheckInputs("Output()", {v})) return;
  graph_.AddOutput(v.id_);
}

std::vector<Value> GraphBuilder::Emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                                      const std::string& node_name,
                                      std::vector<std::string> output_names) {
  if (!status_.ok() || node_name.empty()) return {};
  if (output_names.empty()) output_names.push_back(node_name);
  const OpSchema& schema = GetOpSchema(kind);
  const int n_in = static_cast<int>(inputs.size());
  if (n_in < schema.min_inputs || n_in > schema.max_inputs) {
    Fail(absl::InvalidArgumentError(absl::StrCat("node '", node_name, "' (", schema.name,
                                                 ") has ", n_in, " inputs; expected ",
                                                 schema.min_inputs, " to ", schema.max_inputs)));
    return {};
  }
  Node node{.name = node_name, .kind = kind, .inputs = std::move(inputs),
            .outputs = std::vector<TensorId>(output_names.size(), kNoTensor),
            .attrs = std::move(attrs)};
  auto types = InferOutputTypes(graph_, node);
  if (!types.ok()) {
    Fail(types.status());
    return {};
  }
  std::vector<Value> outs;
  for (size_t i = 0; i < output_names.size(); ++i) {
    Value v = NewTensor(output_names[i], (*types)[i].shape, (*types)[i].dtype,
                        TensorRole::kActivation);
    if (!v.valid()) return {};
    node.outputs[i] = v.id_;
    outs.push_back(v);
  }
  auto id = graph_.AddNode(std::move(node));
  if (!id.ok()) {
    Fail(id.status());
    return {};
  }
  return outs;
}

Value GraphBuilder::EmitOne(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                            const std::string& node_name) {
  std::vector<Value> outs = Emit(kind, std::move(inputs), std::move(attrs), node_name);
  return outs.empty() ? Value() : outs[0];
}

Value GraphBuilder::Simple(OpKind kind, std::initializer_list<Value> inputs, OpAttrs attrs,
                           absl::string_view name, absl::string_view auto_base) {
  if (!CheckInputs(Describe(OpName(kind), name), inputs)) {
    return Value();
  }
  const std::string full = LayerName(name, auto_base);
  std::vector<TensorId> ids;
  for (const Value& v : inputs) ids.push_back(v.id_);
  return EmitOne(kind, std::move(ids), std::move(attrs), full);
}

std::vector<Value> GraphBuilder::AddOp(OpKind kind, absl::Span<const Value> inputs,
                                       OpAttrs attrs, absl::string_view name, int num_outputs) {
  if (!CheckInputs(Describe(OpName(kind), name), inputs)) return {};
  std::vector<TensorId> ids;
  for (const Value& v : inputs) ids.push_back(v.id_);
  std::string base(OpName(kind));
  for (char& c : base) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string full = LayerName(name, base);
  if (full.empty()) return {};
  if (num_outputs < 1) {
    Fail(absl::InvalidArgumentError(absl::StrCat("node '", full, "' (", OpName(kind),
                                                 ") must have at least one output")));
    return {};
  }
  // Several outputs (and every Split output) are named "<node>.<i>".
  std::vector<std::string> outs;
  if (num_outputs > 1 || kind == OpKind::kSplit) {
    for (int i = 0; i < num_outputs; ++i) outs.push_back(absl::StrCat(full, ".", i));
  }
  return Emit(kind, std::move(ids), std::move(attrs), full, std::move(outs));
}

void GraphBuilder::LayerError(absl::string_view kind, absl::string_view full_name,
                              std::initializer_list<Value> inputs, absl::string_view message) {
  std::vector<std::string> parts;
  for (const Value& v : inputs) {
    parts.push_back(absl::StrCat("'", v.name(), "' ", ShapeString(v.shape()), " ",
                                 DTypeName(v.dtype())));
  }
  Fail(absl::InvalidArgumentError(absl::StrCat("layer '", full_name, "' (", kind,
                                               ") with input ", absl::StrJoin(parts, ", "),
                                               ": ", message)));
}

absl::StatusOr<Graph> GraphBuilder::Build() && {
  if (built_) return absl::FailedPreconditionError("GraphBuilder::Build() was already called");
  built_ = true;
  if (!status_.ok()) return status_;
  if (graph_.outputs().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("graph '", graph_.name(),
                     "' has no outputs; call Output() on the loss or the result"));
  }
  if (absl::Status s = graph_.Validate(); !s.ok()) return s;
  status_ = absl::FailedPreconditionError("GraphBuilder::Build() was already called");
  return std::move(graph_);
}

}  // namespace tessera::graph
