#include "tessera/tools/cli/arg_parser.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"
#include "tessera/tools/cli/did_you_mean.h"

namespace tessera::tools {
namespace {

constexpr size_t kHelpWidth = 100;   // --help fits 100 columns
constexpr size_t kHelpColumn = 26;   // where an entry's text starts
constexpr char kGlue = '\x1f';       // a space WrapText does not break at

// "  LEFT    text", the text wrapped to kHelpWidth and indented to kHelpColumn; a LEFT too wide
// for its column puts the text on the next line.
void AppendHelpEntry(std::string& text, absl::string_view left, absl::string_view help) {
  std::string line = absl::StrCat("  ", left);
  if (line.size() + 2 > kHelpColumn) {
    absl::StrAppend(&text, line, "\n");
    line.clear();
  }
  line.resize(kHelpColumn, ' ');
  std::string wrapped = base::WrapText(help, kHelpWidth, kHelpColumn);
  std::replace(wrapped.begin(), wrapped.end(), kGlue, ' ');
  absl::StrAppend(&text, line, wrapped, "\n");
}

}  // namespace

ArgParser::OptionRef& ArgParser::OptionRef::Default(std::string text) {
  parser_->options_[index_].default_text = std::move(text);
  return *this;
}

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

ArgParser::OptionRef ArgParser::Add(Option option) {
  options_.push_back(std::move(option));
  return OptionRef(this, options_.size() - 1);
}

void ArgParser::AddPositional(std::string name, std::string help, std::string* out) {
  positionals_.push_back({std::move(name), std::move(help), out});
}

ArgParser::OptionRef ArgParser::AddString(std::string flag, std::string metavar,
                                          std::string help, std::string* out) {
  Option o{std::move(flag), std::move(metavar), std::move(help), *out, nullptr};
  o.set = [out](absl::string_view v) {
    *out = std::string(v);
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddStringList(std::string flag, std::string metavar,
                                              std::string help, std::vector<std::string>* out) {
  Option o{std::move(flag), std::move(metavar), std::move(help), "", nullptr};
  o.set = [out](absl::string_view v) {
    for (absl::string_view part : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      out->emplace_back(part);
    }
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddInt(std::string flag, std::string metavar, std::string help,
                                       int64_t* out, int64_t min_value) {
  // Below the minimum, the initial value is a placeholder the command resolves after parsing.
  Option o{flag, std::move(metavar), std::move(help),
           *out < min_value ? "" : absl::StrCat(*out), nullptr};
  o.set = [out, min_value, flag](absl::string_view v) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(v, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " takes a whole number, got '", v, "'"));
    }
    if (value < min_value) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " must be at least ", min_value, ", got ", value));
    }
    *out = value;
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddPositiveNumber(std::string flag, std::string metavar,
                                                  std::string help, double* out) {
  Option o{flag, std::move(metavar), std::move(help), *out > 0 ? absl::StrCat(*out) : "",
           nullptr};
  o.set = [out, flag](absl::string_view v) {
    double value = 0;
    if (!absl::SimpleAtod(v, &value) || !std::isfinite(value) || value <= 0 || value > 1e18) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " takes a number above 0, got '", v, "'"));
    }
    *out = value;
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddNumber(std::string flag, std::string metavar,
                                          std::string help, double* out, double min_value,
                                          double max_value) {
  Option o{flag, std::move(metavar), std::move(help), absl::StrCat(*out), nullptr};
  o.set = [out, flag, min_value, max_value](absl::string_view v) {
    double value = 0;
    if (!absl::SimpleAtod(v, &value) || !std::isfinite(value) || value < min_value ||
        value > max_value) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " takes a number from ", min_value,
                                                     " to ", max_value, ", got '", v, "'"));
    }
    *out = value;
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddByteSize(std::string flag, std::string metavar,
                                            std::string help, int64_t* out) {
  Option o{flag, std::move(metavar), std::move(help), *out == 0 ? "" : base::HumanBytes(*out),
           nullptr};
  o.set = [out, flag](absl::string_view v) {
    absl::StatusOr<int64_t> bytes = base::ParseByteSize(v);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", bytes.status().message()));
    }
    if (*bytes <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " takes a size above 0, got '", v, "'"));
    }
    *out = *bytes;
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddChoice(std::string flag, std::vector<std::string> choices,
                                          std::string help, std::string* out) {
  const std::string metavar = absl::StrJoin(choices, "|");
  Option o{flag, metavar, std::move(help), *out, nullptr};
  o.set = [out, choices, flag](absl::string_view v) {
    if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " must be one of ",
                                                     absl::StrJoin(choices, ", "), "; got '", v,
                                                     "'", SuggestionText(v, choices)));
    }
    *out = std::string(v);
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

