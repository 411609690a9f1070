// CUDA and cuBLAS return codes as absl::Status, with the call's text.
//
//   TS_CUDA_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
//   TS_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle, ...));
//   TS_CUDNN_RETURN_IF_ERROR(cudnnCreate(&handle));
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::exec::cuda {

absl::Status CudaStatus(cudaError_t code, absl::string_view call);
absl::Status CublasStatus(cublasStatus_t code, absl::string_view call);
absl::Status CudnnStatus(cudnnStatus_t code, absl::string_view call);

}  // namespace tessera::exec::cuda

#define TS_CUDA_RETURN_IF_ERROR(call)                                                 \
  do {                                                                                \
    ::absl::Status ts_cuda_status_ = ::tessera::exec::cuda::CudaStatus((call), #call); \
    if (!ts_cuda_status_.ok()) return ts_cuda_status_;                               \
  } while (0)

#define TS_CUBLAS_RETURN_IF_ERROR(call)                                                   \
  do {                                                                                    \
    ::absl::Status ts_cublas_status_ = ::tessera::exec::cuda::CublasStatus((call), #call); \
    if (!ts_cublas_status_.ok()) return ts_cublas_status_;                               \
  } while (0)

#define TS_CUDNN_RETURN_IF_ERROR(call)                                                  \
  do {                                                                                  \
    ::absl::Status ts_cudnn_status_ = ::tessera::exec::cuda::CudnnStatus((call), #call); \
    if (!ts_cudnn_status_.ok()) return ts_cudnn_status_;                               \
  } while (0)
