// Internal to the CUDA back-end: the kernel launchers the host files (*_ops.cc) call. Plain
// C++17 and CUDA types only (no Abseil, no graph headers), so the .cu files compile with nvcc in
// C++17. Every launcher enqueues on `stream` and returns cudaGetLastError(); shapes are at most
// kMaxRank dimensions, row-major; a stride of 0 broadcasts.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace tessera::exec::cuda {

inline constexpr int kMaxRank = 8;

// An index space (`dims`) and, for one tensor, where element (i_0..i_{r-1}) lives:
// offset + sum_d i_d * strides[d].
struct Dims {
  int rank = 0;
  int64_t d[kMaxRank] = {};
};
struct View {
  int64_t offset = 0;
  int64_t s[kMaxRank] = {};
};

// Number of elements of `dims`.
inline int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int d = 0; d < dims.rank; ++d) n *= dims.d[d];
  return n;
}

enum class UnaryCode : int {
  kRelu, kLeakyRelu, kSigmoid, kTanh, kGelu, kErf, kSqrt, kExp, kLog, kNeg, kReciprocal, kAbs,
  kClip
};
enum class BinaryCode : int { kAdd, kSub, kMul, kDiv, kPow };
enum class ReduceCode : int { kSum, kMean, kMax };
enum class PadCode : int { kConstant, kReflect, kEdge };

// y = f(x); dx = f'(x) dy (reads x and/or y). alpha/beta: LeakyRelu slope, Clip bounds.
cudaError_t LaunchUnary(UnaryCode op, const float* x, float* y, int64_t n, float alpha,
                        float beta, cudaStream_t stream);
cudaError_t LaunchUnaryBackward(UnaryCode op, const float* x, const float* y, const float* dy,
                                float* dx, int64_t n, float alpha, float beta,
                                cudaStream_t stream);
// Dropout with the CPU kernel's counter-based mask: keep element i when its 16-bit draw from
// Mix64(key + (i/64)*16 + (i%64)/4) >= threshold; y = x * keep * scale (also the backward).
cudaError_t LaunchDropout(const float* x, float* y, int64_t n, uint64_t key, uint32_t threshold,
                          float scale, cudaStream_t stream);

// y[out] = op(a[va], b[vb]) over `out` (views in the output's index space).
cudaError_t LaunchBinary(BinaryCode op, const float* a, View va, const float* b, View vb,
                         float* y, Dims out, cudaStream_t stream);
// g[out] = d y / d operand `which` (0: A, 1: B) times dy, over the full output space.
cudaError_t LaunchBinaryGrad(BinaryCode op, int which, const float* dy, const float* a, View va,
                             const float* b, View vb, const float* y, float* g, Dims out,
                             cudaStream_t stream);
// y = cond ? x : z; cond is int64 (non-zero true). Grad: g = (cond == (which == 0)) ? dy : 0.
cudaError_t LaunchWhere(const int64_t* cond, View vc, const float* x, View vx, const float* z,
                        View vz, float* y, Dims out, cudaStream_t stream);
cudaError_t LaunchWhereGrad(int which, const int64_t* cond, View vc, const float* dy, float* g,
                            Dims out, cudaStream_t stream);

// dst[vd] (+)= src[vs] over `space`.
cudaError_t LaunchCopy(const float* src, View vs, float* dst, View vd, Dims space,
                       bool accumulate, cudaStream_t stream);
// dst[vd] = src[vs] over `space` for elements of 1, 2, 4 or 8 bytes (any dtype; views count
// elements): the forward of the layout ops, which also move integer ids and masks.
cudaError_t LaunchCopyElements(const void* src, View vs, void* dst, View vd, Dims space,
                               int element_bytes, cudaStream_t stream);
// x[in] = sum of g over the elements of `out` that broadcast from it; `in` has out's rank, with
// 1 on the broadcast axes.
cudaError_t LaunchSumToShape(const float* g, Dims out, float* x, Dims in, cudaStream_t stream);
cudaError_t LaunchFill(float* y, int64_t n, float value, cudaStream_t stream);

// Reduction over the axes where reduced[d] != 0 of x[in]; y has the kept-dims layout.
cudaError_t LaunchReduce(ReduceCode op, const float* x, Dims in, const int* reduced, float* y,
                         cudaStream_t stream);
// dx[in] = dy[o(in)] * (mean: 1/count; max: x == y[o]).
cudaError_t LaunchReduceBackward(ReduceCode op, const float* x, const float* y, const float* dy,
                                 Dims in, const int* reduced, float* dx, cudaStream_t stream);

// Softmax over the middle axis of [outer, axis, inner].
cudaError_t LaunchSoftmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner,
                          bool log, cudaStream_t stream);
cudaError_t LaunchSoftmaxBackward(const float* y, const float* dy, float* dx, int64_t outer,
                                  int64_t axis, int64_t inner, bool log, cudaStream_t stream);

// Pad: y[out] from x[in]; pads_begin per axis (negative crops).
cudaError_t LaunchPad(PadCode mode, const float* x, Dims in, float* y, Dims out,
                      const int64_t* pads_begin, float value, cudaStream_t stream);
// dx (zeroed by the caller) += dy scattered back to the elements each output read.
cudaError_t LaunchPadBackward(PadCode mode, const float* dy, Dims out, float* dx, Dims in,
                              const int64_t* pads_begin, cudaStream_t stream);

// Gather along the middle axis of data[outer, axis, inner] with validated int64 indices:
// y[o, k, i] = data[o, idx[k], i]; the backward atomically adds into ddata (zeroed).
cudaError_t LaunchGather(const float* data, int64_t outer, int64_t axis, int64_t inner,
                         const int64_t* idx, int64_t num_idx, float* y, cudaStream_t stream);
cudaError_t LaunchGatherBackward(const float* dy, int64_t outer, int64_t axis, int64_t inner,
                                 const int64_t* idx, int64_t num_idx, float* ddata,
                                 cudaStream_t stream);

// SoftmaxCrossEntropy over logits[outer, classes, inner], labels[outer, inner] (validated;
// ignored positions have label < 0 here). Writes probs and per-position losses.
cudaError_t LaunchSoftmaxXent(const float* logits, const int64_t* labels, int64_t outer,
                              int64_t classes, int64_t inner, float* probs, float* losses,
                              cudaStream_t stream);
// dlogits = (probs - onehot) * (per_position ? dy[pos] : dy[0]) * scale; 0 where ignored.
cudaError_t LaunchSoftmaxXentBackward(const float* probs, const int64_t* labels, int64_t outer,
                                      int64_t classes, int64_t inner, const float* dy,
                                      bool per_position, float scale, float* dlogits,
                                      cudaStream_t stream);
// y[0] = scale * sum(x[0..n)).
cudaError_t LaunchSumAll(const float* x, int64_t n, float scale, float* y, cudaStream_t stream);

// LayerNorm over rows x cols: y = (x - mean) * inv * scale + bias (bias may be null); keeps
// mean and inv per row.
cudaError_t LaunchLayerNorm(const float* x, const float* scale, const float* bias, int64_t rows,
                            int64_t cols, float eps, float* y, float* mean, float* inv,
                            cudaStream_t stream);
// Any of dx, dscale, dbias may be null. dy null is not allowed (the caller zero-fills).
cudaError_t LaunchLayerNormBackward(const float* x, const float* scale, const float* dy,
                                    const float* mean, const float* inv, int64_t rows,
                                    int64_t cols, float* dx, float* dscale, float* dbias,
                                    cudaStream_t stream);

}  // namespace tessera::exec::cuda
