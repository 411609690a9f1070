// `tessera plan MODEL --devices N --cluster NAME|FILE [--batch B]
//  [--optimizer sgd|momentum|adam] [--strategy auto|data|model|optimal]
//  [--format table|json|html] [-o FILE] [--trace FILE] [--inputs NAMES] [--dim NAME=N]`:
// plans the model for the cluster and writes the plan (docs/plan-format.md).
//
//   std::ostringstream out, err;
//   int code = RunPlan({"zoo:alexnet", "--devices", "64", "--cluster", "v100-vpc32",
//                       "--batch", "2048", "--format", "html", "-o", "plan.html"}, out, err);
//
// Files (-o, --trace) are written only after planning succeeded, each through a
// temporary file renamed into place: on any error nothing is written.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace tessera::tools {

// Runs the subcommand; `args` exclude "tessera plan". Returns the exit code
// (0 ok, 1 model/cluster/plan/file error, 2 usage error).
int RunPlan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools
