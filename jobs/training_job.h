// A training job: a model's real data and its held-out evaluation, what `tessera train nmt` and
// `tessera train ocr` run around the hybrid runtime (jobs/nmt, jobs/ocr implement it;
// job_registry.h finds them by name).
//
//   std::unique_ptr<TrainingJob> job = ...;                       // e.g. jobs::nmt::MakeNmtJob
//   exec::HybridRunOptions options{.workers = 2};
//   options.data_source = [&](const graph::Graph& g) { return job->TrainingData(g); };
//   TS_ASSIGN_OR_RETURN(exec::HybridRun run, exec::TrainHybrid(graph, plan, options));
//   TS_ASSIGN_OR_RETURN(Evaluation e,
//                       job->Evaluate({&graph, &run.parameters, &run.buffers}, {.batches = 8}));
//   for (const auto& [name, value] : e.metrics) std::cout << name << " " << value << "\n";
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/graph.h"

namespace tessera::jobs {

// A trained model: the global graph and rank 0's whole parameters and buffers (HybridRun).
struct TrainedModel {
  const graph::Graph* graph = nullptr;
  const std::map<std::string, std::vector<float>>* parameters = nullptr;
  const std::map<std::string, std::vector<float>>* buffers = nullptr;  // may be null
};

struct EvalOptions {
  int64_t batches = 8;        // held-out batches of the graph's batch size
  int threads = 2;            // intra-op threads (cpu)
  exec::Device device = exec::Device::kCpu;  // where the evaluation program runs
  bool tf32 = false;          // cuda: TF32 in cuBLAS and cuDNN
  int64_t show = 5;           // examples printed in `samples`
  std::string samples_dir;    // when set, a job may write sample files there (OCR: PNGs)
  std::string predictions;    // on a corpus: every held-out example's result, as TSV (ocr:
                              // image<TAB>text, nmt: source<TAB>translation)
};

struct Evaluation {
  std::vector<std::pair<std::string, double>> metrics;  // in print order, e.g. token_accuracy
  std::vector<std::string> samples;                      // lines showing decoded examples
  std::vector<std::string> files;                        // files written under samples_dir
};

class TrainingJob {
 public:
  virtual ~TrainingJob();
  // The source of the global training batches for `graph` (the job's model at some batch);
  // InvalidArgument naming the input when the graph is not the job's model.
  virtual absl::StatusOr<std::unique_ptr<exec::DataSource>> TrainingData(
      const graph::Graph& graph) const = 0;
  // Metrics of `model` on the held-out split.
  virtual absl::StatusOr<Evaluation> Evaluate(const TrainedModel& model,
                                              const EvalOptions& options) const = 0;
  // True when the job sizes its model from its data (a corpus's vocabulary) instead of taking
  // the zoo's; then Model builds it at global batch `batch` (0: the job's default).
  virtual bool BuildsModel() const;
  virtual absl::StatusOr<graph::Graph> Model(int64_t batch) const;
  // Smaller versions of `model` (shorter sentences, ...) that the job's training data picks
  // from step by step (exec::DataSource::Variant, exec::HybridOptions::variants), smallest
  // first; none by default.
  virtual absl::StatusOr<std::vector<graph::Graph>> ModelVariants(const graph::Graph& model) const;
};

// A program of `graph` (outputs added by the caller) with `model`'s parameters and buffers,
// for RunForward. InvalidArgument naming a parameter the model lacks or has at another size.
absl::StatusOr<std::unique_ptr<exec::TrainingProgram>> EvaluationProgram(
    const graph::Graph& graph, const TrainedModel& model, const EvalOptions& options);

}  // namespace tessera::jobs
