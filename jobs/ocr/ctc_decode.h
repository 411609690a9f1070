// Greedy CTC decoding of the ocr model's log_probs and the job's accuracy measures.
//
//   graph::Graph g = *graph::zoo::BuildZooModel("ocr", 64);
//   TS_ASSIGN_OR_RETURN(std::string lp, AddLogProbsOutput(g));    // before TrainingProgram::Create
//   ...  program->RunForward(); absl::Span<const float> x = program->Output(lp);
//   TS_ASSIGN_OR_RETURN(auto texts, GreedyCtcDecode(x, /*frames=*/32, /*batch=*/64, kClasses));
//   OcrAccuracy acc;
//   for (size_t i = 0; i < texts.size(); ++i) acc.Add(references[i], texts[i]);
//   acc.CharAccuracy();   // 1 - (summed edit distance) / (summed reference length)
//   acc.LineAccuracy();   // exact matches / lines
//
// log_probs is [T, B, C] row-major (frame-major, as CtcLoss reads it), class 0 the blank and
// class k the character CharOfLabel(k) (bitmap_font.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/graph/graph.h"

namespace tessera::jobs::ocr {

// Per sample: the argmax class of each frame (the first on ties), repeats collapsed, blanks
// dropped; with `lengths` ([batch], each in [0, frames]) sample b reads its first lengths[b]
// frames only (CTC's input_lengths). InvalidArgument naming the sizes when log_probs.size() !=
// frames * batch * classes, a size is not positive or `lengths` is given and out of range.
absl::StatusOr<std::vector<std::vector<int64_t>>> GreedyCtcLabels(
    absl::Span<const float> log_probs, int64_t frames, int64_t batch, int64_t classes,
    int64_t blank = 0, absl::Span<const int64_t> lengths = {});
// The same, mapped to text with CharOfLabel (blank 0); a class with no character is dropped.
absl::StatusOr<std::vector<std::string>> GreedyCtcDecode(absl::Span<const float> log_probs,
                                                         int64_t frames, int64_t batch,
                                                         int64_t classes);

// Levenshtein distance: insertions, deletions and substitutions cost 1.
int64_t EditDistance(absl::string_view a, absl::string_view b);

// Accuracy summed over a split.
struct OcrAccuracy {
  int64_t reference_chars = 0;  // summed reference lengths
  int64_t char_errors = 0;      // summed edit distances
  int64_t lines = 0;
  int64_t lines_correct = 0;    // exact matches

  void Add(absl::string_view reference, absl::string_view decoded);
  // 1 - char_errors / reference_chars, floored at 0 (0 with no reference characters).
  double CharAccuracy() const;
  double LineAccuracy() const;  // lines_correct / lines (0 with no lines)
};

// Makes the log_probs the graph's CtcLoss reads a graph output as well (after the loss, which
// stays the first output), so TrainingProgram copies it out after RunForward/RunStep; returns
// its tensor name for TrainingProgram::Output. Idempotent. InvalidArgument naming the graph
// when it has no CtcLoss.
absl::StatusOr<std::string> AddLogProbsOutput(graph::Graph& graph);

}  // namespace tessera::jobs::ocr
