#include "tessera/graph/onnx/const_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/base/text_format.h"

namespace tessera::graph::onnx_import {
namespace {

using onnx::TensorProto;

int64_t SaturatingInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

double HalfToDouble(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(mant + 1024, exp - 25);
  }
  return sign ? -v : v;
}

double BFloatToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Bytes per element of an ONNX type in raw_data; 0 when not decodable.
int RawElementSize(int t) {
  switch (t) {
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::BOOL: return 1;
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32: return 4;
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::DOUBLE: return 8;
    default: return 0;
  }
}

// Element i of little-endian raw data as a double (floating types) or int.
template <typename T>
T LoadRaw(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double RawAsDouble(int t, const char* p) {
  switch (t) {
    case TensorProto::FLOAT: return LoadRaw<float>(p);
    case TensorProto::DOUBLE: return LoadRaw<double>(p);
    case TensorProto::FLOAT16: return HalfToDouble(LoadRaw<uint16_t>(p));
    case TensorProto::BFLOAT16: return BFloatToDouble(LoadRaw<uint16_t>(p));
    default: return 0;
  }
}

int64_t RawAsInt(int t, const char* p) {
  switch (t) {
    case TensorProto::UINT8: return LoadRaw<uint8_t>(p);
    case TensorProto::INT8: return LoadRaw<int8_t>(p);
    case TensorProto::BOOL: return LoadRaw<uint8_t>(p) != 0;
    case TensorProto::UINT16: return LoadRaw<uint16_t>(p);
    case TensorProto::INT16: return LoadRaw<int16_t>(p);
    case TensorProto::INT32: return LoadRaw<int32_t>(p);
    case TensorProto::UINT32: return LoadRaw<uint32_t>(p);
    case TensorProto::INT64: return LoadRaw<int64_t>(p);
    case TensorProto::UINT64: {
      const uint64_t u = LoadRaw<uint64_t>(p);
      return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(u);
    }
    default: return 0;
  }
}

// Number of values stored in the typed field that holds `t`, or -1 if none applies.
int64_t TypedFieldSize(const TensorProto& p, int t) {
  switch (t) {
    case TensorProto::FLOAT: return p.float_data_size();
    case TensorProto::DOUBLE: return p.double_data_size();
    case TensorProto::INT64: return p.int64_data_size();
    case TensorProto::UINT32:
    case TensorProto::UINT64: return p.uint64_data_size();
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: return p.int32_data_size();
    default: return -1;
  }
}

double TypedAsDouble(const TensorProto& p, int t, int64_t i) {
  switch (t) {
    case TensorProto::FLOAT: return p.float_data(i);
    case TensorProto::DOUBLE: return p.double_data(i);
    case TensorProto::FLOAT16: return HalfToDouble(static_cast<uint16_t>(p.int32_data(i)));
    case TensorProto::BFLOAT16: return BFloatToDouble(static_cast<uint16_t>(p.int32_data(i)));
    default: return 0;
  }
}

int64_t TypedAsInt(const TensorProto& p, int t, int64_t i) {
  switch (t) {
    case TensorProto::INT64: return p.int64_data(i);
    case TensorProto::UINT32:
    case TensorProto::UINT64: {
      const uint64_t u = p.uint64_data(i);
      return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(u);
    }
    case TensorProto::BOOL: return p.int32_data(i) != 0;
    default: return p.int32_data(i);
  }
}

}  // namespace

int64_t ConstTensor::GetInt(int64_t i) const {
  return is_float() ? SaturatingInt(floats[i]) : ints[i];
}

std::vector<double> ConstTensor::AsDoubles() const {
  if (is_float()) return floats;
  return std::vector<double>(ints.begin(), ints.end());
}

std::vector<int64_t> ConstTensor::AsInts() const {
  if (!is_float()) return ints;
  std::vector<int64_t> out;
  out.reserve(floats.size());
  for (double v : floats) out.push_back(SaturatingInt(v));
  return out;
}

ConstTensor ConstTensor::Ints(DType dtype, Shape shape, std::vector<int64_t> values) {
  ConstTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.ints = std::move(values);
  return t;
}

ConstTensor ConstTensor::Floats(DType dtype, Shape shape, std::vector<double> values) {
  ConstTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.floats = std::move(values);
  return t;
}

ConstTensor ConstTensor::Vector(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Ints(DType::kI64, {n}, std::move(values));
}

ConstTensor CastConst(const ConstTensor& in, DType dtype) {
  ConstTensor out;
  out.dtype = dtype;
  out.shape = in.shape;
  if (IsFloating(dtype)) {
    out.floats = in.AsDoubles();
    if (dtype != DType::kF32 || !in.is_float()) return out;
    for (double& v : out.floats) v = static_cast<float>(v);
    return out;
  }
  out.ints = in.AsInts();
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < out.ints.size(); ++i) {
      out.ints[i] = in.is_float() ? (in.floats[i] != 0.0) : (out.ints[i] != 0);
    }
  } else if (dtype == DType::kI32) {
    for (int64_t& v : out.ints) v = static_cast<int32_t>(v);
  }
  return out;
}

