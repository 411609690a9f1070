#include "tessera/graph/onnx/importer.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/translate.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph::onnx_import {

// ---------------------------------------------------------------- NodeCtx

int64_t NodeCtx::opset() const { return importer_.opset(); }

const Value* NodeCtx::input_value(int i) const {
  if (!has_input(i)) return nullptr;
  return importer_.Find(node_.input(i));
}

const ConstTensor* NodeCtx::Const(int i) const {
  const Value* v = input_value(i);
  return v != nullptr && v->constant ? &*v->constant : nullptr;
}

absl::StatusOr<std::vector<int64_t>> NodeCtx::ConstInts(int i, absl::string_view what) const {
  if (!has_input(i)) return Error(absl::StrCat("input ", i, " (", what, ") is missing"));
  const ConstTensor* c = Const(i);
  if (c == nullptr) {
    return Error(absl::StrCat("input ", i, " ('", node_.input(i), "', ", what,
                              ") is computed from data at run time; Tessera needs it known at "
                              "import time"));
  }
  if (c->size() > 4096) return Error(absl::StrCat("input ", i, " (", what, ") is too long"));
  return c->AsInts();
}

absl::StatusOr<double> NodeCtx::ConstScalar(int i, absl::string_view what) const {
  const ConstTensor* c = Const(i);
  if (c == nullptr) {
    return Error(absl::StrCat("input ", i, " ('", has_input(i) ? node_.input(i) : "", "', ", what,
                              ") must be a constant known at import time"));
  }
  if (c->size() != 1) return Error(absl::StrCat("input ", i, " (", what, ") must be a scalar"));
  return c->Get(0);
}

absl::StatusOr<TensorId> NodeCtx::Tensor(int i) const {
  if (!has_input(i)) return Error(absl::StrCat("input ", i, " is required"));
  return importer_.Materialize(node_.input(i));
}

absl::StatusOr<TensorId> NodeCtx::OptionalTensor(int i) const {
  if (!has_input(i)) return kNoTensor;
  return importer_.Materialize(node_.input(i));
}

absl::Status NodeCtx::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", name_, "' (", node_.op_type(), "): ", message));
}

