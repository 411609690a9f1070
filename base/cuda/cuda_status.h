// CUDA runtime, cuBLAS and cuDNN return codes as absl::Status, with the call's text; the number
// of usable GPUs. The one place such codes become a Status (exec/cuda, memory/cuda and comm's
// NCCL back-end all use it). Built only when CUDA is found (Tessera::base_cuda).
//
//   TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
//   TS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//   TS_CUDNN_RETURN_IF_ERROR(cudnnCreate(&handle));
//   TS_RETURN_IF_ERROR(tessera::base::CudaStatus(code, "cudaStreamQuery (all-reduce)"));
//   if (tessera::base::CudaDeviceCount() == 0) { /* no GPU or no driver */ }
//
// Codes map to: out of memory (cudaErrorMemoryAllocation, CUBLAS/CUDNN_STATUS_ALLOC_FAILED) ->
// ResourceExhausted; no device or an old driver -> Unavailable; CUDNN_STATUS_NOT_SUPPORTED ->
// Unimplemented; anything else -> Internal. The message is "<call> failed: " and the library's
// text for the code.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::base {

absl::Status CudaStatus(cudaError_t code, absl::string_view call);
absl::Status CublasStatus(cublasStatus_t code, absl::string_view call);
absl::Status CudnnStatus(cudnnStatus_t code, absl::string_view call);

// Number of usable GPUs; 0 (not an error) when there is no device or driver.
int CudaDeviceCount();

}  // namespace tessera::base

#define TS_CUDA_RETURN_IF_ERROR(call)                                              \
  do {                                                                             \
    ::absl::Status ts_cuda_status_ = ::tessera::base::CudaStatus((call), #call);   \
    if (!ts_cuda_status_.ok()) return ts_cuda_status_;                            \
  } while (0)

#define TS_CUBLAS_RETURN_IF_ERROR(call)                                                \
  do {                                                                                 \
    ::absl::Status ts_cublas_status_ = ::tessera::base::CublasStatus((call), #call);   \
    if (!ts_cublas_status_.ok()) return ts_cublas_status_;                            \
  } while (0)

#define TS_CUDNN_RETURN_IF_ERROR(call)                                               \
  do {                                                                               \
    ::absl::Status ts_cudnn_status_ = ::tessera::base::CudnnStatus((call), #call);   \
    if (!ts_cudnn_status_.ok()) return ts_cudnn_status_;                            \
  } while (0)
