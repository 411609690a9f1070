// Element types of tensors.
//
//   DType t = DType::kF16;
//   int64_t bytes = DTypeSize(t) * n;               // 2 * n
//   absl::StatusOr<DType> u = ParseDType("bf16");   // DType::kBF16
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace tessera::graph {

enum class DType : uint8_t { kF32, kF16, kBF16, kI32, kI64, kBool };

// Bytes per element.
int64_t DTypeSize(DType dtype);
// Short lower-case name: "f32", "f16", "bf16", "i32", "i64", "bool".
absl::string_view DTypeName(DType dtype);
// Inverse of DTypeName.
absl::StatusOr<DType> ParseDType(absl::string_view name);
bool IsFloating(DType dtype);

}  // namespace tessera::graph
