// CPU kernels of the Dense family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterDenseKernels(KernelTable<T>& table) {}

template void RegisterDenseKernels<float>(KernelTable<float>&);
template void RegisterDenseKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
