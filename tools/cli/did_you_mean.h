// "Did you mean ...?" for a mistyped subcommand, option or choice: the one candidate a few
// edits away (a swap of two neighbouring letters counts as one edit), or the only candidate
// the word begins.
//
//   DidYouMean("plna", {"inspect", "plan", "recommend"})       // "plan"
//   DidYouMean("--worker", {"--workers", "--comm"})            // "--workers"
//   DidYouMean("--bogus", {"--workers", "--comm"})             // nullopt: nothing close
//   SuggestionText("--worker", flags)                          // "; did you mean '--workers'?"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tessera::tools {

// Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`.
int EditDistance(absl::string_view a, absl::string_view b);

// The closest candidate when it is close: at most 1 edit for words of up to 4 letters (not
// counting leading dashes), 2 for longer ones, and fewer edits than the word has letters; a tie
// between two candidates suggests neither. Failing that, the one candidate that `word` (3 or
// more letters) begins.
std::optional<std::string> DidYouMean(absl::string_view word,
                                      const std::vector<std::string>& candidates);

// "; did you mean 'X'?" or "" when nothing is close, to append to an error message.
std::string SuggestionText(absl::string_view word, const std::vector<std::string>& candidates);

}  // namespace tessera::tools
