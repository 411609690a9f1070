// Constant folding: element-wise arithmetic, comparisons, Where, Range.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/fold_index.h"

namespace tessera::graph::onnx_import {
namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

bool IsComparison(BinaryFn fn) {
  return fn == BinaryFn::kEqual || fn == BinaryFn::kLess || fn == BinaryFn::kGreater ||
         fn == BinaryFn::kLessOrEqual || fn == BinaryFn::kGreaterOrEqual;
}

bool IsLogical(BinaryFn fn) {
  return fn == BinaryFn::kAnd || fn == BinaryFn::kOr || fn == BinaryFn::kXor;
}

// Min, Max, comparisons and logic: the same for integers and floats.
template <typename T>
T OrderOrLogic(T a, T b, BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kMin: return std::min(a, b);
    case BinaryFn::kMax: return std::max(a, b);
    case BinaryFn::kEqual: return a == b;
    case BinaryFn::kLess: return a < b;
    case BinaryFn::kGreater: return a > b;
    case BinaryFn::kLessOrEqual: return a <= b;
    case BinaryFn::kGreaterOrEqual: return a >= b;
    case BinaryFn::kAnd: return (a != 0) && (b != 0);
    case BinaryFn::kOr: return (a != 0) || (b != 0);
    case BinaryFn::kXor: return (a != 0) != (b != 0);
    default: return 0;
  }
}

int64_t Saturate(__int128 v) {
  if (v > kI64Max) return kI64Max;
  if (v < kI64Min) return kI64Min;
  return static_cast<int64_t>(v);
}

absl::StatusOr<int64_t> IntOp(int64_t a, int64_t b, BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAdd: return Saturate(static_cast<__int128>(a) + b);
    case BinaryFn::kSub: return Saturate(static_cast<__int128>(a) - b);
    case BinaryFn::kMul: return Saturate(static_cast<__int128>(a) * b);
    case BinaryFn::kDiv:
    case BinaryFn::kMod:
    case BinaryFn::kFMod:
      if (b == 0) return absl::InvalidArgumentError("integer division by zero");
      if (a == kI64Min && b == -1) return fn == BinaryFn::kDiv ? kI64Max : 0;
      if (fn == BinaryFn::kDiv) return a / b;
      if (fn == BinaryFn::kFMod) return a % b;
      {
        const int64_t r = a % b;  // Mod with fmod=0 takes the divisor's sign
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      }
    case BinaryFn::kPow: {
      if (b < 0) return a == 1 ? 1 : 0;
      __int128 r = 1;
      for (int64_t i = 0; i < b && i < 64; ++i) {
        r *= a;
        if (r > kI64Max || r < kI64Min) return Saturate(r);
      }
      return static_cast<int64_t>(r);
    }
    default: return OrderOrLogic(a, b, fn);
  }
}

double FloatOp(double a, double b, BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAdd: return a + b;
    case BinaryFn::kSub: return a - b;
    case BinaryFn::kMul: return a * b;
    case BinaryFn::kDiv: return a / b;
    case BinaryFn::kPow: return std::pow(a, b);
    case BinaryFn::kFMod: return std::fmod(a, b);
    case BinaryFn::kMod: {
      const double r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    default: return OrderOrLogic(a, b, fn);
  }
}

}  // namespace

absl::StatusOr<std::optional<ConstTensor>> FoldBinary(const ConstTensor& a, const ConstTensor& b,
                                                      BinaryFn fn) {
  auto out_shape = BroadcastShapes(a.shape, b.shape);
  if (!out_shape) {
    return absl::InvalidArgumentError(absl::StrCat("shapes ", ShapeString(a.shape), " and ",
                                                   ShapeString(b.shape), " do not broadcast"));
  }
  const int64_t n = NumElements(*out_shape);
  if (n > kMaxFoldElements) return std::optional<ConstTensor>();
  const std::vector<int64_t> ia = BroadcastIndex(*out_shape, a.shape);
  const std::vector<int64_t> ib = BroadcastIndex(*out_shape, b.shape);
  const bool floating = a.is_float() || b.is_float();
  ConstTensor out;
  out.shape = *out_shape;
  if (IsComparison(fn) || IsLogical(fn)) {
    out.dtype = DType::kBool;
    out.ints.resize(n);
    for (int64_t i = 0; i < n; ++i) {
      if (floating) {
        out.ints[i] = FloatOp(a.Get(ia[i]), b.Get(ib[i]), fn) != 0;
      } else {
        auto v = IntOp(a.ints[ia[i]], b.ints[ib[i]], fn);
        if (!v.ok()) return v.status();
        out.ints[i] = *v;
      }
    }
    return std::optional<ConstTensor>(std::move(out));
  }
  if (floating) {
    out.dtype = a.is_float() ? a.dtype : b.dtype;
    out.floats.resize(n);
    for (int64_t i = 0; i < n; ++i) out.floats[i] = FloatOp(a.Get(ia[i]), b.Get(ib[i]), fn);
    return std::optional<ConstTensor>(std::move(out));
  }
  out.dtype = a.dtype;
  out.ints.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    auto v = IntOp(a.ints[ia[i]], b.ints[ib[i]], fn);
    if (!v.ok()) return v.status();
    out.ints[i] = *v;
  }
  return std::optional<ConstTensor>(std::move(out));
}

