// `tessera recommend MODEL --samples N [--epochs E] [--max-hours H] [--max-cost C]
//  [--cluster NAME...] [--batch-per-device B] [--max-devices M] [--optimizer ...]
//  [--format table|json] [--inputs NAMES] [--dim NAME=N]`: predicted step time,
// time to train and cost for every cluster and device count, and the choice
// (partitioner/recommend.h gives the rules; docs/plan-format.md the output).
//
//   std::ostringstream out, err;
//   int code = RunRecommend({"zoo:resnet50", "--samples", "1281167", "--epochs", "90",
//                            "--max-hours", "24", "--format", "json"}, out, err);
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tessera::tools {

// Runs the subcommand; `args` exclude "tessera recommend". Returns the exit code
// (0 ok, also when no option meets the limits; 1 model/cluster error; 2 usage error).
int RunRecommend(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools
