#include "tessera/tools/cli/did_you_mean.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tessera::tools {
namespace {

size_t Letters(absl::string_view word) {
  const size_t dashes = std::min(word.find_first_not_of('-'), word.size());
  return word.size() - dashes;
}

}  // namespace

int EditDistance(absl::string_view a, absl::string_view b) {
  // Optimal string alignment: Levenshtein's table plus a swap of two neighbouring letters.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int replace = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string> DidYouMean(absl::string_view word,
                                      const std::vector<std::string>& candidates) {
  const size_t letters = Letters(word);
  if (letters == 0) return std::nullopt;
  const int allowed = std::min<int>(letters <= 4 ? 1 : 2, static_cast<int>(letters) - 1);
  int best = allowed + 1;
  const std::string* closest = nullptr;
  bool tie = false;
  for (const std::string& c : candidates) {
    const int d = EditDistance(word, c);
    if (d < best) {
      best = d;
      closest = &c;
      tie = false;
    } else if (d == best && closest != nullptr) {
      tie = true;
    }
  }
  if (closest != nullptr && !tie) return *closest;
  if (letters < 3) return std::nullopt;
  const std::string* prefixed = nullptr;
  for (const std::string& c : candidates) {
    if (!absl::StartsWith(c, word) || c == word) continue;
    if (prefixed != nullptr) return std::nullopt;
    prefixed = &c;
  }
  if (prefixed == nullptr) return std::nullopt;
  return *prefixed;
}

std::string SuggestionText(absl::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> match = DidYouMean(word, candidates);
  return match ? absl::StrCat("; did you mean '", *match, "'?") : "";
}

}  // namespace tessera::tools
