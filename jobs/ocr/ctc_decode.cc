#include "tessera/jobs/ocr/ctc_decode.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "tessera/jobs/ocr/bitmap_font.h"

namespace tessera::jobs::ocr {

absl::StatusOr<std::vector<std::vector<int64_t>>> GreedyCtcLabels(
    absl::Span<const float> log_probs, int64_t frames, int64_t batch, int64_t classes,
    int64_t blank, absl::Span<const int64_t> lengths) {
  if (frames < 1 || batch < 1 || classes < 1 ||
      static_cast<int64_t>(log_probs.size()) != frames * batch * classes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "greedy CTC decoding: log_probs has ", log_probs.size(), " values, expected frames (",
        frames, ") x batch (", batch, ") x classes (", classes,
        ") with each positive; pass the [T, B, C] log_probs output of the CTC model"));
  }
  const bool bad_length = std::any_of(lengths.begin(), lengths.end(),
                                      [&](int64_t l) { return l < 0 || l > frames; });
  if (!lengths.empty() && (static_cast<int64_t>(lengths.size()) != batch || bad_length)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "greedy CTC decoding: ", lengths.size(), " input lengths for a batch of ", batch,
        ", each in [0, ", frames, "] (the frames)"));
  }
  std::vector<std::vector<int64_t>> labels(batch);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t previous = blank;
    const int64_t read = lengths.empty() ? frames : lengths[b];
    for (int64_t t = 0; t < read; ++t) {
      const float* row = log_probs.data() + (t * batch + b) * classes;
      const int64_t best = std::max_element(row, row + classes) - row;
      // A label is emitted when it is not the blank and differs from the previous frame's
      // argmax; a blank between two equal labels separates them ("A-A" -> "AA").
      if (best != blank && best != previous) labels[b].push_back(best);
      previous = best;
    }
  }
  return labels;
}

absl::StatusOr<std::vector<std::string>> GreedyCtcDecode(absl::Span<const float> log_probs,
                                                         int64_t frames, int64_t batch,
                                                         int64_t classes) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> labels =
      GreedyCtcLabels(log_probs, frames, batch, classes, kBlank);
  if (!labels.ok()) return labels.status();
  std::vector<std::string> texts;
  for (const std::vector<int64_t>& sample : *labels) {
    std::string& text = texts.emplace_back();
    for (int64_t label : sample) {
      if (const char c = CharOfLabel(label); c != '\0') text.push_back(c);
    }
  }
  return texts;
}

int64_t EditDistance(absl::string_view a, absl::string_view b) {
  // One row of the dynamic-programming table: row[j] = distance(a[:i], b[:j]).
  std::vector<int64_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];  // distance(a[:i-1], b[:j-1])
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

void OcrAccuracy::Add(absl::string_view reference, absl::string_view decoded) {
  reference_chars += static_cast<int64_t>(reference.size());
  char_errors += EditDistance(reference, decoded);
  ++lines;
  if (reference == decoded) ++lines_correct;
}

double OcrAccuracy::CharAccuracy() const {
  if (reference_chars == 0) return 0.0;
  return std::max(0.0, 1.0 - static_cast<double>(char_errors) / reference_chars);
}

double OcrAccuracy::LineAccuracy() const {
  return lines == 0 ? 0.0 : static_cast<double>(lines_correct) / lines;
}

absl::StatusOr<std::string> AddLogProbsOutput(graph::Graph& graph) {
  for (graph::NodeId id = 0; id < graph.num_nodes(); ++id) {
    const graph::Node& node = graph.node(id);
    if (node.kind != graph::OpKind::kCtcLoss || node.inputs.empty()) continue;
    const graph::TensorId log_probs = node.inputs[0];
    const std::vector<graph::TensorId>& outputs = graph.outputs();
    if (std::find(outputs.begin(), outputs.end(), log_probs) == outputs.end()) {
      graph.AddOutput(log_probs);
    }
    return graph.tensor(log_probs).name;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "graph '", graph.name(), "' has no CtcLoss node, so there are no log_probs to decode; "
      "use the ocr zoo model"));
}

}  // namespace tessera::jobs::ocr
