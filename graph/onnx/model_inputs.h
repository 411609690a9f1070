// Internal to ONNX import: graph inputs and initializers as InputDecls, with
// symbolic dimensions resolved and the batch dimension located.
//
//   TS_ASSIGN_OR_RETURN(InputPlan plan, ReadInputs(model.graph(), options));
//   ... import, classify ...
//   LocateStaticBatch(plan.decls, data_inputs, plan.symbolic);
//   if (ApplyStaticBatch(plan.decls, plan.symbolic, options.batch)) { re-import }
//
// Batch dimension of a data input: with symbolic dimensions, the first one whose
// name contains "batch" (any case), else the first symbolic one; without, the
// first dimension equal to the value that most static data inputs share (ties:
// the leading dimension of the first data input).
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "tessera/graph/onnx/importer.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace tessera::graph::onnx_import {

struct InputPlan {
  std::vector<InputDecl> decls;
  // Graph inputs that have a symbolic dimension (always data inputs).
  absl::flat_hash_set<std::string> symbolic;
};

absl::StatusOr<InputPlan> ReadInputs(const onnx::GraphProto& graph,
                                     const OnnxImportOptions& options);

// Sets InputDecl::batch_axis of every static data input (named in `data`,
// without symbolic dimensions); symbolic ones got theirs in ReadInputs.
void LocateStaticBatch(std::vector<InputDecl>& decls, const absl::flat_hash_set<std::string>& data,
                       const absl::flat_hash_set<std::string>& symbolic);
// The batch the static data inputs were exported at (their located batch dimension), 0
// when none is located.
int64_t StaticBatch(const std::vector<InputDecl>& decls,
                    const absl::flat_hash_set<std::string>& symbolic);
// Sets the located batch dimension of every static data input to `batch`;
// true when some shape changed.
bool ApplyStaticBatch(std::vector<InputDecl>& decls, const absl::flat_hash_set<std::string>& symbolic,
                      int64_t batch);

}  // namespace tessera::graph::onnx_import
