// Runs a `tessera` subcommand in-process and captures its exit code and output.
//
//   CommandResult r = RunCommand(RunInspect, {"zoo:alexnet", "--format", "json"});
//   EXPECT_EQ(r.code, 0) << r.err;
#pragma once

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace tessera::tools {

struct CommandResult {
  int code;
  std::string out;
  std::string err;
};

using CommandFn = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

inline CommandResult RunCommand(CommandFn command, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace tessera::tools
