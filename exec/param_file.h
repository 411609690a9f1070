// Parameter files: a model's parameters, whole, as `tessera train --save-params` writes them, so
// that runs (hybrid or single-worker, Tessera or another framework) can be compared by anyone.
//
//   TS_RETURN_IF_ERROR(WriteParamFile("final.tsp", params));   // atomic: temporary + rename
//   TS_ASSIGN_OR_RETURN(std::vector<NamedParameter> back, ReadParamFile("final.tsp"));
//
// Layout (docs/params-format.md), little-endian:
//   magic "TSRPARAM" (8 bytes), version u32 (1), count u32, then per parameter in name order:
//   name (u32 length + UTF-8 bytes), rank u32, dims i64[rank], value count u64, f32[count];
//   last, the FNV-1a 64 of every byte before it (u64).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/graph/tensor.h"

namespace tessera::exec {

struct NamedParameter {
  std::string name;
  graph::Shape shape;
  std::vector<float> values;
};

// InvalidArgument when a parameter's value count differs from its shape's; the file error
// (naming the path) when it cannot be written.
absl::Status WriteParamFile(const std::string& path, const std::vector<NamedParameter>& params);
// InvalidArgument naming the path for a file that is not a parameter file, is truncated or
// fails its checksum.
absl::StatusOr<std::vector<NamedParameter>> ReadParamFile(const std::string& path);

}  // namespace tessera::exec
