// CUDA conv_pool ops (being written).
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {

void RegisterCudaConvPool(OpTable& table) { (void)table; }

}  // namespace tessera::exec::cuda
