#include "tessera/graph/onnx/node_attrs.h"

#include "absl/strings/str_cat.h"

namespace tessera::graph::onnx_import {

using onnx::AttributeProto;

const AttributeProto* NodeAttrs::Find(absl::string_view name) const {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::Status NodeAttrs::Error(absl::string_view attr, absl::string_view problem) const {
  return absl::InvalidArgumentError(absl::StrCat("node '", node_name_, "' (", node_.op_type(),
                                                 "): attribute '", attr, "' ", problem));
}

absl::Status NodeAttrs::WrongType(const AttributeProto& attr, absl::string_view expected) const {
  const std::string got = AttributeProto::AttributeType_IsValid(attr.type())
                              ? AttributeProto::AttributeType_Name(attr.type())
                              : absl::StrCat("type ", attr.type());
  return Error(attr.name(), absl::StrCat("is ", got, "; expected ", expected));
}

absl::StatusOr<int64_t> NodeAttrs::Int(absl::string_view name, int64_t fallback) const {
  const AttributeProto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != AttributeProto::INT) return WrongType(*a, "INT");
  return a->i();
}

absl::StatusOr<double> NodeAttrs::Float(absl::string_view name, double fallback) const {
  const AttributeProto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != AttributeProto::FLOAT) return WrongType(*a, "FLOAT");
  return a->f();
}

absl::StatusOr<std::string> NodeAttrs::String(absl::string_view name,
                                              absl::string_view fallback) const {
  const AttributeProto* a = Find(name);
  if (a == nullptr) return std::string(fallback);
  if (a->type() != AttributeProto::STRING) return WrongType(*a, "STRING");
  return a->s();
}

absl::StatusOr<std::vector<int64_t>> NodeAttrs::Ints(absl::string_view name,
                                                     std::vector<int64_t> fallback) const {
  const AttributeProto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != AttributeProto::INTS) return WrongType(*a, "INTS");
  if (a->ints_size() > 4096) return Error(name, "has more than 4096 values");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<const onnx::TensorProto*> NodeAttrs::Tensor(absl::string_view name) const {
  const AttributeProto* a = Find(name);
  if (a == nullptr) return nullptr;
  if (a->type() != AttributeProto::TENSOR) return WrongType(*a, "TENSOR");
  return &a->t();
}

}  // namespace tessera::graph::onnx_import
