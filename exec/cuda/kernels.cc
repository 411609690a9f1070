#include "tessera/exec/cuda/kernels.h"

#include "tessera/base/cuda/cuda_status.h"

namespace tessera::exec::cuda {

cudaError_t LaunchReluForward(const float* x, float* y, int64_t n, cudaStream_t stream);
cudaError_t LaunchReluBackward(const float* y, const float* dy, float* dx, int64_t n,
                               cudaStream_t stream);

absl::StatusOr<CublasHandle> CublasHandle::Create() {
  cublasHandle_t h = nullptr;
  TS_CUBLAS_RETURN_IF_ERROR(cublasCreate(&h));
  return CublasHandle(h);
}

CublasHandle::~CublasHandle() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

absl::Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  TS_CUDA_RETURN_IF_ERROR(LaunchReluForward(x, y, n, stream));
  return absl::OkStatus();
}

absl::Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n,
                          cudaStream_t stream) {
  TS_CUDA_RETURN_IF_ERROR(LaunchReluBackward(y, dy, dx, n, stream));
  return absl::OkStatus();
}

absl::Status Sgemm(const CublasHandle& blas, const float* a, const float* b, float* c, int64_t m,
                   int64_t n, int64_t k) {
  // cuBLAS is column-major: row-major C = A B is column-major C^T = B^T A^T,
  // so pass B first with the dimensions swapped.
  const float alpha = 1.f, beta = 0.f;
  TS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                                        static_cast<int>(m), static_cast<int>(k), &alpha, b,
                                        static_cast<int>(n), a, static_cast<int>(k), &beta, c,
                                        static_cast<int>(n)));
  return absl::OkStatus();
}

}  // namespace tessera::exec::cuda
