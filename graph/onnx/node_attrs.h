// Internal to ONNX import: typed access to a NodeProto's attributes. A present
// attribute of the wrong type is an error naming the node and the attribute.
//
//   NodeAttrs a(node, "/conv1/Conv");
//   TS_ASSIGN_OR_RETURN(int64_t group, a.Int("group", 1));
//   TS_ASSIGN_OR_RETURN(std::vector<int64_t> pads, a.Ints("pads", {}));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace tessera::graph::onnx_import {

class NodeAttrs {
 public:
  NodeAttrs(const onnx::NodeProto& node, absl::string_view node_name)
      : node_(node), node_name_(node_name) {}

  bool Has(absl::string_view name) const { return Find(name) != nullptr; }
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback) const;
  absl::StatusOr<double> Float(absl::string_view name, double fallback) const;
  absl::StatusOr<std::string> String(absl::string_view name, absl::string_view fallback) const;
  absl::StatusOr<std::vector<int64_t>> Ints(absl::string_view name,
                                            std::vector<int64_t> fallback) const;
  // The attribute's tensor, or nullptr when absent.
  absl::StatusOr<const onnx::TensorProto*> Tensor(absl::string_view name) const;
  const onnx::AttributeProto* Find(absl::string_view name) const;

  // InvalidArgument "node 'n' (Op): attribute 'a' <problem>".
  absl::Status Error(absl::string_view attr, absl::string_view problem) const;

 private:
  absl::Status WrongType(const onnx::AttributeProto& attr, absl::string_view expected) const;

  const onnx::NodeProto& node_;
  std::string node_name_;
};

}  // namespace tessera::graph::onnx_import
