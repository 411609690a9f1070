// ONNX import driver: parse, check, order, import (twice when a static batch
// changes), classify inputs, finish the graph.
#include "tessera/graph/onnx/onnx_import.h"

#include <filesystem>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/file_io.h"
#include "tessera/base/setting_error.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/batch_rewrite.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/importer.h"
#include "tessera/graph/onnx/model_inputs.h"
#include "tessera/graph/onnx/roles.h"
#include "tessera/graph/onnx/topo_order.h"
#include "tessera/graph/onnx/translate.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph {
namespace {

using onnx_import::Importer;
using onnx_import::UnsupportedUse;

constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 17;
// Structure-only models are small; a full-weight model is read up to protobuf's own 2 GB limit.
constexpr int64_t kMaxModelBytes = std::numeric_limits<int>::max();

absl::Status Prefixed(absl::string_view source, const absl::Status& s) {
  return base::WithPrefix(s, absl::StrCat(source, ": "));
}

absl::StatusOr<onnx::ModelProto> Parse(absl::string_view bytes) {
  if (static_cast<int64_t>(bytes.size()) >= kMaxModelBytes) {
    return absl::InvalidArgumentError("the file is larger than 2 GB, protobuf's limit");
  }
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(static_cast<int>(bytes.size()) + 1);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError(
        "is not a valid ONNX model (protobuf parsing failed: the file is truncated, corrupt, "
        "or not an ONNX file)");
  }
  return model;
}

absl::StatusOr<int64_t> DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      if (op.version() < kMinOpset || op.version() > kMaxOpset) {
        return absl::InvalidArgumentError(absl::StrCat(
            "uses opset ", op.version(), " of the default ONNX domain; Tessera imports opsets ",
            kMinOpset, " to ", kMaxOpset, " (re-export, e.g. torch.onnx.export(..., "
            "opset_version=13), or convert with onnx.version_converter)"));
      }
      return op.version();
    }
  }
  return absl::InvalidArgumentError("has no opset_import for the default ONNX domain");
}

// Op types no translation or folding rule knows, first node of each, in `order`.
std::vector<UnsupportedUse> UnknownOps(const onnx::GraphProto& g, const std::vector<int>& order) {
  std::vector<UnsupportedUse> found;
  absl::flat_hash_set<std::string> seen;
  for (int i : order) {
    const onnx::NodeProto& n = g.node(i);
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (default_domain && (onnx_import::FindTranslation(n.op_type()) != nullptr ||
                           onnx_import::IsFoldable(n.op_type()))) {
      continue;
    }
    const std::string type = default_domain ? n.op_type() : absl::StrCat(n.domain(), ".", n.op_type());
    if (seen.insert(type).second) {
      found.push_back({.op_type = type, .node = onnx_import::DescribeNode(n, i)});
    }
  }
  return found;
}

