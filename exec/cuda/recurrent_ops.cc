// CUDA recurrent and sequence-loss ops: LSTM (lstm_ops.cc, lstm_kernels.cu) and CtcLoss
// (ctc_ops.cc, ctc_kernels.cu).
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {

void RegisterCudaLstm(OpTable& table);  // lstm_ops.cc
void RegisterCudaCtc(OpTable& table);   // ctc_ops.cc

void RegisterCudaRecurrent(OpTable& table) {
  RegisterCudaLstm(table);
  RegisterCudaCtc(table);
}

}  // namespace tessera::exec::cuda
