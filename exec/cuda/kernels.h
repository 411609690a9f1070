// CUDA kernels and cuBLAS products on device buffers. Compiled whenever nvcc is
// found; run only where a GPU is present (tests skip, saying so, elsewhere).
//
//   absl::StatusOr<int> n = CudaDeviceCount();   // 0 when no GPU or driver
//   DeviceBuffer x(n_elems), y(n_elems);         // RAII cudaMalloc/cudaFree
//   TS_RETURN_IF_ERROR(ReluForward(x.data(), y.data(), n_elems, stream));
//   CublasHandle blas;                           // RAII cublasCreate/cublasDestroy
//   TS_RETURN_IF_ERROR(Sgemm(blas, a, b, c, m, n, k));   // C[m,n] = A[m,k] B[k,n], row-major
#pragma once

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::exec::cuda {

// Number of usable GPUs; 0 (not an error) when there is no device or driver.
int CudaDeviceCount();

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  static absl::StatusOr<DeviceBuffer> Allocate(int64_t floats);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  float* data() const { return data_; }
  int64_t size() const { return size_; }
  absl::Status CopyFromHost(const float* host, int64_t floats);
  absl::Status CopyToHost(float* host, int64_t floats) const;

 private:
  float* data_ = nullptr;
  int64_t size_ = 0;
};

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
