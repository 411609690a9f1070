// Axis collectives (axis_collectives.h): blocks along an axis packed into contiguous buffers
// for the communicator's collectives, and unpacked into place.
#include "tessera/exec/axis_collectives.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/dtype.h"

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

// `floats` of staging memory from `scratch` (or `temp` when there is none).
float* Stage(std::vector<float>* scratch, std::vector<float>& temp, int64_t floats) {
  std::vector<float>& v = scratch != nullptr ? *scratch : temp;
  if (static_cast<int64_t>(v.size()) < floats) v.resize(floats);
  return v.data();
}

comm::ConstDataView View(const float* data, int64_t floats) {
  return comm::ConstDataView(data, floats, comm::DType::kFloat32);
}
comm::DataView View(float* data, int64_t floats) {
  return comm::DataView(data, floats, comm::DType::kFloat32);
}

}  // namespace

absl::Status AllGatherAxis(comm::Communicator& comm, const float* local,
                           const graph::Shape& local_shape, int axis, float* out,
                           std::vector<float>* scratch) {
  const int p = comm.size();
  TS_ASSIGN_OR_RETURN(Blocks b, BlocksOf(Scaled(local_shape, axis, p), axis, p));
  if (b.outer == 1) return comm.AllGather(View(local, b.size()), View(out, b.size() * p));
  std::vector<float> temp;
  float* gathered = Stage(scratch, temp, b.size() * p);
  TS_RETURN_IF_ERROR(comm.AllGather(View(local, b.size()), View(gathered, b.size() * p)));
  for (int s = 0; s < p; ++s) Unpack(b, gathered + s * b.size(), s, out);
  return absl::OkStatus();
}

int64_t StoredBytes(graph::DType dtype) {
  return graph::IsFloating(dtype) ? sizeof(float) : graph::DTypeSize(dtype);
}

absl::Status AllGatherAxis(comm::Communicator& comm, const void* local, graph::DType dtype,
                           const graph::Shape& local_shape, int axis, void* out,
                           std::vector<float>* scratch) {
  const int64_t bytes = StoredBytes(dtype);
  if (bytes % sizeof(float) != 0) {
    return absl::InternalError(absl::StrCat("an all-gather along an axis moves 4- or 8-byte "
                                            "elements, not ", bytes, "-byte ones"));
  }
  graph::Shape words = local_shape;  // an 8-byte element is two words on a new last axis
  if (bytes > 4) words.push_back(bytes / 4);
  return AllGatherAxis(comm, static_cast<const float*>(local), words, axis,
                       static_cast<float*>(out), scratch);
}

absl::Status ReduceScatterAxis(comm::Communicator& comm, const float* full,
                               const graph::Shape& full_shape, int axis, float* out,
                               std::vector<float>* scratch) {
  const int p = comm.size();
  TS_ASSIGN_OR_RETURN(Blocks b, BlocksOf(full_shape, axis, p));
  const float* packed = full;
  std::vector<float> temp;
  if (b.outer != 1) {
    float* staged = Stage(scratch, temp, b.size() * p);
    for (int s = 0; s < p; ++s) Pack(b, full, s, staged + s * b.size());
    packed = staged;
  }
  return comm.ReduceScatter(View(packed, b.size() * p), View(out, b.size()),
                            comm::ReduceOp::kSum);
}

absl::Status AllToAllAxis(comm::Communicator& comm, const float* in, const graph::Shape& in_shape,
                          int split_axis, int concat_axis, float* out,
                          std::vector<float>* scratch) {
  const int p = comm.size();
  TS_ASSIGN_OR_RETURN(Blocks from, BlocksOf(in_shape, split_axis, p));
  graph::Shape out_shape = in_shape;
  out_shape[split_axis] /= p;
  out_shape[concat_axis] *= p;
  TS_ASSIGN_OR_RETURN(Blocks to, BlocksOf(out_shape, concat_axis, p));
  const int64_t total = from.size() * p;
  const bool pack = from.outer != 1, unpack = to.outer != 1;
  std::vector<float> temp;
  float* staged = Stage(scratch, temp, total * (pack + unpack));
  const float* send = in;
  if (pack) {
    for (int s = 0; s < p; ++s) Pack(from, in, s, staged + s * from.size());
    send = staged;
  }
  float* recv = unpack ? staged + total * pack : out;
  TS_RETURN_IF_ERROR(comm.AllToAll(View(send, total), View(recv, total)));
  if (unpack) {
    for (int s = 0; s < p; ++s) Unpack(to, recv + s * to.size(), s, out);
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
