// CPU kernels of the Norm family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterNormKernels(KernelTable<T>& table) {}

template void RegisterNormKernels<float>(KernelTable<float>&);
template void RegisterNormKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
