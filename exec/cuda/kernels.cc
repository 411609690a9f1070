#include "tessera/exec/cuda/kernels.h"

#include <utility>

#include "tessera/exec/cuda/cuda_status.h"

namespace tessera::exec::cuda {

cudaError_t LaunchReluForward(const float* x, float* y, int64_t n, cudaStream_t stream);
cudaError_t LaunchReluBackward(const float* y, const float* dy, float* dx, int64_t n,
                               cudaStream_t stream);

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(int64_t floats) {
  DeviceBuffer buffer;
  void* ptr = nullptr;
  TS_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr, sizeof(float) * static_cast<size_t>(floats)));
  buffer.data_ = static_cast<float*>(ptr);
  buffer.size_ = floats;
  return buffer;
}

absl::Status DeviceBuffer::CopyFromHost(const float* host, int64_t floats) {
  if (floats > size_) return absl::OutOfRangeError("copy larger than the device buffer");
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(data_, host, sizeof(float) * floats, cudaMemcpyHostToDevice));
  return absl::OkStatus();
}

absl::Status DeviceBuffer::CopyToHost(float* host, int64_t floats) const {
  if (floats > size_) return absl::OutOfRangeError("copy larger than the device buffer");
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, data_, sizeof(float) * floats, cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

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
