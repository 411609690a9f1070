// Element-wise kernels: unary ops, Dropout, broadcasting binary ops and Where, strided copies
// and broadcast sums. One thread per element, grid-stride loops; see launch.h.
#include <cmath>

#include "tessera/exec/cuda/device_util.cuh"
#include "tessera/exec/dropout_mask_impl.h"

namespace tessera::exec::cuda {
namespace {

constexpr float kSqrt1_2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
constexpr float k2SqrtPi = 1.12837916709551257f;

__device__ float UnaryF(UnaryCode op, float x, float alpha, float beta) {
  switch (op) {
    case UnaryCode::kRelu: return x > 0.f ? x : 0.f;
    case UnaryCode::kLeakyRelu: return x > 0.f ? x : x * alpha;
    case UnaryCode::kSigmoid: return 1.f / (1.f + expf(-x));
    case UnaryCode::kTanh: return tanhf(x);
    case UnaryCode::kGelu: return 0.5f * x * (1.f + erff(x * kSqrt1_2));
    case UnaryCode::kErf: return erff(x);
    case UnaryCode::kSqrt: return sqrtf(x);
    case UnaryCode::kExp: return expf(x);
    case UnaryCode::kLog: return logf(x);
    case UnaryCode::kNeg: return -x;
    case UnaryCode::kReciprocal: return 1.f / x;
    case UnaryCode::kAbs: return fabsf(x);
    case UnaryCode::kClip: return fminf(fmaxf(x, alpha), beta);
  }
  return x;
}

__device__ float UnaryGrad(UnaryCode op, float x, float y, float dy, float alpha, float beta) {
  switch (op) {
    case UnaryCode::kRelu: return y > 0.f ? dy : 0.f;
    case UnaryCode::kLeakyRelu: return x > 0.f ? dy : dy * alpha;
    case UnaryCode::kSigmoid: return dy * y * (1.f - y);
    case UnaryCode::kTanh: return dy * (1.f - y * y);
    case UnaryCode::kGelu:
      return dy * (0.5f * (1.f + erff(x * kSqrt1_2)) + x * expf(-0.5f * x * x) * kInvSqrt2Pi);
    case UnaryCode::kErf: return dy * expf(-x * x) * k2SqrtPi;
    case UnaryCode::kSqrt: return 0.5f * dy / y;
    case UnaryCode::kExp: return dy * y;
    case UnaryCode::kLog: return dy / x;
    case UnaryCode::kNeg: return -dy;
    case UnaryCode::kReciprocal: return -dy * y * y;
    case UnaryCode::kAbs: return x > 0.f ? dy : (x < 0.f ? -dy : 0.f);
    case UnaryCode::kClip: return (x >= alpha && x <= beta) ? dy : 0.f;
  }
  return dy;
}

__global__ void UnaryKernel(UnaryCode op, const float* x, float* y, int64_t n, float alpha,
                            float beta) {
  TS_GRID_LOOP(i, n) { y[i] = UnaryF(op, x[i], alpha, beta); }
}

// x or y may be null when the op does not read it.
__global__ void UnaryBackwardKernel(UnaryCode op, const float* x, const float* y,
                                    const float* dy, float* dx, int64_t n, float alpha,
                                    float beta) {
  TS_GRID_LOOP(i, n) {
    dx[i] = UnaryGrad(op, x != nullptr ? x[i] : 0.f, y != nullptr ? y[i] : 0.f, dy[i], alpha,
                      beta);
  }
}

__global__ void DropoutKernel(const float* x, float* y, int64_t n, uint64_t key,
                              uint32_t threshold, float scale) {
  TS_GRID_LOOP(i, n) {
    y[i] = dropout::Keep(key, i, threshold) ? x[i] * scale : 0.f;
  }
}

__device__ float BinaryF(BinaryCode op, float a, float b) {
  switch (op) {
    case BinaryCode::kAdd: return a + b;
    case BinaryCode::kSub: return a - b;
    case BinaryCode::kMul: return a * b;
    case BinaryCode::kDiv: return a / b;
    case BinaryCode::kPow: return powf(a, b);
  }
  return 0.f;
}

__device__ float BinaryGradF(BinaryCode op, int which, float dy, float a, float b, float y) {
  switch (op) {
    case BinaryCode::kAdd: return dy;
    case BinaryCode::kSub: return which == 0 ? dy : -dy;
    case BinaryCode::kMul: return which == 0 ? dy * b : dy * a;
    case BinaryCode::kDiv: return which == 0 ? dy / b : -dy * y / b;
    case BinaryCode::kPow:
      if (which == 0) return b == 0.f ? 0.f : dy * b * powf(a, b - 1.f);
      return a > 0.f ? dy * y * logf(a) : 0.f;
  }
  return 0.f;
}

__global__ void BinaryKernel(BinaryCode op, const float* a, View va, const float* b, View vb,
                             float* y, Dims out, int64_t n) {
  TS_GRID_LOOP(i, n) { y[i] = BinaryF(op, a[ViewOffset(i, out, va)], b[ViewOffset(i, out, vb)]); }
}

__global__ void BinaryGradKernel(BinaryCode op, int which, const float* dy, const float* a,
                                 View va, const float* b, View vb, const float* y, float* g,
                                 Dims out, int64_t n) {
  TS_GRID_LOOP(i, n) {
    const float av = a != nullptr ? a[ViewOffset(i, out, va)] : 0.f;
    const float bv = b != nullptr ? b[ViewOffset(i, out, vb)] : 0.f;
    g[i] = BinaryGradF(op, which, dy[i], av, bv, y != nullptr ? y[i] : 0.f);
  }
}

__global__ void WhereKernel(const int64_t* cond, View vc, const float* x, View vx, const float* z,
                            View vz, float* y, Dims out, int64_t n) {
  TS_GRID_LOOP(i, n) {
    y[i] = cond[ViewOffset(i, out, vc)] != 0 ? x[ViewOffset(i, out, vx)]
                                             : z[ViewOffset(i, out, vz)];
  }
}

__global__ void WhereGradKernel(int which, const int64_t* cond, View vc, const float* dy,
                                float* g, Dims out, int64_t n) {
  TS_GRID_LOOP(i, n) {
    const bool c = cond[ViewOffset(i, out, vc)] != 0;
    g[i] = (c == (which == 0)) ? dy[i] : 0.f;
  }
}

__global__ void CopyKernel(const float* src, View vs, float* dst, View vd, Dims space, int64_t n,
                           bool accumulate) {
  TS_GRID_LOOP(i, n) {
    const float v = src[ViewOffset(i, space, vs)];
    float& d = dst[ViewOffset(i, space, vd)];
    d = accumulate ? d + v : v;
  }
}

// The forward layout copy of any element type: bits moved, never converted.
template <typename T>
__global__ void CopyElementsKernel(const T* src, View vs, T* dst, View vd, Dims space, int64_t n) {
  TS_GRID_LOOP(i, n) { dst[ViewOffset(i, space, vd)] = src[ViewOffset(i, space, vs)]; }
}

// One thread per element of `in`: sums the `reps` elements of `out` that broadcast from it.
__global__ void SumToShapeKernel(const float* g, Dims out, float* x, Dims in, int64_t n,
                                 int64_t reps) {
  TS_GRID_LOOP(j, n) {
    int64_t idx[kMaxRank];
    int64_t rest = j;
    for (int d = in.rank - 1; d >= 0; --d) {
      idx[d] = rest % in.d[d];
      rest /= in.d[d];
    }
    float sum = 0.f;
    for (int64_t r = 0; r < reps; ++r) {
      int64_t rr = r, off = 0, stride = 1;
      for (int d = out.rank - 1; d >= 0; --d) {
        int64_t i = idx[d];
        if (in.d[d] == 1 && out.d[d] != 1) {
          i = rr % out.d[d];
          rr /= out.d[d];
        }
        off += i * stride;
        stride *= out.d[d];
      }
      sum += g[off];
    }
    x[j] = sum;
  }
}

__global__ void FillKernel(float* y, int64_t n, float value) {
  TS_GRID_LOOP(i, n) { y[i] = value; }
}

}  // namespace

cudaError_t LaunchUnary(UnaryCode op, const float* x, float* y, int64_t n, float alpha,
                        float beta, cudaStream_t stream) {
  UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, x, y, n, alpha, beta);
  return cudaGetLastError();
}

