#include "tessera/comm/dtype.h"

namespace tessera::comm {

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kBFloat16: return 2;
    case DType::kInt64: return 8;
  }
  return 0;
}

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt64: return "int64";
  }
  return "dtype(invalid)";
}

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAverage: return "average";
    case ReduceOp::kMax: return "max";
  }
  return "op(invalid)";
}

bool IsValidDType(DType dtype) { return DTypeSize(dtype) != 0; }

bool IsValidReduceOp(ReduceOp op) {
  return op == ReduceOp::kSum || op == ReduceOp::kAverage || op == ReduceOp::kMax;
}

}  // namespace tessera::comm
