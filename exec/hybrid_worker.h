// One rank of hybrid-parallel training: the rank's program built from a plan (rank_plan.h),
// run for a number of steps on the global batch's shard, with its gradients all-reduced in
// buckets while backward goes on and its distributed layers exchanging activations.
//
//   comm::RunRanksWithChannels({.backend = comm::Backend::kThread}, 4, 2, [&](auto channels) {
//     RandomDataSource data(graph, {.seed = 7});   // the global batch of each step
//     TS_ASSIGN_OR_RETURN(WorkerResult r, RunHybridWorker(graph, plan, channels, data, {}));
//     ...
//   });
//
// channels[0] carries the distributed layers' activation collectives (blocking, in program
// order), channels[1] the gradient buckets (launched from the gradient-ready reports, running
// on the communicator's threads), of the plan's sizes (Plan::buckets). Every rank must run the
// same graph, plan and options.
//
// The result is the same as training the whole graph on one worker with the global batch:
// each rank's loss is the mean over its shard, seeded with its share of the global mean (1/P, or
// n_r/N when the loss ignores a label such as <pad>: loss_share.h), so the ranks' gradients sum
// to the global ones; data-parallel gradients are summed by the buckets, model-parallel shards and
// late-multiply weights get their whole gradient locally. Two exceptions, as in PyTorch's DDP:
// BatchNormalization normalises with its shard's statistics, and Dropout draws per-shard masks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/comm/communicator.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/step_trace.h"
#include "tessera/exec/training_log.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"