absl::StatusOr<DType> DTypeFromOnnx(int t) {
  switch (t) {
    case TensorProto::FLOAT:
    case TensorProto::DOUBLE: return DType::kF32;
    case TensorProto::FLOAT16: return DType::kF16;
    case TensorProto::BFLOAT16: return DType::kBF16;
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::UINT8: return DType::kI32;
    case TensorProto::INT64:
    case TensorProto::UINT32:
    case TensorProto::UINT64: return DType::kI64;
    case TensorProto::BOOL: return DType::kBool;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "element type ", t, " (", TensorProto::DataType_IsValid(t)
                                        ? TensorProto::DataType_Name(
                                              static_cast<TensorProto::DataType>(t))
                                        : std::string("unknown"),
          ") is not supported; Tessera handles float, float16, bfloat16, double and integer "
          "and bool tensors"));
  }
}

absl::StatusOr<Shape> CheckedDims(const int64_t* dims, int n) {
  if (n > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", n, " exceeds the limit of ", kMaxRank));
  }
  Shape shape(dims, dims + n);
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", d, " in ", ShapeString(shape), " is negative"));
    }
  }
  if (NumElements(shape) == std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", ShapeString(shape), " has too many elements"));
  }
  return shape;
}

absl::StatusOr<TensorDecl> DecodeTensorDecl(const TensorProto& proto) {
  TensorDecl decl;
  auto dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) return dtype.status();
  decl.dtype = *dtype;
  auto shape = CheckedDims(proto.dims().data(), proto.dims_size());
  if (!shape.ok()) return shape.status();
  decl.shape = std::move(*shape);
  return decl;
}

absl::StatusOr<std::optional<ConstTensor>> DecodeTensorValues(const TensorProto& proto,
                                                              const TensorDecl& decl) {
  const int t = proto.data_type();
  const int64_t n = NumElements(decl.shape);
  if (proto.data_location() == TensorProto::EXTERNAL) return std::optional<ConstTensor>();
  const bool floating = IsFloating(decl.dtype);
  ConstTensor value;
  value.dtype = decl.dtype;
  value.shape = decl.shape;
  if (proto.has_raw_data()) {
    const int64_t size = RawElementSize(t);
    const int64_t bytes = static_cast<int64_t>(proto.raw_data().size());
    if (size == 0 || n > bytes / size || bytes != n * size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "raw_data holds ", base::HumanBytesExact(bytes), " but shape ", ShapeString(decl.shape),
          " of ", TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t)), " needs ",
          n > bytes ? std::string("more") : base::HumanBytesExact(n * size)));
    }
    if (n > kMaxFoldElements) return std::optional<ConstTensor>();
    const char* data = proto.raw_data().data();
    for (int64_t i = 0; i < n; ++i) {
      if (floating) {
        value.floats.push_back(RawAsDouble(t, data + i * size));
      } else {
        value.ints.push_back(RawAsInt(t, data + i * size));
      }
    }
    return std::optional<ConstTensor>(std::move(value));
  }
  const int64_t stored = TypedFieldSize(proto, t);
  if (stored <= 0) {
    if (n == 0) return std::optional<ConstTensor>(std::move(value));
    return std::optional<ConstTensor>();  // no data: a structure-only tensor
  }
  if (stored != n) {
    return absl::InvalidArgumentError(absl::StrCat("holds ", stored, " values but shape ",
                                                   ShapeString(decl.shape), " has ", n));
  }
  if (n > kMaxFoldElements) return std::optional<ConstTensor>();
  for (int64_t i = 0; i < n; ++i) {
    if (floating) {
      value.floats.push_back(TypedAsDouble(proto, t, i));
    } else {
      value.ints.push_back(TypedAsInt(proto, t, i));
    }
  }
  return std::optional<ConstTensor>(std::move(value));
}

}  // namespace tessera::graph::onnx_import