cudaError_t LaunchUnaryBackward(UnaryCode op, const float* x, const float* y, const float* dy,
                                float* dx, int64_t n, float alpha, float beta,
                                cudaStream_t stream) {
  UnaryBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(op, x, y, dy, dx, n, alpha, beta);
  return cudaGetLastError();
}

cudaError_t LaunchDropout(const float* x, float* y, int64_t n, uint64_t key, uint32_t threshold,
                          float scale, cudaStream_t stream) {
  DropoutKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n, key, threshold, scale);
  return cudaGetLastError();
}

cudaError_t LaunchBinary(BinaryCode op, const float* a, View va, const float* b, View vb,
                         float* y, Dims out, cudaStream_t stream) {
  const int64_t n = Count(out);
  BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, a, va, b, vb, y, out, n);
  return cudaGetLastError();
}

cudaError_t LaunchBinaryGrad(BinaryCode op, int which, const float* dy, const float* a, View va,
                             const float* b, View vb, const float* y, float* g, Dims out,
                             cudaStream_t stream) {
  const int64_t n = Count(out);
  BinaryGradKernel<<<Blocks(n), kThreads, 0, stream>>>(op, which, dy, a, va, b, vb, y, g, out, n);
  return cudaGetLastError();
}

cudaError_t LaunchWhere(const int64_t* cond, View vc, const float* x, View vx, const float* z,
                        View vz, float* y, Dims out, cudaStream_t stream) {
  const int64_t n = Count(out);
  WhereKernel<<<Blocks(n), kThreads, 0, stream>>>(cond, vc, x, vx, z, vz, y, out, n);
  return cudaGetLastError();
}

