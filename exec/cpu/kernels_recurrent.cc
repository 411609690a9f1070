// CPU kernels of the Recurrent family (see kernels.h for the conventions).
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

template <typename T>
void RegisterRecurrentKernels(KernelTable<T>& table) {}

template void RegisterRecurrentKernels<float>(KernelTable<float>&);
template void RegisterRecurrentKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
