// Layout transitions (layout_transition.h) on the axis collectives (axis_collectives.h).
#include "tessera/exec/layout_transition.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/axis_collectives.h"
#include "tessera/graph/dtype.h"

namespace tessera::exec {
namespace {

using partitioner::Layout;

// Block `block` of `parts` along `axis` of `whole` (shape `shape`) into `out`.
void SliceBlock(const void* whole, const graph::Shape& shape, int64_t element_bytes, int axis,
                int block, int parts, void* out) {
  int64_t outer = 1, inner = element_bytes;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t count = shape[axis] / parts, chunk = count * inner;
  const auto* src = static_cast<const std::byte*>(whole);
  auto* dst = static_cast<std::byte*>(out);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + o * chunk, src + (o * shape[axis] + block * count) * inner, chunk);
  }
}

graph::Shape WholeShape(const InputTransition& t, graph::Shape held, int ranks) {
  if (t.from_axis >= 0) held[t.from_axis] *= ranks;
  return held;
}

}  // namespace

graph::Shape ReadShape(const InputTransition& t, graph::Shape held, int ranks) {
  graph::Shape read = WholeShape(t, std::move(held), ranks);
  if (t.to_axis >= 0) read[t.to_axis] /= ranks;
  return read;
}

absl::Status TransitionForward(comm::Communicator& comm, const InputTransition& t,
                               const cpu::Tensor<float>& held, void* read,
                               std::vector<float>* scratch) {
  const int p = comm.size();
  if (t.from == Layout::kReplicated) {  // a data input held whole: the rank's block, local
    SliceBlock(held.data, held.shape, StoredBytes(held.dtype), t.to_axis, comm.rank(), p, read);
    return absl::OkStatus();
  }
  if (t.to == Layout::kReplicated) {
    return AllGatherAxis(comm, held.data, held.dtype, held.shape, t.from_axis, read, scratch);
  }
  return AllToAllAxis(comm, held.data, held.shape, t.to_axis, t.from_axis,
                      static_cast<float*>(read), scratch);
}

absl::Status TransitionBackward(comm::Communicator& comm, const InputTransition& t,
                                const float* dread, const cpu::Tensor<float>& dheld,
                                std::vector<float>* scratch) {
  const int p = comm.size();
  const graph::Shape read = ReadShape(t, dheld.shape, p);
  if (t.from == Layout::kReplicated) {
    return absl::InternalError(absl::StrCat("a replicated input has no gradient to return (",
                                            "a data input); the rank plan let one through"));
  }
  if (t.to == Layout::kReplicated) {
    if (t.partial) return ReduceScatterAxis(comm, dread, read, t.from_axis, dheld.data, scratch);
    SliceBlock(dread, read, sizeof(float), t.from_axis, comm.rank(), p, dheld.data);
    return absl::OkStatus();
  }
  return AllToAllAxis(comm, dread, read, t.from_axis, t.to_axis, dheld.data, scratch);
}

}  // namespace tessera::exec
