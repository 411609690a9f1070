// `tessera memory MODEL [--devices N] [--cluster NAME|FILE] [--batch B] [--optimizer ...]
// [--strategy ...] [--time-limit S] [--top K] [--format table|json] [--export-buffers FILE]`:
// plans the model (as `tessera plan` does), takes one device's transient values (activations,
// their gradients, saved state, gathered inputs) from the training step's lifetimes, plans
// their arena offsets, checks the plan, and prints per device the arena, the lower bound, the
// size without reuse, the persistent bytes, and the largest tensors live at the peak
// (docs/memory-command.md).
//
//   std::ostringstream out, err;
//   int code = RunMemoryModel({"zoo:resnet50", "--devices", "8", "--batch", "256"}, out, err);
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tessera::tools {

// `args` exclude "tessera memory". Exit codes: 0 ok, 1 model/cluster/plan/file error, 2 usage
// error, 3 internal error (the arena failed the independent checker).
int RunMemoryModel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools
