// An OCR corpus on disk: a TSV of `image<TAB>text` lines (UTF-8), image paths relative to the
// TSV's folder, and the character set its labels use.
//
//   TS_ASSIGN_OR_RETURN(LineCorpus train, LineCorpus::Open("data/ocr/train.tsv"));
//   TS_ASSIGN_OR_RETURN(Charset chars, Charset::FromTexts(train));   // or Charset::FromFile
//   TS_ASSIGN_OR_RETURN(std::vector<int64_t> labels, chars.Labels("Hello"));  // 1..size()
//   std::string text = chars.Text(labels);                                 // "Hello"
//
// CTC class 0 is the blank; class k (1..size()) is the k-th character of the set, in code-point
// order. Open checks every line (a tab, a path, a text) and keeps paths and texts in memory; the
// images are read when a batch needs them (ocr_corpus_data_source.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::jobs::ocr {

struct LineExample {
  std::string image;  // the path, resolved against the TSV's folder
  std::string name;   // the path as the TSV gives it
  std::string text;   // UTF-8, not empty
  int64_t line = 0;   // in the TSV, 1-based
};

class LineCorpus {
 public:
  // InvalidArgument naming the file and line for a line without exactly one tab, an empty image
  // path or text, or text that is not UTF-8; naming the file when it is unreadable or empty.
  static absl::StatusOr<LineCorpus> Open(const std::string& tsv);

  int64_t size() const { return static_cast<int64_t>(examples_.size()); }
  const LineExample& at(int64_t i) const { return examples_[i]; }
  const std::string& name() const { return name_; }
  LineCorpus Subset(const std::vector<int64_t>& indices, const std::string& name) const;

 private:
  std::string name_;
  std::vector<LineExample> examples_;
};

class Charset {
 public:
  // Every character the corpus's texts use.
  static absl::StatusOr<Charset> FromTexts(const LineCorpus& corpus);
  // The characters of a UTF-8 file (line ends are not characters; a space is one); InvalidArgument
  // naming the file when it is unreadable, not UTF-8 or empty.
  static absl::StatusOr<Charset> FromFile(const std::string& path);

  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  // InvalidArgument naming `where` (e.g. "test.tsv:12") and the character when one is not in
  // the set, so that a label the model cannot emit never reaches training.
  absl::StatusOr<std::vector<int64_t>> Labels(const std::string& text,
                                              const std::string& where) const;
  // The text of labels 1..size() (others are left out).
  std::string Text(const std::vector<int64_t>& labels) const;
  std::string Describe() const;  // the set, as UTF-8

 private:
  std::u32string chars_;  // sorted, distinct
};

}  // namespace tessera::jobs::ocr