ConstTensor FoldUnary(const ConstTensor& a, UnaryFn fn) {
  ConstTensor out = a;
  if (fn == UnaryFn::kNot) {
    out = CastConst(a, DType::kBool);
    for (int64_t& v : out.ints) v = !v;
    return out;
  }
  if (!a.is_float()) {
    for (int64_t& v : out.ints) {
      if (fn == UnaryFn::kNeg) v = v == kI64Min ? kI64Max : -v;
      if (fn == UnaryFn::kAbs) v = v == kI64Min ? kI64Max : std::abs(v);
      if (fn == UnaryFn::kRelu) v = std::max<int64_t>(v, 0);
    }
    if (fn == UnaryFn::kNeg || fn == UnaryFn::kAbs || fn == UnaryFn::kRelu ||
        fn == UnaryFn::kFloor || fn == UnaryFn::kCeil) {
      return out;
    }
    // sqrt/exp/... of integers: evaluate in floating point, cast back.
    ConstTensor f = FoldUnary(CastConst(a, DType::kF32), fn);
    return CastConst(f, a.dtype);
  }
  for (double& v : out.floats) {
    switch (fn) {
      case UnaryFn::kNeg: v = -v; break;
      case UnaryFn::kAbs: v = std::fabs(v); break;
      case UnaryFn::kSqrt: v = std::sqrt(v); break;
      case UnaryFn::kReciprocal: v = 1.0 / v; break;
      case UnaryFn::kFloor: v = std::floor(v); break;
      case UnaryFn::kCeil: v = std::ceil(v); break;
      case UnaryFn::kExp: v = std::exp(v); break;
      case UnaryFn::kLog: v = std::log(v); break;
      case UnaryFn::kRelu: v = std::max(v, 0.0); break;
      case UnaryFn::kNot: break;
    }
  }
  return out;
}

absl::StatusOr<std::optional<ConstTensor>> FoldWhere(const ConstTensor& cond, const ConstTensor& x,
                                                     const ConstTensor& y) {
  auto xy = BroadcastShapes(x.shape, y.shape);
  auto out_shape = xy ? BroadcastShapes(cond.shape, *xy) : std::nullopt;
  if (!out_shape) return absl::InvalidArgumentError("cond, X and Y do not broadcast");
  const int64_t n = NumElements(*out_shape);
  if (n > kMaxFoldElements) return std::optional<ConstTensor>();
  const auto ic = BroadcastIndex(*out_shape, cond.shape);
  const auto ix = BroadcastIndex(*out_shape, x.shape);
  const auto iy = BroadcastIndex(*out_shape, y.shape);
  ConstTensor out;
  out.shape = *out_shape;
  out.dtype = x.dtype;
  for (int64_t i = 0; i < n; ++i) {
    const bool take_x = cond.Get(ic[i]) != 0;
    if (out.is_float()) {
      out.floats.push_back(take_x ? x.Get(ix[i]) : y.Get(iy[i]));
    } else {
      out.ints.push_back(take_x ? x.GetInt(ix[i]) : y.GetInt(iy[i]));
    }
  }
  return std::optional<ConstTensor>(std::move(out));
}

absl::StatusOr<std::optional<ConstTensor>> FoldRange(const ConstTensor& start,
                                                     const ConstTensor& limit,
                                                     const ConstTensor& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) {
    return absl::InvalidArgumentError("start, limit and delta must be scalars");
  }
  const double s = start.Get(0), l = limit.Get(0), d = delta.Get(0);
  if (d == 0 || std::isnan(s) || std::isnan(l) || std::isnan(d)) {
    return absl::InvalidArgumentError("delta must be non-zero and values finite");
  }
  const double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= static_cast<double>(kMaxFoldElements))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the range has ", count, " elements, above the folding limit of ", kMaxFoldElements));
  }
  const int64_t n = static_cast<int64_t>(count);
  ConstTensor out;
  out.dtype = start.dtype;
  out.shape = {n};
  for (int64_t i = 0; i < n; ++i) {
    if (out.is_float()) {
      out.floats.push_back(s + static_cast<double>(i) * d);
    } else {
      out.ints.push_back(Saturate(static_cast<__int128>(start.GetInt(0)) +
                                  static_cast<__int128>(i) * delta.GetInt(0)));
    }
  }
  return std::optional<ConstTensor>(std::move(out));
}

}  // namespace tessera::graph::onnx_import
