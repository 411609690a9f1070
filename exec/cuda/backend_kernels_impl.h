// Internal to the CUDA back-end of the execution seam (backend.h): the launchers of its
// element-wise kernels (backend_kernels.cu). Plain C++17 and CUDA types only, as launch.h, so
// nvcc compiles the .cu file without Abseil or the graph headers. Every launcher enqueues on
// `stream`, launches nothing when n == 0, and returns cudaGetLastError().
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace tessera::exec::cuda {

// x[i] = value.
cudaError_t LaunchFillValue(float* x, int64_t n, float value, cudaStream_t stream);
// dst[i] += src[i].
cudaError_t LaunchAccumulate(float* dst, const float* src, int64_t n, cudaStream_t stream);
// x[i] *= factor.
cudaError_t LaunchScale(float* x, int64_t n, float factor, cudaStream_t stream);

// exec::UpdateRule without its Abseil-using header: the optimizer's float constants.
enum class UpdateKind : int { kSgd, kMomentum, kAdamW };
struct UpdateConstants {
  UpdateKind kind = UpdateKind::kSgd;
  float lr = 0, weight_decay = 0, momentum = 0, epsilon = 0;
  float beta1 = 0, beta2 = 0, one_minus_beta1 = 0, one_minus_beta2 = 0;
  float step_size = 0, inv_sqrt_c2 = 0, decay = 0;
};
// One optimizer step over n values, the float expressions of exec/backend/cpu_update.cc term
// for term. s0, s1: the state arrays (momentum: s0 = v; AdamW: s0 = m, s1 = v; else unused).
cudaError_t LaunchUpdate(const UpdateConstants& c, float* w, const float* g, float* s0, float* s1,
                         int64_t n, cudaStream_t stream);

// BatchNormalization's running statistic over `channels` values, in double as the CPU back-end
// computes it: running = float(momentum * running + (1 - momentum) * batch).
cudaError_t LaunchRunningStatistic(float* running, const float* batch, int64_t channels,
                                   double momentum, cudaStream_t stream);

// Adds the sum of the squares of x[0..n) (in double) to *sum when `sum` is not null, and sets
// *nonfinite to 1 when any value is a NaN or an infinity (leaves it alone otherwise).
cudaError_t LaunchSumSquares(const float* x, int64_t n, double* sum, unsigned int* nonfinite,
                             cudaStream_t stream);

}  // namespace tessera::exec::cuda
