// Parallel text on disk for the NMT job: a TSV with one `source<TAB>target` pair per line, or two
// files with one sentence per line ("train.en,train.es"). UTF-8; a final newline, CRLF line ends
// and empty lines are accepted (empty lines are skipped, but count in line numbers).
//
//   TS_ASSIGN_OR_RETURN(ParallelCorpus c, ParallelCorpus::Open("data/train.tsv"));
//   c.size();                                       // pairs
//   TS_ASSIGN_OR_RETURN(SentencePair p, c.Read(7));  // the 8th pair, read from disk
//
// Open scans the files once, checks every line and keeps only where each pair starts, so a
// worker then reads just the pairs of its rows (Read seeks; it is safe from several threads).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::jobs::nmt {

struct SentencePair {
  std::string source, target;
};

class ParallelCorpus {
 public:
  // InvalidArgument naming the file and line for a line without exactly one tab, an empty source
  // or target, text that is not UTF-8, files of different line counts, or no pair at all; and
  // naming the file when it cannot be read.
  static absl::StatusOr<ParallelCorpus> Open(const std::string& spec);

  int64_t size() const { return static_cast<int64_t>(pairs_.size()); }
  const std::string& name() const { return name_; }
  // DataLoss naming the file when it changed since Open.
  absl::StatusOr<SentencePair> Read(int64_t i) const;
  // The pairs at `indices` (each in [0, size())), in that order, as a corpus of their own
  // named `name` (a held-out part of a training file).
  ParallelCorpus Subset(const std::vector<int64_t>& indices, const std::string& name) const;

  struct File;
  struct Span {
    int64_t offset = 0, length = 0;
  };
  struct Pair {
    Span source, target;
  };

 private:
  std::string name_;
  std::shared_ptr<const File> source_file_, target_file_;  // the same file for a TSV
  std::vector<Pair> pairs_;
};

}  // namespace tessera::jobs::nmt
