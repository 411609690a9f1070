// The CUDA back-end of the execution seam (exec/backend/backend.h): the CUDA op kernels
// (op_kernels.h), cuBLAS and cuDNN on one GPU's memory (memory::CudaMemory), every call enqueued
// on one non-blocking stream of its own.
//
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::Backend> gpu,
//                       cuda::MakeCudaBackend({.device = 0, .tf32 = false}));
//   TS_ASSIGN_OR_RETURN(auto block, memory::DeviceAllocation::Create(gpu->memory(), bytes, 256));
//   absl::Span<float> w(static_cast<float*>(block.data()), n);
//   TS_RETURN_IF_ERROR(exec::WriteFloats(*gpu, w, host_values));   // waits for the copy
//   TS_RETURN_IF_ERROR(gpu->Scale(w, 0.5f));                        // enqueued
//   TS_ASSIGN_OR_RETURN(std::vector<float> back, exec::ReadFloats(*gpu, w));  // waits
//
// Ordering: everything runs in call order on the back-end's stream. CopyToHost, Inspect and
// Synchronize wait for what was enqueued before them; CopyFromHost waits for its own copy, so
// the host buffer may be freed or reused on return (pinned, double-buffered input copies that
// overlap the step are future work). Some op kernels synchronise too (to free their scratch).
// BatchNormalization's forward in training updates the running statistics on the device
// (running = momentum * running + (1 - momentum) * batch statistic), as the CPU back-end does.
// memory() is the GPU's memory through a cache (memory/cached_memory.h): the kernels' scratch,
// taken and freed in every call, reaches cudaMalloc only in the first step. Node states hold
// device memory from memory(): destroy them, and every allocation from memory(), before the
// back-end. One back-end per thread (the memory back-end is not
// thread-safe); each call makes the back-end's GPU current on the calling thread.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "tessera/exec/backend/backend.h"

namespace tessera::exec::cuda {

struct CudaBackendOptions {
  int device = 0;     // which GPU (cudaSetDevice's index)
  bool tf32 = false;  // let cuBLAS (the handle's math mode) and cuDNN (Conv) use TF32
};

// The back-end on GPU `options.device`. FailedPrecondition naming the check that failed: no
// CUDA device (cudaGetDeviceCount's error, or 0 devices) or a device index out of range; the
// CUDA, cuBLAS or cuDNN error of creating the stream and handles otherwise.
absl::StatusOr<std::unique_ptr<exec::Backend>> MakeCudaBackend(const CudaBackendOptions& options);

}  // namespace tessera::exec::cuda
