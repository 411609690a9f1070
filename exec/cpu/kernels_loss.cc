// CPU kernels of the Loss family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterLossKernels(KernelTable<T>& table) {}

template void RegisterLossKernels<float>(KernelTable<float>&);
template void RegisterLossKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
