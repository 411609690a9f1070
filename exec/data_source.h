// Where the training loop's batches come from: a source fills the data inputs of step `step`.
//
//   RandomDataSource data(graph, {.seed = 7});          // random floats and in-range integers
//   Batch batch;
//   TS_RETURN_IF_ERROR(data.Next(/*step=*/0, batch));   // batch.values["x"], batch.values["labels"]
//   TS_RETURN_IF_ERROR(SetInputs(*program, batch));     // TrainingProgram::SetInput for each
//
// A source must be deterministic per step: the batch of step s depends only on the source's
// configuration (its seed, its files) and s, never on which steps were asked before. That is what
// lets a run resumed from a checkpoint at step s see the same batches as an uninterrupted run.
//
// RandomDataSource draws every value from (seed, step, input name) with its own generator
// (SplitMix64), so the numbers are the same on every machine and standard library:
// - floating inputs: uniform in [-1, 1);
// - integer inputs: uniform in [0, n), n found from the reader: an Embedding's ids -> the
//   table's rows, a Gather's indices -> the data's size on the axis, SoftmaxCrossEntropy labels
//   -> the logits' classes (dim 1), CtcLoss targets -> the classes without the blank; CtcLoss
//   lengths are the full lengths (T, S), and so are an LSTM's sequence_lens (T); readers are
//   also found behind Identity, Reshape, Flatten, Squeeze, Unsqueeze and Transpose (a
//   sequence's targets flattened for the loss). Otherwise `classes` (or its per-input
//   override);
// - bool inputs: 0 or 1.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

// The values of one step's data inputs, by input name: floats or integers.
struct Batch {
  using Values = std::variant<std::vector<float>, std::vector<int64_t>>;
  std::map<std::string, Values> values;

  std::vector<float>& Floats(const std::string& name);     // creates or converts to floats
  std::vector<int64_t>& Ints(const std::string& name);     // creates or converts to integers
  // The largest value of integer input `name` (a batch's longest sentence or line, from its
  // lengths); 0 when the batch has no such integers or none at all.
  int64_t MaxInt(const std::string& name) const;
};

class DataSource {
 public:
  virtual ~DataSource();
  // Fills `batch` with the data inputs of 0-based step `step` (it may reuse the vectors `batch`
  // already holds). Errors name the source and what is wrong (a missing file, a short read).
  virtual absl::Status Next(int64_t step, Batch& batch) = 0;

  // A source that decodes example by example (files) can fill a worker's shard alone: rows
  // [first, first + count) of step `step`'s global batch, every input cut along its axis 0
  // (such a source's inputs are batch-major), equal to those rows of Next's batch. Then each
  // worker reads and decodes only its shard (exec/hybrid_worker.h). The default has no rows:
  // HasRows() false, NextRows Unimplemented.
  virtual bool HasRows() const;
  virtual absl::Status NextRows(int64_t step, int64_t first, int64_t count, Batch& batch);

  // Shape variants (HybridOptions::variants): a source whose batches often need less than the
  // model's full extent along an axis (a batch of short sentences, of narrow lines) names the
  // smaller version of the model that holds them, so that the step computes no more padding than
  // it must. Variants are numbered from the smallest, 0 .. K-1, and kWhole is the model itself.
  // Variant(rows) is the smallest one that holds `rows` as Next or NextRows filled them;
  // FitVariant(v, rows) cuts them to variant v's shapes (kWhole: unchanged). The ranks of a
  // hybrid run agree on the largest of their answers, so FitVariant may be asked for a larger
  // variant than Variant said. Both must be pure functions of `rows` and the source's
  // configuration (a prefetching wrapper calls them beside NextRows on another thread). The
  // default has one shape: Variant kWhole; FitVariant accepts kWhole only.
  static constexpr int kWhole = -1;
  virtual int Variant(const Batch& rows) const;
  virtual absl::Status FitVariant(int variant, Batch& rows) const;
};

// Sets every input of `batch` on `program`; InvalidArgument naming the input when it is not a
// data input of the program or its count or type is wrong (TrainingProgram::SetInput).
absl::Status SetInputs(TrainingProgram& program, const Batch& batch);

struct RandomDataOptions {
  uint64_t seed = 0;
  int64_t classes = 2;                         // integer range when the readers say nothing
  std::map<std::string, int64_t> classes_per_input;  // overrides, by input name
};

class RandomDataSource : public DataSource {
 public:
  // One entry per data input of `graph` (TensorRole::kInput), with its shape and dtype.
  RandomDataSource(const graph::Graph& graph, const RandomDataOptions& options);
  // InvalidArgument naming the input when an integer range is empty (e.g. classes < 1).
  absl::Status Next(int64_t step, Batch& batch) override;

  struct Input {
    std::string name;
    int64_t elements = 0;
    bool floating = true;
    int64_t low = 0, high = 2;  // integers: uniform in [low, high)
    int64_t skip = -1;          // integers: a value >= skip moves up by one (CTC's blank)
  };
  const std::vector<Input>& inputs() const { return inputs_; }

 private:
  std::vector<Input> inputs_;
  uint64_t seed_;
};

}  // namespace tessera::exec
