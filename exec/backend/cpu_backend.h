// The CPU back-end of the execution seam (backend.h): the CPU kernels (exec/cpu/kernels.h, Eigen
// and OpenBLAS) on host memory (memory::HostMemory).
//
//   std::unique_ptr<Backend> cpu = MakeCpuBackend(/*threads=*/2);
//   cpu->host_memory();   // true: host code may read its arrays directly
//
// Every call runs synchronously on the calling thread; Synchronize has nothing to wait for.
// BatchNormalization's forward in training also updates the running statistics (running =
// momentum * running + (1 - momentum) * batch statistic, ONNX's momentum), as the CUDA back-end
// does.
#pragma once

#include <memory>

#include "tessera/exec/backend/backend.h"
#include "tessera/exec/cpu/kernels.h"

namespace tessera::exec {

std::unique_ptr<Backend> MakeCpuBackend(int threads);

// A view of host memory as the CPU kernels' tensor (what host-side NodeKernels compute on).
inline cpu::Tensor<float> HostTensor(const TensorView& v) {
  return {.shape = v.shape, .data = v.floats(), .dtype = v.dtype};
}
std::vector<cpu::Tensor<float>> HostTensors(TensorViews views);

}  // namespace tessera::exec