cudaError_t LaunchWhereGrad(int which, const int64_t* cond, View vc, const float* dy, float* g,
                            Dims out, cudaStream_t stream) {
  const int64_t n = Count(out);
  WhereGradKernel<<<Blocks(n), kThreads, 0, stream>>>(which, cond, vc, dy, g, out, n);
  return cudaGetLastError();
}

cudaError_t LaunchCopy(const float* src, View vs, float* dst, View vd, Dims space,
                       bool accumulate, cudaStream_t stream) {
  const int64_t n = Count(space);
  if (n == 0) return cudaSuccess;
  CopyKernel<<<Blocks(n), kThreads, 0, stream>>>(src, vs, dst, vd, space, n, accumulate);
  return cudaGetLastError();
}

cudaError_t LaunchCopyElements(const void* src, View vs, void* dst, View vd, Dims space,
                               int element_bytes, cudaStream_t stream) {
  const int64_t n = Count(space);
  if (n == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1:
      CopyElementsKernel<<<Blocks(n), kThreads, 0, stream>>>(
          static_cast<const uint8_t*>(src), vs, static_cast<uint8_t*>(dst), vd, space, n);
      break;
    case 2:
      CopyElementsKernel<<<Blocks(n), kThreads, 0, stream>>>(
          static_cast<const uint16_t*>(src), vs, static_cast<uint16_t*>(dst), vd, space, n);
      break;
    case 4:
      CopyElementsKernel<<<Blocks(n), kThreads, 0, stream>>>(
          static_cast<const uint32_t*>(src), vs, static_cast<uint32_t*>(dst), vd, space, n);
      break;
    case 8:
      CopyElementsKernel<<<Blocks(n), kThreads, 0, stream>>>(
          static_cast<const uint64_t*>(src), vs, static_cast<uint64_t*>(dst), vd, space, n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchSumToShape(const float* g, Dims out, float* x, Dims in, cudaStream_t stream) {
  const int64_t n = Count(in), total = Count(out);
  if (n == 0) return cudaSuccess;
  SumToShapeKernel<<<Blocks(n), kThreads, 0, stream>>>(g, out, x, in, n, total / n);
  return cudaGetLastError();
}

cudaError_t LaunchFill(float* y, int64_t n, float value, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(y, n, value);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
