// Command-line parsing for the `tessera` subcommands: typed options, positional
// arguments, and a generated --help.
//
//   ArgParser p("tessera inspect", "Per-op estimates of a model.");
//   std::string model, format = "table";
//   int64_t batch = 0;
//   p.AddPositional("MODEL", "an .onnx file, a graph .json file or zoo:NAME", &model);
//   p.AddInt("--batch", "B", "global batch", &batch, /*min=*/1).Default("the model's");
//   p.AddChoice("--format", {"table", "json"}, "output format", &format);  // (default: table)
//   absl::Status s = p.Parse(args);       // args without the program/command name
//   if (p.help_requested()) std::cout << p.Help();
//
// Defaults: --help prints each option's "(default: X)" once, and the help text itself never
// states one. X is the variable's initial value when that is a value the option accepts (a
// non-empty string or choice, an int at or above its minimum, a number above 0); a placeholder
// resolved after parsing (0, -1, "") prints nothing unless the option says what it stands for
// with .Default("..."). Flags and lists print none. An unknown option or choice value gets a
// "did you mean" suggestion when one is close (did_you_mean.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tessera::tools {

class ArgParser {
 public:
  // What the Add* calls return: states the default --help shows, replacing the variable's
  // initial value (e.g. "the model's", "one per core", "every preset").
  class OptionRef {
   public:
    OptionRef& Default(std::string text);

   private:
    friend class ArgParser;
    OptionRef(ArgParser* parser, size_t index) : parser_(parser), index_(index) {}
    ArgParser* parser_;
    size_t index_;
  };

  ArgParser(std::string command, std::string summary);

  void AddPositional(std::string name, std::string help, std::string* out);
  OptionRef AddString(std::string flag, std::string metavar, std::string help, std::string* out);
  OptionRef AddStringList(std::string flag, std::string metavar, std::string help,
                          std::vector<std::string>* out);  // comma-separated and/or repeated
  OptionRef AddInt(std::string flag, std::string metavar, std::string help, int64_t* out,
                   int64_t min_value);
  // A finite decimal number above 0 (and at most 1e18), e.g. seconds, hours, USD.
  OptionRef AddPositiveNumber(std::string flag, std::string metavar, std::string help,
                              double* out);
  // A finite decimal number in [min_value, max_value], e.g. a weight that may be 0.
  OptionRef AddNumber(std::string flag, std::string metavar, std::string help, double* out,
                      double min_value, double max_value);
  // A size in bytes above 0 with an optional unit, e.g. 4MiB (base::ParseByteSize).
  OptionRef AddByteSize(std::string flag, std::string metavar, std::string help, int64_t* out);
  OptionRef AddChoice(std::string flag, std::vector<std::string> choices, std::string help,
                      std::string* out);
  OptionRef AddFlag(std::string flag, std::string help, bool* out);
  // Options of another form of the command, offered as "did you mean" for an unknown option
  // (`tessera memory MODEL` offers --buffers, which selects its list form).
  void SuggestAlso(std::vector<std::string> flags) { also_suggested_ = std::move(flags); }
  // Free text appended to --help (examples, notes).
  void SetEpilog(std::string epilog) { epilog_ = std::move(epilog); }

  // Parses `args`. -h/--help sets help_requested() and stops parsing. Errors name
  // the offending argument and point at --help.
  absl::Status Parse(const std::vector<std::string>& args);
  bool help_requested() const { return help_requested_; }
  // Whether the last Parse saw `flag` on the command line (not just its default).
  bool Given(absl::string_view flag) const { return given_.count(flag) > 0; }
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
  OptionRef Add(Option option);
  const Option* FindOption(absl::string_view flag) const;
  absl::Status Error(absl::string_view message) const;

  std::string command_;
  std::string summary_;
  std::string epilog_;
  std::vector<Option> options_;
  std::vector<Positional> positionals_;
  std::vector<std::string> also_suggested_;
  bool help_requested_ = false;
  std::set<std::string, std::less<>> given_;  // flags seen by Parse
};

}  // namespace tessera::tools