namespace {

// Adds `node` to the graph and writes its inferred output types into the
// tensors and the value table.
absl::Status AddAndInfer(Importer& im, Node node) {
  Graph& g = im.graph();
  TS_ASSIGN_OR_RETURN(std::vector<TensorType> types, InferOutputTypes(g, node));
  std::vector<TensorId> outs = node.outputs;
  TS_RETURN_IF_ERROR(g.AddNode(std::move(node)).status());
  for (size_t i = 0; i < outs.size(); ++i) {
    Tensor& t = g.mutable_tensor(outs[i]);
    t.shape = types[i].shape;
    t.dtype = types[i].dtype;
    if (Value* v = im.Find(t.name)) {
      v->shape = std::move(types[i].shape);
      v->dtype = types[i].dtype;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NodeCtx::Emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                           int num_outputs) {
  const int n = num_outputs >= 0 ? num_outputs : node_.output_size();
  std::vector<TensorId> outs;
  for (int i = 0; i < n; ++i) {
    const std::string out_name = has_output(i) ? node_.output(i)
                                               : importer_.UniqueTensorName(
                                                     absl::StrCat(name_, "/output_", i));
    TS_ASSIGN_OR_RETURN(TensorId t, importer_.NewActivation(out_name));
    outs.push_back(t);
  }
  return AddAndInfer(importer_, Node{.name = name_, .kind = kind, .inputs = std::move(inputs),
                                     .outputs = std::move(outs), .attrs = std::move(attrs)});
}

absl::StatusOr<TensorId> NodeCtx::EmitTemp(OpKind kind, std::vector<TensorId> inputs,
                                           OpAttrs attrs, absl::string_view suffix) {
  const std::string base = absl::StrCat(name_, "/", suffix);
  TS_ASSIGN_OR_RETURN(TensorId t, importer_.NewActivation(importer_.UniqueTensorName(base)));
  TS_RETURN_IF_ERROR(AddAndInfer(importer_, Node{.name = base, .kind = kind,
                                                 .inputs = std::move(inputs), .outputs = {t},
                                                 .attrs = std::move(attrs)}));
  return t;
}

absl::Status NodeCtx::EmitOutput(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs, int out,
                                 absl::string_view suffix) {
  const std::string out_name =
      has_output(out) ? node_.output(out)
                      : importer_.UniqueTensorName(absl::StrCat(name_, "/output_", out));
  TS_ASSIGN_OR_RETURN(TensorId t, importer_.NewActivation(out_name));
  const std::string node_name = suffix.empty() ? name_ : absl::StrCat(name_, "/", suffix);
  return AddAndInfer(importer_, Node{.name = node_name, .kind = kind, .inputs = std::move(inputs),
                                     .outputs = {t}, .attrs = std::move(attrs)});
}

absl::Status NodeCtx::SetConst(int out, ConstTensor value) {
  if (!has_output(out)) return absl::OkStatus();
  if (absl::Status s = importer_.ChargeFolded(value.size()); !s.ok()) return Error(s.message());
  TS_ASSIGN_OR_RETURN(Value * v, importer_.Define(node_.output(out)));
  v->shape = value.shape;
  v->dtype = value.dtype;
  v->constant = std::move(value);
  return absl::OkStatus();
}

absl::Status NodeCtx::Alias(int out, int in) {
  if (!has_output(out)) return absl::OkStatus();
  const Value* src = input_value(in);
  if (src == nullptr) return Error(absl::StrCat("input ", in, " is required"));
  const Value copy = *src;
  TS_ASSIGN_OR_RETURN(Value * v, importer_.Define(node_.output(out)));
  *v = copy;
  return absl::OkStatus();
}

// ---------------------------------------------------------------- Importer

Value* Importer::Find(const std::string& name) {
  auto it = value_index_.find(name);
  return it == value_index_.end() ? nullptr : &values_[it->second];
}

absl::StatusOr<Value*> Importer::Define(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("a value needs a name");
  auto [it, inserted] = value_index_.emplace(name, static_cast<int>(values_.size()));
  if (!inserted) {
    return absl::InvalidArgumentError(
        absl::StrCat("value '", name, "' is defined twice (by two nodes, or by a node and a "
                     "graph input or initializer)"));
  }
  values_.emplace_back();
  return &values_.back();
}

absl::StatusOr<TensorId> Importer::NewActivation(const std::string& name) {
  TS_ASSIGN_OR_RETURN(Value * v, Define(name));
  (void)v;
  TS_ASSIGN_OR_RETURN(TensorId t, graph_.AddTensor({.name = name}));
  Find(name)->tensor = t;
  return t;
}

absl::StatusOr<TensorId> Importer::Materialize(const std::string& name) {
  Value* v = Find(name);
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is not defined"));
  }
  if (v->tensor != kNoTensor) return v->tensor;
  if (!v->constant) {
    return absl::InvalidArgumentError(absl::StrCat("value '", name, "' has no tensor"));
  }
  graph::Tensor t{.name = name, .shape = v->shape, .dtype = v->dtype,
                  .role = TensorRole::kConstant};
  if (v->constant->size() <= kMaxDataElements) t.data = v->constant->AsDoubles();
  TS_ASSIGN_OR_RETURN(TensorId id, graph_.AddTensor(std::move(t)));
  Find(name)->tensor = id;
  return id;
}

std::string Importer::UniqueTensorName(absl::string_view base) {
  std::string name(base);
  while (value_index_.contains(name) || graph_.FindTensor(name).has_value()) {
    name = absl::StrCat(base, "_", ++name_counter_);
  }
  return name;
}

absl::Status Importer::ChargeFolded(int64_t n) {
  folded_total_ += n;
  if (folded_total_ > kMaxFoldedTotal) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "folding exceeds ", kMaxFoldedTotal,
        " elements in total; the model computes too much at import time"));
  }
  return absl::OkStatus();
}

void Importer::AddCandidate(Candidate c) {
  candidate_index_.insert(c.tensor);
  candidates_.push_back(c);
}

std::string Importer::NodeName(const onnx::NodeProto& node, int index) {
  std::string base = node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
  std::string name = base;
  for (int k = 1; node_names_.contains(name); ++k) name = absl::StrCat(base, "_", k);
  node_names_.insert(name);
  return name;
}

