// NodeKernel's helper (node_kernel.h).
#include "tessera/exec/node_kernel.h"

#include "absl/strings/str_cat.h"

namespace tessera::exec {

absl::Status RequireHostMemory(const graph::Node& node, const Backend& backend) {
  if (backend.host_memory()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "node '", node.name, "' (", graph::OpName(node.kind), ") is a distributed layer, whose "
      "collectives stage its operands in host memory; the ", backend.name(),
      " back-end keeps them on the device. Train this plan on --device cpu, or plan it "
      "data-parallel"));
}

}  // namespace tessera::exec
