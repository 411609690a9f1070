// CPU kernels of the Layout family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterLayoutKernels(KernelTable<T>& table) {}

template void RegisterLayoutKernels<float>(KernelTable<float>&);
template void RegisterLayoutKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