absl::Status Importer::AddInputs(const std::vector<InputDecl>& inputs) {
  for (const InputDecl& in : inputs) {
    TS_ASSIGN_OR_RETURN(Value * v, Define(in.name));
    v->shape = in.shape;
    v->dtype = in.dtype;
    if (in.values) {
      v->constant = in.values;
      continue;
    }
    TS_ASSIGN_OR_RETURN(TensorId t, graph_.AddTensor({.name = in.name, .shape = in.shape,
                                                      .dtype = in.dtype,
                                                      .role = in.is_initializer
                                                                  ? TensorRole::kConstant
                                                                  : TensorRole::kInput,
                                                      .data = in.data}));
    Find(in.name)->tensor = t;
    AddCandidate({.tensor = t, .is_initializer = in.is_initializer});
    if (batch_rewriter_ != nullptr) batch_rewriter_->RecordInput(*this, in.name);
  }
  return absl::OkStatus();
}

void Importer::Poison(const onnx::NodeProto& node) {
  for (const std::string& out : node.output()) {
    if (out.empty()) continue;
    auto v = Define(out);
    if (v.ok()) (*v)->poisoned = true;
  }
}

void Importer::RecordUnsupported(const onnx::NodeProto& node, const std::string& name,
                                 std::string note) {
  const std::string type = node.domain().empty() || node.domain() == "ai.onnx"
                               ? node.op_type()
                               : absl::StrCat(node.domain(), ".", node.op_type());
  if (unsupported_types_.insert(type).second) {
    unsupported_.push_back({.op_type = type, .node = name, .note = std::move(note)});
  }
}

absl::Status Importer::ConvertNode(const onnx::NodeProto& node, const std::string& name) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    RecordUnsupported(node, name, "");
    Poison(node);
    return absl::OkStatus();
  }
  bool poisoned = false;
  for (const std::string& in : node.input()) {
    if (in.empty()) continue;
    const Value* v = Find(in);
    if (v == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", name, "' (", op, ") reads '", in,
          "', which no node, graph input or initializer produces"));
    }
    poisoned = poisoned || v->poisoned;
  }
  const TranslateFn translate = FindTranslation(op);
  const bool foldable = IsFoldable(op);
  if (poisoned || (translate == nullptr && !foldable)) {
    if (translate == nullptr) {
      RecordUnsupported(node, name, foldable ? "supported only on values known at import time" : "");
    }
    Poison(node);
    return absl::OkStatus();
  }
  std::optional<onnx::NodeProto> rewritten;
  if (batch_rewriter_ != nullptr) {
    TS_ASSIGN_OR_RETURN(rewritten, batch_rewriter_->Rewrite(*this, node, name));
  }
  NodeCtx ctx(*this, rewritten ? *rewritten : node, name);
  bool folded = false;
  if (foldable) {
    TS_ASSIGN_OR_RETURN(folded, TryFold(ctx));
  }
  if (!folded && translate == nullptr) {
    RecordUnsupported(node, name, "supported only on values known at import time");
    Poison(node);
    return absl::OkStatus();
  }
  if (!folded) TS_RETURN_IF_ERROR(translate(ctx));
  if (batch_rewriter_ != nullptr) batch_rewriter_->RecordOutputs(*this, node);
  return absl::OkStatus();
}

ImportRecord Importer::Record() const {
  ImportRecord record;
  for (const auto& [name, index] : value_index_) {
    const Value& v = values_[index];
    record[name] = ValueRecord{.shape = v.shape, .constant = v.constant};
  }
  return record;
}

absl::StatusOr<Graph> Importer::Run(const std::vector<InputDecl>& inputs,
                                    const std::vector<int>& order) {
  graph_ = Graph(proto_.name().empty() ? "onnx" : proto_.name());
  TS_RETURN_IF_ERROR(AddInputs(inputs));
  for (int index : order) {
    const onnx::NodeProto& node = proto_.node(index);
    TS_RETURN_IF_ERROR(ConvertNode(node, NodeName(node, index)));
  }
  if (!unsupported_.empty()) return absl::InvalidArgumentError("unsupported ops");
  std::vector<TensorId> losses, others;
  for (const onnx::ValueInfoProto& out : proto_.output()) {
    if (Find(out.name()) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(), "' is not produced by any node or input"));
    }
    TS_ASSIGN_OR_RETURN(TensorId t, Materialize(out.name()));
    (losses_.contains(out.name()) ? losses : others).push_back(t);
  }
  for (const std::vector<TensorId>* list : {&losses, &others}) {
    for (TensorId t : *list) graph_.AddOutput(t);
  }
  return std::move(graph_);
}

}  // namespace tessera::graph::onnx_import
