// The CUDA runtime half of cuda_status.h. cuBLAS and cuDNN codes are converted in
// cuda_library_status.cc, a separate object, so a program that only calls CudaStatus (the NCCL
// back-end, and so every tessera binary) does not load cuBLAS or cuDNN.
#include "tessera/base/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace tessera::base {

absl::Status CudaStatus(cudaError_t code, absl::string_view call) {
  if (code == cudaSuccess) return absl::OkStatus();
  const auto text = absl::StrCat(call, " failed: ", cudaGetErrorName(code), " (",
                                 cudaGetErrorString(code), ")");
  if (code == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(text);
  if (code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver) {
    return absl::UnavailableError(text);
  }
  return absl::InternalError(text);
}

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

}  // namespace tessera::base
