// Axis collectives (axis_collectives.h): blocks along an axis packed into contiguous buffers
// for the communicator's collectives, and unpacked into place.
#include "tessera/exec/axis_collectives.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"

namespace tessera::exec {
namespace {

// A tensor viewed as [outer, P, block, inner] around one axis.
struct Blocks {
  int64_t outer = 1, block = 1, inner = 1, parts = 1;
  int64_t chunk() const { return block * inner; }        // contiguous floats per outer index
  int64_t size() const { return outer * block * inner; }  // floats per block
};

absl::StatusOr<Blocks> BlocksOf(const graph::Shape& shape, int axis, int parts) {
  if (axis < 0 || axis >= static_cast<int>(shape.size()) || shape[axis] % parts != 0) {
    return absl::InternalError(absl::StrCat("axis ", axis, " of a rank-", shape.size(),
                                            " tensor does not split into ", parts, " blocks"));
  }
  Blocks b{.block = shape[axis] / parts, .parts = parts};
  for (int d = 0; d < axis; ++d) b.outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) b.inner *= shape[d];
  return b;
}

void Pack(const Blocks& b, const float* whole, int s, float* dst) {
  for (int64_t o = 0; o < b.outer; ++o) {
    std::memcpy(dst + o * b.chunk(), whole + (o * b.parts + s) * b.chunk(),
                b.chunk() * sizeof(float));
  }
}

void Unpack(const Blocks& b, const float* src, int s, float* whole) {
  for (int64_t o = 0; o < b.outer; ++o) {
    std::memcpy(whole + (o * b.parts + s) * b.chunk(), src + o * b.chunk(),
                b.chunk() * sizeof(float));
  }
}

graph::Shape Scaled(graph::Shape shape, int axis, int64_t times) {
  shape[axis] *= times;
  return shape;
}

}  // namespace

absl::Status AllGatherAxis(comm::Communicator& comm, const float* local,
                           const graph::Shape& local_shape, int axis, float* out) {
  const int p = comm.size();
  TS_ASSIGN_OR_RETURN(Blocks b, BlocksOf(Scaled(local_shape, axis, p), axis, p));
  std::vector<float> gathered(b.size() * p);
  TS_RETURN_IF_ERROR(comm.AllGather(comm::ConstDataView(local, b.size(), comm::DType::kFloat32),
                                    absl::Span<float>(gathered)));
  for (int s = 0; s < p; ++s) Unpack(b, gathered.data() + s * b.size(), s, out);
  return absl::OkStatus();
}

absl::Status ReduceScatterAxis(comm::Communicator& comm, const float* full,
                               const graph::Shape& full_shape, int axis, float* out) {
  const int p = comm.size();
  TS_ASSIGN_OR_RETURN(Blocks b, BlocksOf(full_shape, axis, p));
  std::vector<float> packed(b.size() * p);
  for (int s = 0; s < p; ++s) Pack(b, full, s, packed.data() + s * b.size());
  return comm.ReduceScatter(absl::Span<const float>(packed),
                            comm::DataView(out, b.size(), comm::DType::kFloat32),
                            comm::ReduceOp::kSum);
}

absl::Status AllToAllAxis(comm::Communicator& comm, const float* in, const graph::Shape& in_shape,
                          int split_axis, int concat_axis, float* out) {
  const int p = comm.size(), r = comm.rank();
  TS_ASSIGN_OR_RETURN(Blocks from, BlocksOf(in_shape, split_axis, p));
  graph::Shape out_shape = in_shape;
  out_shape[split_axis] /= p;
  out_shape[concat_axis] *= p;
  TS_ASSIGN_OR_RETURN(Blocks to, BlocksOf(out_shape, concat_axis, p));
  std::vector<float> send(from.size()), recv(from.size());
  Pack(from, in, r, send.data());  // my own block stays here
  Unpack(to, send.data(), r, out);
  constexpr int kTag = 7;
  for (int k = 1; k < p; ++k) {
    const int dst = (r + k) % p, src = (r - k + p) % p;
    Pack(from, in, dst, send.data());
    comm::CommHandle sent = comm.SendAsync(absl::Span<const float>(send), dst, kTag);
    absl::Status received = comm.Recv(absl::Span<float>(recv), src, kTag);
    absl::Status delivered = sent.Wait();
    TS_RETURN_IF_ERROR(received);
    TS_RETURN_IF_ERROR(delivered);
    Unpack(to, recv.data(), src, out);
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
