// The NMT example's tokenizer: words <-> ids, and sentences <-> fixed-length id rows.
//
//   TS_ASSIGN_OR_RETURN(Vocabulary vocab, Vocabulary::Create(GermanLexicon()));
//   TS_ASSIGN_OR_RETURN(std::vector<int64_t> row,
//                       vocab.Encode(words, {.length = 20, .bos = true}));  // <bos> w1 w2 <pad>...
//   std::vector<std::string> back = vocab.Decode(row);                     // w1 w2
//
// Ids 0..3 are the specials <pad>, <bos>, <eos>, <unk>; the words follow from 4 in the order
// given. Padding is id 0, so a loss with ignore_index 0 skips it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessera::jobs::nmt {

struct EncodeOptions {
  int64_t length = 20;    // the row's length; shorter sentences are padded with <pad>
  bool bos = false;       // <bos> before the words
  bool eos = false;       // <eos> after the words
  bool reverse = false;   // the words (not <bos>/<eos>) in reverse order
  bool pad_left = false;  // padding before the sentence instead of after it
};

class Vocabulary {
 public:
  static constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;
  static constexpr int64_t kNumSpecial = 4;

  // InvalidArgument naming the word when a word is empty, repeated or a special's name
  // ("<pad>", ...), or when the vocabulary would have more than `max_size` ids.
  static absl::StatusOr<Vocabulary> Create(absl::Span<const std::string> words,
                                           int64_t max_size = 2000);

  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  // kUnk for a word not in the vocabulary.
  int64_t Id(absl::string_view word) const;
  // "<unk>" for an id outside [0, size()).
  const std::string& Word(int64_t id) const;

  // Exactly options.length ids. InvalidArgument (with the sentence and the length) when the
  // words with <bos>/<eos> do not fit. Unknown words become <unk>.
  absl::StatusOr<std::vector<int64_t>> Encode(absl::Span<const std::string> words,
                                              const EncodeOptions& options) const;
  // The words of `ids` up to the first <eos>: <pad> and <bos> are skipped, any other id is
  // its word (<unk> for an unknown id).
  std::vector<std::string> Decode(absl::Span<const int64_t> ids) const;

 private:
  std::vector<std::string> words_;
  absl::flat_hash_map<std::string, int64_t> ids_;
};

}  // namespace tessera::jobs::nmt
