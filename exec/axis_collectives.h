// Collectives of tensors split along an axis: what the hybrid runtime's distributed layers
// exchange. Every rank calls each with the same shapes, in the same order.
//
//   // X split over the batch (axis 0): every rank gets the whole [B, K].
//   TS_RETURN_IF_ERROR(AllGatherAxis(comm, x_local, x_local_shape, /*axis=*/0, x_full));
//   // Y [B, N/P] (features split) -> [B/P, N] (batch split):
//   TS_RETURN_IF_ERROR(AllToAllAxis(comm, y, y_shape, /*split=*/0, /*concat=*/1, y_local));
//
// Block s of a tensor along an axis is its s-th slice of size dim/P there; rank r's local
// tensor is block r of the whole. Buffers are float32, row-major. Blocks that are contiguous
// (an axis with nothing but size-1 axes before it, such as the batch axis 0) go to the
// communicator in place; others are packed into `scratch`, which a caller that runs every step
// keeps (it grows to the largest call and is reused; null: a temporary per call).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "tessera/comm/communicator.h"
#include "tessera/graph/tensor.h"

namespace tessera::exec {

// `local` (shape `local_shape`) is block rank of the whole; `out` receives the whole (the
// local shape with `axis` times P). Sends (P-1) x |local|.
absl::Status AllGatherAxis(comm::Communicator& comm, const float* local,
                           const graph::Shape& local_shape, int axis, float* out,
                           std::vector<float>* scratch = nullptr);

// Bytes per element of a tensor of graph dtype `dtype` as the programs store it: floating
// values as float32, ids (int32, int64) in their own dtype.
int64_t StoredBytes(graph::DType dtype);

// The same for a tensor of graph dtype `dtype` (floating, or token ids of kI32 or kI64), moved as
// raw 4-byte words as it is stored (an all-gather only copies): sends (P-1) x |local| elements
// of StoredBytes(dtype).
absl::Status AllGatherAxis(comm::Communicator& comm, const void* local, graph::DType dtype,
                           const graph::Shape& local_shape, int axis, void* out,
                           std::vector<float>* scratch = nullptr);

// `full` (shape `full_shape`) holds every rank's partial sums; `out` receives block rank of the
// sum along `axis`. Sends (P-1)/P x |full|.
absl::Status ReduceScatterAxis(comm::Communicator& comm, const float* full,
                               const graph::Shape& full_shape, int axis, float* out,
                               std::vector<float>* scratch = nullptr);

// Block s of `in` along `split_axis` goes to rank s; the block received from rank s becomes
// block s of `out` along `concat_axis` (out's shape: in's with split_axis / P, concat_axis x P).
// One Communicator::AllToAll; `in` and `out` must not overlap. Sends (P-1)/P x |in|.
absl::Status AllToAllAxis(comm::Communicator& comm, const float* in, const graph::Shape& in_shape,
                          int split_axis, int concat_axis, float* out,
                          std::vector<float>* scratch = nullptr);

}  // namespace tessera::exec