absl::Status UnsupportedError(std::vector<UnsupportedUse> uses,
                              const std::vector<UnsupportedUse>& unknown) {
  absl::flat_hash_set<std::string> types;
  for (const auto& u : uses) types.insert(u.op_type);
  for (const auto& u : unknown) {
    if (types.insert(u.op_type).second) uses.push_back(u);
  }
  std::vector<std::string> parts;
  for (const auto& u : uses) {
    parts.push_back(absl::StrCat(u.op_type, " (node \"", u.node, "\"",
                                 u.note.empty() ? "" : absl::StrCat(", ", u.note), ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      uses.size(), uses.size() == 1 ? " unsupported op type: " : " unsupported op types: ",
      absl::StrJoin(parts, ", "), "; supported ops are listed in docs/onnx-import.md"));
}

struct Imported {
  Graph graph;
  std::vector<onnx_import::Candidate> candidates;
  onnx_import::ImportRecord record;  // every value's shape and folded values
};

// Every tensor's byte size fits in int64, as in a graph file (graph_json.h): shape inference
// checks the outputs of nodes, this the inputs, initializers and constants the file declares.
absl::Status CheckByteSizes(const Graph& graph) {
  for (const Tensor& t : graph.tensors()) {
    int64_t bytes = 0;
    if (NumElements(t.shape) == std::numeric_limits<int64_t>::max() ||
        __builtin_mul_overflow(NumElements(t.shape), DTypeSize(t.dtype), &bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", t.name, "' has shape ", ShapeString(t.shape), " ", DTypeName(t.dtype),
          ", too large: its byte size overflows 64 bits; check the model's dimensions"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Imported> RunOnce(const onnx::GraphProto& g,
                                 int64_t opset, const std::vector<onnx_import::InputDecl>& decls,
                                 const std::vector<int>& order,
                                 onnx_import::BatchRewriter* rewriter = nullptr,
                                 bool keep_record = false) {
  Importer importer(g, opset);
  importer.set_batch_rewriter(rewriter);
  auto graph = importer.Run(decls, order);
  if (!importer.unsupported().empty() || (!graph.ok() && !UnknownOps(g, order).empty())) {
    return UnsupportedError(importer.unsupported(), UnknownOps(g, order));
  }
  if (!graph.ok()) return graph.status();
  TS_RETURN_IF_ERROR(CheckByteSizes(*graph));
  return Imported{std::move(*graph), importer.candidates(),
                  keep_record ? importer.Record() : onnx_import::ImportRecord{}};
}

absl::StatusOr<Graph> Import(const onnx::ModelProto& model,
                             const OnnxImportOptions& options) {
  if (!model.has_graph()) return absl::InvalidArgumentError("has no graph");
  TS_ASSIGN_OR_RETURN(const int64_t opset, DefaultOpset(model));
  const onnx::GraphProto& g = model.graph();
  if (options.batch < 0) return absl::InvalidArgumentError("batch must be >= 0");
  TS_ASSIGN_OR_RETURN(onnx_import::InputPlan plan, onnx_import::ReadInputs(g, options));
  absl::flat_hash_set<std::string> external;
  for (const auto& d : plan.decls) external.insert(d.name);
  for (const std::string& name : options.data_inputs) {
    if (!external.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data input '", name, "' (from the options) is not a graph input of the model"));
    }
  }
  TS_ASSIGN_OR_RETURN(std::vector<int> order, onnx_import::TopologicalNodeOrder(g, external));

  // Pass 1 at the file's static shapes; then decide the roles of the inputs.
  TS_ASSIGN_OR_RETURN(Imported result, RunOnce(g, opset, plan.decls, order, nullptr,
                                                /*keep_record=*/options.batch > 0));
  onnx_import::RoleRules rules;
  rules.data_inputs.insert(options.data_inputs.begin(), options.data_inputs.end());
  rules.forced_data = plan.symbolic;
  const auto roles = onnx_import::ClassifyCandidates(result.graph, result.candidates, rules);
  // Pass 2 when the batch of static data inputs changes: every shape is re-derived.
  absl::flat_hash_set<std::string> data;
  for (const auto& [name, role] : roles) {
    if (role == TensorRole::kInput) data.insert(name);
  }
  onnx_import::LocateStaticBatch(plan.decls, data, plan.symbolic);
  const int64_t old_batch = onnx_import::StaticBatch(plan.decls, plan.symbolic);
  if (onnx_import::ApplyStaticBatch(plan.decls, plan.symbolic, options.batch)) {
    // Constants the exporter baked from the old batch are rewritten where they can be
    // attributed to the batch (batch_rewrite.h); elsewhere the error says what to do.
    onnx_import::BatchRewriter rewriter(std::move(result.record), old_batch, options.batch);
    auto second = RunOnce(g, opset, plan.decls, order, &rewriter);
    if (!second.ok()) {
      if (absl::StrContains(second.status().message(), "re-export with a dynamic batch axis")) {
        return second.status();
      }
      return absl::Status(second.status().code(), absl::StrCat(
          second.status().message(), " (with batch ", options.batch,
          "; the exporter may have baked the export batch into a constant that Tessera could "
          "not attribute to the batch: ", onnx_import::BakedBatchAdvice(old_batch), ")"));
    }
    result = std::move(*second);
  }
  onnx_import::ApplyRoles(result.graph, roles);
  for (const onnx_import::InputDecl& d : plan.decls) {
    const std::optional<TensorId> t = result.graph.FindTensor(d.name);
    if (t && d.batch_axis >= 0) result.graph.mutable_tensor(*t).batch_axis = d.batch_axis;
  }
  onnx_import::GatherToEmbedding(result.graph);
  TS_RETURN_IF_ERROR(InferShapes(result.graph));
  TS_RETURN_IF_ERROR(result.graph.Validate());
  return std::move(result.graph);
}

}  // namespace

absl::StatusOr<Graph> ImportOnnxBytes(absl::string_view bytes, absl::string_view source_name,
                                      const OnnxImportOptions& options) {
  auto model = Parse(bytes);
  if (!model.ok()) return Prefixed(source_name, model.status());
  auto graph = Import(*model, options);
  if (!graph.ok()) return Prefixed(source_name, graph.status());
  return graph;
}

absl::StatusOr<Graph> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  // Reading names the path and the OS reason, and refuses directories and files
  // past protobuf's limit before they are read whole.
  TS_ASSIGN_OR_RETURN(const std::string bytes,
                      base::ReadFileText(path, "ONNX file", kMaxModelBytes - 1));
  TS_ASSIGN_OR_RETURN(Graph graph, ImportOnnxBytes(bytes, path, options));
  // Exporters name graphs generically ("torch_jit", "main_graph"); the file's
  // name is what the user knows the model by.
  graph.set_name(std::filesystem::path(path).stem().string());
  return graph;
}

}  // namespace tessera::graph
