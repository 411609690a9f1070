#include "tessera/exec/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace tessera::exec::cuda {

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

absl::Status CublasStatus(cublasStatus_t code, absl::string_view call) {
  if (code == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const auto text = absl::StrCat(call, " failed: ", cublasGetStatusName(code), " (",
                                 cublasGetStatusString(code), ")");
  if (code == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(text);
  return absl::InternalError(text);
}

absl::Status CudnnStatus(cudnnStatus_t code, absl::string_view call) {
  if (code == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const auto text = absl::StrCat(call, " failed: ", cudnnGetErrorString(code));
  if (code == CUDNN_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(text);
  if (code == CUDNN_STATUS_NOT_SUPPORTED) return absl::UnimplementedError(text);
  return absl::InternalError(text);
}

}  // namespace tessera::exec::cuda
