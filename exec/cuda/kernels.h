// CUDA kernels and cuBLAS products on device memory. Compiled whenever nvcc is found; run only
// where a GPU is present (tests skip, saying so, elsewhere: base::CudaDeviceCount() == 0).
// Device memory comes from memory::CudaMemory (memory/cuda/cuda_memory.h).
//
//   TS_ASSIGN_OR_RETURN(auto gpu, memory::CudaMemory::Create(/*device=*/0));
//   TS_ASSIGN_OR_RETURN(auto x, memory::DeviceAllocation::Create(*gpu, n * sizeof(float), 256));
//   TS_ASSIGN_OR_RETURN(auto y, memory::DeviceAllocation::Create(*gpu, n * sizeof(float), 256));
//   TS_RETURN_IF_ERROR(ReluForward(static_cast<const float*>(x.data()),
//                                  static_cast<float*>(y.data()), n, stream));
//   TS_ASSIGN_OR_RETURN(CublasHandle blas, CublasHandle::Create());  // RAII cublasCreate/Destroy
//   TS_RETURN_IF_ERROR(Sgemm(blas, a, b, c, m, n, k));   // C[m,n] = A[m,k] B[k,n], row-major
#pragma once

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::exec::cuda {

class CublasHandle {
 public:
  static absl::StatusOr<CublasHandle> Create();
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  explicit CublasHandle(cublasHandle_t h) : handle_(h) {}
  cublasHandle_t handle_ = nullptr;
};

// y = max(x, 0); dx = dy * (y > 0).
absl::Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream);
absl::Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n,
                          cudaStream_t stream);
// Row-major C[m,n] = A[m,k] * B[k,n] with cuBLAS.
absl::Status Sgemm(const CublasHandle& blas, const float* a, const float* b, float* c, int64_t m,
                   int64_t n, int64_t k);

}  // namespace tessera::exec::cuda
