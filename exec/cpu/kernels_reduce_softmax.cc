// CPU kernels of the ReduceSoftmax family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterReduceSoftmaxKernels(KernelTable<T>& table) {}

template void RegisterReduceSoftmaxKernels<float>(KernelTable<float>&);
template void RegisterReduceSoftmaxKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
