#include "tessera/jobs/nmt/vocabulary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::jobs::nmt {
namespace {

constexpr const char* kSpecialNames[] = {"<pad>", "<bos>", "<eos>", "<unk>"};

}  // namespace

absl::StatusOr<Vocabulary> Vocabulary::Create(absl::Span<const std::string> words,
                                              int64_t max_size) {
  Vocabulary v;
  for (const char* special : kSpecialNames) {
    v.ids_[special] = v.size();
    v.words_.push_back(special);
  }
  if (static_cast<int64_t>(words.size()) + kNumSpecial > max_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vocabulary of ", words.size(), " words plus ", kNumSpecial,
        " specials exceeds the model's ", max_size, " ids; use fewer words"));
  }
  for (const std::string& w : words) {
    if (w.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("vocabulary word ", v.size() - kNumSpecial, " is empty"));
    }
    auto [it, inserted] = v.ids_.emplace(w, v.size());
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "vocabulary word \"", w, "\" is ",
          it->second < kNumSpecial ? "a special token's name" : "listed twice"));
    }
    v.words_.push_back(w);
  }
  return v;
}

int64_t Vocabulary::Id(absl::string_view word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::Word(int64_t id) const {
  return id >= 0 && id < size() ? words_[id] : words_[kUnk];
}

absl::StatusOr<std::vector<int64_t>> Vocabulary::Encode(absl::Span<const std::string> words,
                                                        const EncodeOptions& options) const {
  const int64_t used = static_cast<int64_t>(words.size()) + options.bos + options.eos;
  if (used > options.length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sentence \"", absl::StrJoin(words, " "), "\" needs ", used,
        " ids with <bos>/<eos> but the row holds ", options.length,
        "; shorten it or raise the length"));
  }
  std::vector<int64_t> ids;
  ids.reserve(options.length);
  if (options.pad_left) ids.assign(options.length - used, kPad);
  if (options.bos) ids.push_back(kBos);
  const size_t first = ids.size();
  for (const std::string& w : words) ids.push_back(Id(w));
  if (options.reverse) std::reverse(ids.begin() + first, ids.end());
  if (options.eos) ids.push_back(kEos);
  ids.resize(options.length, kPad);
  return ids;
}

std::vector<std::string> Vocabulary::Decode(absl::Span<const int64_t> ids) const {
  std::vector<std::string> words;
  for (int64_t id : ids) {
    if (id == kEos) break;
    if (id == kPad || id == kBos) continue;
    words.push_back(Word(id));
  }
  return words;
}

}  // namespace tessera::jobs::nmt
