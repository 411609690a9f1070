// Command-line parsing for the `tessera` subcommands: typed options, positional
// arguments, and a generated --help.
//
//   ArgParser p("tessera inspect", "Per-op estimates of a model.");
//   std::string model, format = "table";
//   int64_t batch = 0;
//   p.AddPositional("MODEL", "an .onnx file, a graph .json file or zoo:NAME", &model);
//   p.AddInt("--batch", "B", "global batch (default: the model's)", &batch, /*min=*/1);
//   p.AddChoice("--format", {"table", "json"}, "output format", &format);
//   absl::Status s = p.Parse(args);       // args without the program/command name
//   if (p.help_requested()) std::cout << p.Help();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::tools {

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  void AddPositional(std::string name, std::string help, std::string* out);
  void AddString(std::string flag, std::string metavar, std::string help, std::string* out);
  void AddStringList(std::string flag, std::string metavar, std::string help,
                     std::vector<std::string>* out);  // comma-separated and/or repeated
  void AddInt(std::string flag, std::string metavar, std::string help, int64_t* out,
              int64_t min_value);
  // A finite decimal number above 0 (and at most 1e18), e.g. seconds, hours, USD.
  void AddPositiveNumber(std::string flag, std::string metavar, std::string help, double* out);
  // A size in bytes above 0 with an optional unit, e.g. 4MiB (base::ParseByteSize).
  void AddByteSize(std::string flag, std::string metavar, std::string help, int64_t* out);
  void AddChoice(std::string flag, std::vector<std::string> choices, std::string help,
                 std::string* out);
  void AddFlag(std::string flag, std::string help, bool* out);
  // Free text appended to --help (examples, notes).
  void SetEpilog(std::string epilog) { epilog_ = std::move(epilog); }

  // Parses `args`. -h/--help sets help_requested() and stops parsing. Errors name
  // the offending argument and point at --help.
  absl::Status Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_requested_; }
  // Parse() for a subcommand: on a usage error writes it to `err` and returns 2;
  // on --help writes Help() to `out` and returns 0; nullopt when the command
  // should go on.
  std::optional<int> ParseOrExitCode(const std::vector<std::string>& args, std::ostream& out,
                                     std::ostream& err);
  std::string Help() const;

 private:
  struct Option {
    std::string flag;
    std::string metavar;  // empty for boolean flags
    std::string help;
    std::string default_text;
    std::function<absl::Status(absl::string_view)> set;
  };
  struct Positional {
    std::string name;
    std::string help;
    std::string* out;
  };
  const Option* FindOption(absl::string_view flag) const;
  absl::Status Error(absl::string_view message) const;

  std::string command_;
  std::string summary_;
  std::string epilog_;
  std::vector<Option> options_;
  std::vector<Positional> positionals_;
  bool help_requested_ = false;
};

}  // namespace tessera::tools
