#include "tessera/jobs/nmt/nmt_data_source.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"

namespace tessera::jobs::nmt {
namespace {

constexpr int64_t kLongestTarget = 11;  // "sieben hundert sieben und siebzig tausend ..."

// InvalidArgument unless `name` is an integer data input of `graph` with shape `shape`.
absl::Status CheckInput(const graph::Graph& graph, const std::string& name,
                        const graph::Shape& shape) {
  std::optional<graph::TensorId> id = graph.FindTensor(name);
  if (!id.has_value() || graph.tensor(*id).role != graph::TensorRole::kInput) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph \"", graph.name(), "\" has no data input \"", name,
        "\"; the NMT data source feeds the zoo's \"nmt\" model (src_tokens, tgt_tokens, "
        "tgt_labels, tgt_lengths)"));
  }
  const graph::Tensor& t = graph.tensor(*id);
  if (graph::IsFloating(t.dtype) || t.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph \"", graph.name(), "\" input \"", name, "\" has shape [",
        absl::StrJoin(t.shape, ", "), "] and ", graph::IsFloating(t.dtype) ? "a floating" : "an integer",
        " type; the NMT data source needs integers of shape [", absl::StrJoin(shape, ", "), "]"));
  }
  return absl::OkStatus();
}

}  // namespace

NmtDataSource::NmtDataSource(const NmtDataOptions& options, Vocabulary source, Vocabulary target)
    : options_(options),
      source_vocabulary_(std::move(source)),
      target_vocabulary_(std::move(target)) {}

absl::StatusOr<std::unique_ptr<NmtDataSource>> NmtDataSource::Create(
    const NmtDataOptions& options) {
  if (options.batch < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("NMT data batch is ", options.batch, "; it must be at least 1"));
  }
  if (options.length < kLongestTarget + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NMT data length is ", options.length, "; the longest target sentence needs ",
        kLongestTarget + 1, " tokens with <bos>/<eos>"));
  }
  TS_ASSIGN_OR_RETURN(Vocabulary source, Vocabulary::Create(EnglishLexicon()));
  TS_ASSIGN_OR_RETURN(Vocabulary target, Vocabulary::Create(GermanLexicon()));
  return std::unique_ptr<NmtDataSource>(
      new NmtDataSource(options, std::move(source), std::move(target)));
}

absl::StatusOr<NmtShape> NmtInputShape(const graph::Graph& graph) {
  NmtShape shape{.batch = 32, .length = 20};
  std::optional<graph::TensorId> src = graph.FindTensor("src_tokens");
  if (src.has_value() && graph.tensor(*src).shape.size() == 2) {
    shape.batch = graph.tensor(*src).shape[0];
    shape.length = graph.tensor(*src).shape[1];
  }
  const graph::Shape rows = {shape.batch, shape.length};
  for (const char* name : {"src_tokens", "tgt_tokens", "tgt_labels"}) {
    TS_RETURN_IF_ERROR(CheckInput(graph, name, rows));
  }
  TS_RETURN_IF_ERROR(CheckInput(graph, "tgt_lengths", {shape.batch}));
  return shape;
}

namespace {

// The first `keep` of every `width` columns of a row-major [rows, width] matrix, in place.
template <typename T>
void KeepColumns(std::vector<T>& m, int64_t width, int64_t keep) {
  const int64_t rows = static_cast<int64_t>(m.size()) / width;
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(m.begin() + r * width, keep, m.begin() + r * keep);
  }
  m.resize(static_cast<size_t>(rows * keep));
}

}  // namespace

void CutToLength(exec::Batch& batch, int64_t length, int64_t keep) {
  int64_t rows = 0;
  for (const char* name : {"src_tokens", "tgt_tokens", "tgt_labels", "src_mask"}) {
    auto it = batch.values.find(name);
    if (it == batch.values.end()) continue;
    std::visit([&](auto& v) {
      rows = static_cast<int64_t>(v.size()) / length;
      KeepColumns(v, length, keep);
    }, it->second);
  }
  batch.Ints("tgt_lengths").assign(static_cast<size_t>(rows), keep);
}

int64_t LongestLabels(const exec::Batch& batch, int64_t length) {
  auto it = batch.values.find("tgt_labels");
  if (it == batch.values.end()) return 0;
  const auto* ids = std::get_if<std::vector<int64_t>>(&it->second);
  if (ids == nullptr) return 0;
  int64_t longest = 0;
  for (size_t r = 0; (r + 1) * length <= ids->size(); ++r) {
    int64_t n = length;
    while (n > longest && (*ids)[r * length + n - 1] == Vocabulary::kPad) --n;
    longest = std::max(longest, n);
  }
  return longest;
}

absl::StatusOr<std::unique_ptr<NmtDataSource>> NmtDataSource::ForGraph(const graph::Graph& graph,
                                                                        NmtDataOptions options) {
  TS_ASSIGN_OR_RETURN(const NmtShape shape, NmtInputShape(graph));
  options.batch = shape.batch;
  options.length = shape.length;
  return Create(options);
}

std::vector<Example> NmtDataSource::Examples(int64_t step) const {
  std::vector<Example> examples;
  examples.reserve(options_.batch);
  for (int64_t row = 0; row < options_.batch; ++row) {
    examples.push_back(MakeExample(options_.seed, options_.split, step * options_.batch + row));
  }
  return examples;
}

absl::Status NmtDataSource::Fill(absl::Span<const Example> examples, exec::Batch& batch) const {
  if (static_cast<int64_t>(examples.size()) != options_.batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NMT batch needs ", options_.batch, " examples, got ", examples.size()));
  }
  const int64_t n = options_.batch * options_.length;
  std::vector<int64_t>& src = batch.Ints("src_tokens");
  std::vector<int64_t>& tgt = batch.Ints("tgt_tokens");
  std::vector<int64_t>& labels = batch.Ints("tgt_labels");
  src.clear(), tgt.clear(), labels.clear();
  src.reserve(n), tgt.reserve(n), labels.reserve(n);
  const EncodeOptions source_options{.length = options_.length,
                                     .reverse = options_.source_reversed,
                                     .pad_left = options_.source_pad_left};
  for (const Example& e : examples) {
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> s, source_vocabulary_.Encode(e.source, source_options));
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> t,
                        target_vocabulary_.Encode(e.target, {.length = options_.length, .bos = true}));
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> l,
                        target_vocabulary_.Encode(e.target, {.length = options_.length, .eos = true}));
    src.insert(src.end(), s.begin(), s.end());
    tgt.insert(tgt.end(), t.begin(), t.end());
    labels.insert(labels.end(), l.begin(), l.end());
  }
  batch.Ints("tgt_lengths").assign(options_.batch, options_.length);
  return absl::OkStatus();
}

absl::Status NmtDataSource::Next(int64_t step, exec::Batch& batch) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("NMT data step ", step, " is negative"));
  }
  return Fill(Examples(step), batch);
}

}  // namespace tessera::jobs::nmt
