// A layer's change of an input's layout (rank_plan.h InputTransition) and its transpose, on
// the rank's activation channel. Every rank calls each with the same transition and shapes.
//
//   // X held on the batch split, read whole by a model-parallel Gemm (partial dX):
//   TS_RETURN_IF_ERROR(TransitionForward(comm, t, x_local, x_whole.data(), &scratch));
//   ...  dX_whole, a partial sum, back to the batch split:
//   TS_RETURN_IF_ERROR(TransitionBackward(comm, t, dx_whole.data(), dx_local, &scratch));
//
// forward (held -> read)          backward (gradient read -> held)
//   split -> whole: all-gather      partial: reduce-scatter; full: the rank's block, local
//   split a -> split b: all-to-all  all-to-all back
//   whole -> split: the rank's block, local (data inputs only: no gradient)
// Payload as the planner counts it (partitioner/layout.h).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/exec/rank_plan.h"

namespace tessera::exec {

// The shape the layer reads `held` (the input as the rank holds it) in.
graph::Shape ReadShape(const InputTransition& t, graph::Shape held, int ranks);

// `held` (shape and dtype as the rank holds it) into `read` (ReadShape's shape, same dtype).
absl::Status TransitionForward(comm::Communicator& comm, const InputTransition& t,
                               const cpu::Tensor<float>& held, void* read,
                               std::vector<float>* scratch);

// `dread` (float32, ReadShape's shape) into `dheld` (the held tensor's shape).
absl::Status TransitionBackward(comm::Communicator& comm, const InputTransition& t,
                                const float* dread, const cpu::Tensor<float>& dheld,
                                std::vector<float>* scratch);

}  // namespace tessera::exec
