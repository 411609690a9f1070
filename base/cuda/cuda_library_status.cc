// The cuBLAS and cuDNN half of cuda_status.h (its own object: see cuda_status.cc).
#include "tessera/base/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace tessera::base {

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

}  // namespace tessera::base