namespace tessera::exec {

// The whole model after `step` steps, as rank 0 holds it at the end (WorkerResult): every
// parameter whole, and rank 0's floating constants (BatchNormalization's running statistics).
struct WholeModel {
  int64_t step = 0;
  std::map<std::string, std::vector<float>> parameters;
  std::map<std::string, std::vector<float>> buffers;
};

struct HybridOptions {
  int64_t steps = 20;          // of the whole run; a resumed run continues up to it
  uint64_t seed = 0;           // parameter initialisation (the single-worker model's)
  int threads = 1;             // intra-op threads per rank (CPU)
  // Where each rank's step runs (exec/backend/backend.h); `threads` is the CPU's. A CUDA
  // back-end runs one rank per GPU; distributed layers need the CPU's so far.
  Device device = Device::kCpu;
  bool tf32 = false;           // CUDA: TF32 tensor cores in cuBLAS and cuDNN
  // The learning rate of step s: `lr` after a linear warm-up over `warmup_steps`, then constant
  // or decaying (linear, cosine) to final_lr_fraction * lr at `steps` (LearningRateSchedule).
  double lr = 0.01;
  Decay decay = Decay::kConstant;
  int64_t warmup_steps = 0;
  double final_lr_fraction = 0;
  OptimizerOptions optimizer;
  double clip_norm = 0;        // > 0: clip the gradients to this global L2 norm (step_end.h)
  int64_t unmeasured_steps = 1;  // first steps left out of the measured medians
  // Raised (e.g. by SIGINT) on any rank: every rank ends after the same step, checkpoints
  // (with `checkpoint_dir`) and returns; WorkerResult::stopped says so.
  const std::atomic<bool>* stop = nullptr;
  // Rank 0 shows its progress there (exec/progress.h): a bar redrawn on a terminal, else a
  // line every log_every steps.
  std::ostream* progress = nullptr;
  bool progress_is_terminal = false;
  int64_t log_every = 10;
  // Sharded checkpoints (rank_checkpoint.h): every `checkpoint_every` steps (0: at the end
  // only) and at the end; a run finding checkpoints in the directory resumes from them and
  // runs up to `steps` in total.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  // > 0: each rank records the timeline of its last `trace_steps` steps (exec/step_trace.h)
  // and rank 0 gets every rank's in WorkerResult::trace; 0: nothing is timed.
  int64_t trace_steps = 0;
  // Rank 0 calls it as each step ends (a log: training_log.h); it must return quickly.
  std::function<void(const StepRecord&)> on_step;
  // Evaluation during training: with eval_every > 0 and on_eval set (on every rank), after
  // every eval_every steps but the last (the caller evaluates the final model) every rank
  // gathers its parameters' shards to rank 0 as at the end, and rank 0 calls on_eval with the
  // whole model while the other ranks wait, answering a heartbeat so that an evaluation may
  // outlast the communicators' timeout. Nothing training reads is touched: the losses and
  // parameters are bit-for-bit those of a run without it (the BLAS thread count, which an
  // evaluation program sets for the whole process, is set back to `threads` after on_eval).
  // on_eval returns a line for the progress output (empty: none); an error ends the run on
  // every rank.
  int64_t eval_every = 0;
  std::function<absl::StatusOr<std::string>(const WholeModel&)> on_eval;
  // Shape variants: smaller versions of the model (the same nodes and parameters at shorter
  // sequences or narrower images), smallest first, numbered as the data source numbers them
  // (DataSource::Variant). Each rank builds a program for each beside the model's own, sharing
  // its parameters, gradients, running statistics, optimizer and gradient buckets; every step
  // the ranks agree on the largest variant their rows need, cut the rows to it and run it.
  // Empty: every step runs the model itself.
  std::vector<graph::Graph> variants;
};

// What one step moved and how long its parts took, on this rank.
struct StepMeasure {
  double step_s = 0;
  double blocked_s = 0;        // in the distributed layers' collectives (exposed)
  double finish_wait_s = 0;    // waiting for the gradient buckets after backward (exposed)
  double gradient_comm_s = 0;  // the gradient channel's all-reduces (hidden or not)
  // Before the step: waiting for this rank's batch from the data source (and, for a source
  // with rows, the label count's all-reduce). Not part of step_s.
  double input_wait_s = 0;
  int64_t activation_bytes = 0, gradient_bytes = 0;  // payload sent by this rank
};

// The whole job, the same on every rank: each rank's median over the measured steps, then the
// slowest rank's; bytes are every rank's payload in the last step, summed.
struct JobMeasure {
  double step_s = 0, blocked_s = 0, finish_wait_s = 0, gradient_comm_s = 0, input_wait_s = 0;
  int64_t activation_bytes = 0, gradient_bytes = 0;
  std::vector<int64_t> layer_bytes;  // per plan layer
};

struct WorkerResult {
  std::vector<double> losses;  // per step: the global batch's loss (mean over the ranks)
  std::vector<StepMeasure> steps;
  // Per layer (the plan's order): payload this rank sent in the last step. Data-parallel
  // layers get the gradient channel's bytes in proportion to their gradients' share of it.
  std::vector<int64_t> layer_bytes;
  // Rank 0: every parameter whole (shards gathered), by name; empty on other ranks.
  std::map<std::string, std::vector<float>> parameters;
  // Rank 0: its floating constants (BatchNormalization's running statistics), by name.
  std::map<std::string, std::vector<float>> buffers;
  JobMeasure job;
  int rank = 0, ranks = 1;
  int gradient_buckets = 0;            // the data-parallel gradients' buckets (Plan::buckets)
  int64_t resumed_from_step = 0;       // 0: a fresh run
  bool stopped = false;                // HybridOptions::stop ended the run early
  std::vector<std::string> warnings;   // checkpoint files skipped on resume
  // With HybridOptions::trace_steps, on rank 0: every rank's timeline (trace[r]: rank r's).
  std::vector<std::vector<TraceEvent>> trace;
};

absl::StatusOr<WorkerResult> RunHybridWorker(const graph::Graph& global,
                                             const partitioner::Plan& plan,
                                             absl::Span<comm::Communicator* const> channels,
                                             DataSource& data, const HybridOptions& options);

}  // namespace tessera::exec
