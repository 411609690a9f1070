// Internal to ONNX import: tensors whose values are known at import time (the
// folding value table's entries) and decoding of ONNX TensorProto.
//
//   TS_ASSIGN_OR_RETURN(TensorDecl decl, DecodeTensorDecl(proto));
//   TS_ASSIGN_OR_RETURN(std::optional<ConstTensor> value, DecodeTensorValues(proto, decl));
//   if (value) int64_t first = value->GetInt(0);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "tessera/graph/dtype.h"
#include "tessera/graph/shape.h"

namespace tessera::graph::onnx_import {

// Largest constant (in elements) the importer evaluates or keeps values of.
// Bigger constants keep their shape only; folding a node whose result would be
// bigger leaves the node in the graph (or fails, for shape-only ops).
inline constexpr int64_t kMaxFoldElements = int64_t{1} << 20;
// Largest number of elements all folded values of one import may hold together,
// so that a hostile file cannot make the importer compute for long.
inline constexpr int64_t kMaxFoldedTotal = int64_t{1} << 26;
// Largest constant whose values are copied into Tensor::data.
inline constexpr int64_t kMaxDataElements = int64_t{1} << 16;
// Largest rank the importer accepts anywhere.
inline constexpr int64_t kMaxRank = 32;

struct TensorDecl {
  DType dtype = DType::kF32;
  Shape shape;
};

// A constant with known values: integers (i32, i64, bool) in `ints`, floating
// point values (f32, f16, bf16) in `floats`, row-major.
struct ConstTensor {
  DType dtype = DType::kI64;
  Shape shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool is_float() const { return IsFloating(dtype); }
  int64_t size() const { return is_float() ? static_cast<int64_t>(floats.size())
                                           : static_cast<int64_t>(ints.size()); }
  double Get(int64_t i) const { return is_float() ? floats[i] : static_cast<double>(ints[i]); }
  int64_t GetInt(int64_t i) const;
  // All values as doubles (for Tensor::data).
  std::vector<double> AsDoubles() const;
  // Values as int64 (floats truncated toward zero, saturating).
  std::vector<int64_t> AsInts() const;

  static ConstTensor Ints(DType dtype, Shape shape, std::vector<int64_t> values);
  static ConstTensor Floats(DType dtype, Shape shape, std::vector<double> values);
  // 1-D i64 tensor.
  static ConstTensor Vector(std::vector<int64_t> values);
};

// Converts a value to `dtype` (bool: != 0; integers: truncation, saturating).
ConstTensor CastConst(const ConstTensor& in, DType dtype);

// Maps an ONNX TensorProto.DataType to Tessera's dtype (double -> f32; 8/16-bit
// and unsigned integers -> i32 or i64); an error for strings and complex types.
absl::StatusOr<DType> DTypeFromOnnx(int onnx_type);

// Checked dims: each >= 0, rank <= kMaxRank, element count without overflow.
absl::StatusOr<Shape> CheckedDims(const int64_t* dims, int n);

// Dtype and shape of a TensorProto (no values read).
absl::StatusOr<TensorDecl> DecodeTensorDecl(const onnx::TensorProto& proto);

// Values of a TensorProto. Checks that the stored data matches the dims (raw_data
// byte count or typed field length); returns nullopt when the tensor holds no
// data (structure-only export, external data) or has more than kMaxFoldElements.
absl::StatusOr<std::optional<ConstTensor>> DecodeTensorValues(const onnx::TensorProto& proto,
                                                              const TensorDecl& decl);

}  // namespace tessera::graph::onnx_import