ArgParser::OptionRef ArgParser::AddFlag(std::string flag, std::string help, bool* out) {
  Option o{std::move(flag), "", std::move(help), "", nullptr};
  o.set = [out](absl::string_view) {
    *out = true;
    return absl::OkStatus();
  };
  return Add(std::move(o));
}

const ArgParser::Option* ArgParser::FindOption(absl::string_view flag) const {
  for (const Option& o : options_) {
    if (o.flag == flag) return &o;
  }
  return nullptr;
}

absl::Status ArgParser::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat(command_, ": ", message, " (see '", command_, " --help')"));
}

absl::Status ArgParser::Parse(const std::vector<std::string>& args) {
  size_t next_positional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help_requested_ = true;
      return absl::OkStatus();
    }
    if (arg.size() > 1 && arg[0] == '-' && !(arg.size() > 1 && isdigit(arg[1]))) {
      const size_t eq = arg.find('=');
      const std::string flag = arg.substr(0, eq);
      const Option* o = FindOption(flag);
      if (o == nullptr) {
        std::vector<std::string> flags = also_suggested_;
        flags.push_back("--help");
        for (const Option& known : options_) flags.push_back(known.flag);
        return Error(absl::StrCat("unknown option '", flag, "'", SuggestionText(flag, flags)));
      }
      std::string value;
      if (o->metavar.empty()) {
        if (eq != std::string::npos) return Error(absl::StrCat(flag, " takes no value"));
      } else if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Error(absl::StrCat(flag, " needs a value (", o->metavar, ")"));
      }
      absl::Status s = o->set(value);
      if (!s.ok()) return Error(s.message());
      given_.insert(flag);
      continue;
    }
    if (next_positional >= positionals_.size()) {
      return Error(absl::StrCat("unexpected argument '", arg, "'"));
    }
    *positionals_[next_positional++].out = arg;
  }
  if (next_positional < positionals_.size()) {
    return Error(absl::StrCat("missing ", positionals_[next_positional].name));
  }
  return absl::OkStatus();
}

std::optional<int> ArgParser::ParseOrExitCode(const std::vector<std::string>& args,
                                              std::ostream& out, std::ostream& err) {
  if (absl::Status s = Parse(args); !s.ok()) {
    err << s.message() << "\n";
    return 2;
  }
  if (help_requested_) {
    out << Help();
    return 0;
  }
  return std::nullopt;
}

std::string ArgParser::Help() const {
  std::string usage = absl::StrCat("usage: ", command_);
  for (const Positional& p : positionals_) absl::StrAppend(&usage, " ", p.name);
  if (!options_.empty()) absl::StrAppend(&usage, " [options]");
  std::string text = absl::StrCat(usage, "\n\n", summary_, "\n");
  if (!positionals_.empty()) absl::StrAppend(&text, "\narguments:\n");
  for (const Positional& p : positionals_) AppendHelpEntry(text, p.name, p.help);
  absl::StrAppend(&text, "\noptions:\n");
  for (const Option& o : options_) {
    std::string help = o.help;
    // kGlue keeps "(default:" on the line of the default's first word.
    if (!o.default_text.empty()) {
      absl::StrAppend(&help, " (default:", std::string(1, kGlue), o.default_text, ")");
    }
    AppendHelpEntry(text, o.metavar.empty() ? o.flag : absl::StrCat(o.flag, " ", o.metavar),
                    help);
  }
  AppendHelpEntry(text, "-h, --help", "show this help");
  if (!epilog_.empty()) absl::StrAppend(&text, "\n", epilog_, "\n");
  return text;
}

}  // namespace tessera::tools
