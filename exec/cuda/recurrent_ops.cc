// CUDA recurrent ops (being written).
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {

void RegisterCudaRecurrent(OpTable& table) { (void)table; }

}  // namespace tessera::exec::cuda
