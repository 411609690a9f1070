#include "tessera/graph/onnx/model_inputs.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/setting_error.h"
#include "tessera/base/status_macros.h"

namespace tessera::graph::onnx_import {
namespace {

absl::StatusOr<InputDecl> ReadInitializer(const onnx::TensorProto& t) {
  const auto where = [&](absl::string_view m) {
    return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "': ", m));
  };
  auto decl = DecodeTensorDecl(t);
  if (!decl.ok()) return where(decl.status().message());
  auto values = DecodeTensorValues(t, *decl);
  if (!values.ok()) return where(values.status().message());
  InputDecl in{.name = t.name(), .dtype = decl->dtype, .shape = decl->shape,
               .is_initializer = true};
  if (values->has_value()) {
    // Integer initializers and float scalars fold; larger float ones are weights.
    if (!IsFloating(in.dtype) || (*values)->size() <= 1) {
      in.values = std::move(**values);
    } else if ((*values)->size() <= kMaxDataElements) {
      in.data = (*values)->AsDoubles();
    }
  }
  return in;
}

struct Dim {
  int64_t value = -1;     // >= 0 when static
  std::string symbol;     // dim_param ("" when unnamed)
};

absl::StatusOr<std::vector<Dim>> ReadDims(const onnx::ValueInfoProto& v) {
  const auto where = [&](absl::string_view m) {
    return absl::InvalidArgumentError(absl::StrCat("graph input '", v.name(), "' ", m));
  };
  if (!v.has_type() || !v.type().has_tensor_type()) return where("is not a tensor");
  const auto& tt = v.type().tensor_type();
  if (!tt.has_shape()) return where("has no shape; Tessera needs at least its rank");
  if (tt.shape().dim_size() > kMaxRank) return where("has too many dimensions");
  std::vector<Dim> dims;
  for (const auto& d : tt.shape().dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) return where(absl::StrCat("has a negative dimension ", d.dim_value()));
      dim.value = d.dim_value();
    } else {
      dim.symbol = d.dim_param();
    }
    dims.push_back(std::move(dim));
  }
  return dims;
}

// Resolves symbolic dims; the batch one takes options.batch (or 1).
absl::StatusOr<Shape> ResolveDims(const std::string& input, const std::vector<Dim>& dims,
                                  const OnnxImportOptions& options, int& batch_axis) {
  batch_axis = -1;
  for (size_t i = 0; i < dims.size() && batch_axis < 0; ++i) {
    if (dims[i].value < 0 && absl::StrContains(absl::AsciiStrToLower(dims[i].symbol), "batch")) {
      batch_axis = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < dims.size() && batch_axis < 0; ++i) {
    if (dims[i].value < 0) batch_axis = static_cast<int>(i);
  }
  Shape shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    if (d.value >= 0) {
      shape.push_back(d.value);
      continue;
    }
    auto given = options.symbolic_dims.find(d.symbol);
    if (static_cast<int>(i) == batch_axis) {
      shape.push_back(options.batch > 0 ? options.batch
                      : given != options.symbolic_dims.end() ? given->second : 1);
    } else if (given != options.symbolic_dims.end()) {
      shape.push_back(given->second);
    } else {
      return base::SettingError(
          absl::InvalidArgumentError(absl::StrCat(
              "graph input '", input, "' dimension ", i, " is symbolic ('", d.symbol,
              "'); give its value in OnnxImportOptions::symbolic_dims")),
          absl::StrCat("symbolic_dims/", d.symbol));
    }
    if (shape.back() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", input, "' dimension ", i,
                                                     " would be negative"));
    }
  }
  auto checked = CheckedDims(shape.data(), static_cast<int>(shape.size()));
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input '", input, "': ", checked.status().message()));
  }
  return shape;
}

}  // namespace

absl::StatusOr<InputPlan> ReadInputs(const onnx::GraphProto& graph,
                                     const OnnxImportOptions& options) {
  InputPlan plan;
  absl::flat_hash_set<std::string> names;
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (t.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (!names.insert(t.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' is defined twice"));
    }
    TS_ASSIGN_OR_RETURN(InputDecl in, ReadInitializer(t));
    plan.decls.push_back(std::move(in));
  }
  absl::flat_hash_set<std::string> initializers = names;
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (v.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    if (initializers.contains(v.name())) continue;  // the initializer gives its value
    if (!names.insert(v.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", v.name(), "' is listed twice"));
    }
    TS_ASSIGN_OR_RETURN(std::vector<Dim> dims, ReadDims(v));
    auto dtype = DTypeFromOnnx(v.type().tensor_type().elem_type());
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", v.name(), "': ", dtype.status().message()));
    }
    int batch_axis = -1;
    TS_ASSIGN_OR_RETURN(Shape shape, ResolveDims(v.name(), dims, options, batch_axis));
    if (std::any_of(dims.begin(), dims.end(), [](const Dim& d) { return d.value < 0; })) {
      plan.symbolic.insert(v.name());
    }
    plan.decls.push_back({.name = v.name(), .dtype = *dtype, .shape = std::move(shape),
                          .batch_axis = batch_axis});
  }
  return plan;
}

void LocateStaticBatch(std::vector<InputDecl>& decls,
                       const absl::flat_hash_set<std::string>& data,
                       const absl::flat_hash_set<std::string>& symbolic) {
  std::vector<InputDecl*> inputs;
  for (InputDecl& d : decls) {
    if (!d.is_initializer && data.contains(d.name) && !symbolic.contains(d.name) &&
        !d.shape.empty()) {
      inputs.push_back(&d);
    }
  }
  if (inputs.empty()) return;
  // The export batch: the dimension value most data inputs share.
  absl::flat_hash_map<int64_t, int> count;
  for (InputDecl* d : inputs) {
    absl::flat_hash_set<int64_t> seen(d->shape.begin(), d->shape.end());
    for (int64_t v : seen) ++count[v];
  }
  int best = 0;
  for (const auto& [v, n] : count) best = std::max(best, n);
  int64_t old_batch = inputs[0]->shape[0];
  if (count[old_batch] != best) {
    for (int64_t v : inputs[0]->shape) {
      if (count[v] == best) {
        old_batch = v;
        break;
      }
    }
  }
  for (InputDecl* d : inputs) {
    auto it = std::find(d->shape.begin(), d->shape.end(), old_batch);
    d->batch_axis = it == d->shape.end() ? -1 : static_cast<int>(it - d->shape.begin());
  }
}

int64_t StaticBatch(const std::vector<InputDecl>& decls,
                    const absl::flat_hash_set<std::string>& symbolic) {
  for (const InputDecl& d : decls) {
    if (d.batch_axis >= 0 && !symbolic.contains(d.name)) return d.shape[d.batch_axis];
  }
  return 0;
}

bool ApplyStaticBatch(std::vector<InputDecl>& decls, const absl::flat_hash_set<std::string>& symbolic,
                      int64_t batch) {
  if (batch <= 0) return false;
  bool changed = false;
  for (InputDecl& d : decls) {
    if (d.batch_axis < 0 || symbolic.contains(d.name) || d.shape[d.batch_axis] == batch) continue;
    d.shape[d.batch_axis] = batch;
    changed = true;
  }
  return changed;
}

}  // namespace tessera::graph::onnx_import
