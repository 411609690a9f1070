// CPU kernels of the ConvPool family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterConvPoolKernels(KernelTable<T>& table) {}

template void RegisterConvPoolKernels<float>(KernelTable<float>&);
template void RegisterConvPoolKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
