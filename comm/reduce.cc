// Element-wise reduction kernels. Plain loops the compiler vectorizes; bfloat16 goes through float.
#include <algorithm>

#include "tessera/base/check.h"
#include "tessera/comm/reduce_impl.h"

namespace tessera::comm::internal {
namespace {

template <typename T, typename Combine>
void Apply(void* dst, const void* a, const void* b, int64_t count, Combine combine) {
  T* out = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (int64_t i = 0; i < count; ++i) out[i] = combine(x[i], y[i]);
}

template <typename T>
void ApplyOp(void* dst, const void* a, const void* b, int64_t count, ReduceOp op) {
  if (op == ReduceOp::kMax) {
    Apply<T>(dst, a, b, count, [](T u, T v) { return u < v ? v : u; });
  } else {
    Apply<T>(dst, a, b, count, [](T u, T v) { return u + v; });
  }
}

void ApplyBFloat16(void* dst, const void* a, const void* b, int64_t count, ReduceOp op) {
  if (op == ReduceOp::kMax) {
    Apply<BFloat16>(dst, a, b, count, [](BFloat16 u, BFloat16 v) {
      return u.ToFloat() < v.ToFloat() ? v : u;
    });
  } else {
    Apply<BFloat16>(dst, a, b, count, [](BFloat16 u, BFloat16 v) {
      return BFloat16(u.ToFloat() + v.ToFloat());
    });
  }
}

}  // namespace

void ReduceInto(void* dst, const void* a, const void* b, int64_t count, DType dtype,
                ReduceOp op) {
  switch (dtype) {
    case DType::kFloat32: return ApplyOp<float>(dst, a, b, count, op);
    case DType::kInt64: return ApplyOp<int64_t>(dst, a, b, count, op);
    case DType::kBFloat16: return ApplyBFloat16(dst, a, b, count, op);
  }
  TS_CHECK(false) << "unknown dtype " << static_cast<int>(dtype);
}

void DivideBy(void* data, int64_t count, DType dtype, int64_t divisor) {
  TS_CHECK(divisor > 0) << divisor;
  if (divisor == 1) return;
  switch (dtype) {
    case DType::kFloat32: {
      float* x = static_cast<float*>(data);
      const float d = static_cast<float>(divisor);
      for (int64_t i = 0; i < count; ++i) x[i] /= d;
      return;
    }
    case DType::kInt64: {
      int64_t* x = static_cast<int64_t*>(data);
      for (int64_t i = 0; i < count; ++i) x[i] /= divisor;
      return;
    }
    case DType::kBFloat16: {
      BFloat16* x = static_cast<BFloat16*>(data);
      const float d = static_cast<float>(divisor);
      for (int64_t i = 0; i < count; ++i) x[i] = BFloat16(x[i].ToFloat() / d);
      return;
    }
  }
  TS_CHECK(false) << "unknown dtype " << static_cast<int>(dtype);
}

}  // namespace tessera::comm::internal
