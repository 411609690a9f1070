// One rank of hybrid training (hybrid_worker.h): the rank's program, its data shard, the
// gradient buckets on the gradient channel, the distributed layers on the activation channel,
// and what each step moved and took.
#include "tessera/exec/hybrid_worker.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "tessera/base/median.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/gradient_buckets.h"
#include "tessera/exec/axis_collectives.h"
#include "tessera/exec/distributed_dense.h"
#include "tessera/exec/layout_node.h"
#include "tessera/exec/loss_share.h"
#include "tessera/exec/param_init.h"
#include "tessera/exec/rank_checkpoint.h"
#include "tessera/exec/rank_plan.h"
#include "tessera/exec/run_monitor_impl.h"
#include "tessera/exec/step_end.h"
#include "tessera/exec/training_program.h"
#include "tessera/exec/training_trace.h"

namespace tessera::exec {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The rank's block of every data input split over the batch; the others whole.
Batch ShardBatch(const Batch& whole, const RankPlan& r, const graph::Graph& global) {
  Batch mine;
  for (const auto& [name, values] : whole.values) {
    auto it = r.input_batch_axis.find(name);
    if (it == r.input_batch_axis.end()) {
      mine.values[name] = values;
      continue;
    }
    const graph::Shape& shape = global.tensor(*global.FindTensor(name)).shape;
    const int64_t count = shape[it->second] / r.ranks;
    std::visit([&](const auto& v) {
      mine.values[name] = SliceAxis(v, shape, it->second, r.rank * count, count);
    }, values);
  }
  return mine;
}

// The rows of each rank's block when the rank can ask `data` for them alone, else 0: the source
// decodes rows and every data input of the model is split over the ranks along axis 0, by the
// same count (a rank that needs some input whole, e.g. ids read by a model-parallel embedding,
// decodes whole batches and keeps its block).
int64_t RowsPerRank(const DataSource& data, const RankPlan& r, const graph::Graph& global) {
  if (!data.HasRows()) return 0;
  int64_t rows = 0;
  for (const graph::Tensor& t : global.tensors()) {
    if (t.role != graph::TensorRole::kInput) continue;
    auto it = r.input_batch_axis.find(t.name);
    if (it == r.input_batch_axis.end() || it->second != 0 || t.shape.empty()) return 0;
    const int64_t count = t.shape[0] / r.ranks;
    if (count < 1 || (rows != 0 && count != rows)) return 0;
    rows = count;
  }
  return rows;
}

// This rank's rows of step `step` and its loss seed: the share n_mine / n_whole of the counted
// labels, n_whole summed over the ranks (one collective of one value on the activation channel,
// in the same place of every rank's step).
absl::StatusOr<float> ReadRows(DataSource& data, int64_t step, int64_t rows, const RankPlan& r,
                               const LossShare& share, comm::Communicator& act, Batch& mine) {
  TS_RETURN_IF_ERROR(data.NextRows(step, r.rank * rows, rows, mine));
  if (r.global_loss) return 1.f;
  if (share.label_input.empty()) return 1.f / static_cast<float>(r.ranks);
  const int64_t n_mine = share.Count(mine);
  std::vector<int64_t> n_whole = {n_mine};
  TS_RETURN_IF_ERROR(act.AllReduce(n_whole, comm::ReduceOp::kSum));
  if (n_whole[0] == 0) return 0.f;
  return static_cast<float>(static_cast<double>(n_mine) / static_cast<double>(n_whole[0]));
}

// The shape variant every rank's rows fit (DataSource::Variant): the largest of the ranks'
// answers, the model itself (kWhole) counting as the largest; one collective of one value.
absl::StatusOr<int> AgreeVariant(const DataSource& data, const Batch& mine, size_t variants,
                                 comm::Communicator& act) {
  const int v = data.Variant(mine);
  if (v != DataSource::kWhole && (v < 0 || static_cast<size_t>(v) >= variants)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the data source chose shape variant ", v, " of ", variants, " (HybridOptions::variants)"));
  }
  std::vector<int64_t> agreed = {v == DataSource::kWhole ? static_cast<int64_t>(variants) : v};
  TS_RETURN_IF_ERROR(act.AllReduce(agreed, comm::ReduceOp::kMax));
  return agreed[0] == static_cast<int64_t>(variants) ? DataSource::kWhole
                                                     : static_cast<int>(agreed[0]);
}

// Every parameter starts as the single-worker model's (its shard of it).
absl::Status InitializeFromWholeModel(const graph::Graph& global, const RankPlan& r,
                                      uint64_t seed, TrainingProgram& program) {
  for (TrainingProgram::Parameter& p : program.parameters()) {
    TS_ASSIGN_OR_RETURN(std::vector<float> whole,
                        InitialValues(global, *global.FindTensor(p.name), seed));
    const std::vector<float> mine = SliceParameter(r.params.at(p.name), whole);
    if (mine.size() != p.value.size()) {
      return absl::InternalError(absl::StrCat("parameter '", p.name, "': shard of ", mine.size(),
                                              " values for ", p.value.size()));
    }
    TS_RETURN_IF_ERROR(WriteFloats(program.backend(), p.value, mine));
  }
  return absl::OkStatus();
}

// The data-parallel gradients, registered in forward order (the reverse of their readiness).
struct Buckets {
  std::unique_ptr<comm::GradientBuckets> buckets;
  std::vector<int> id_of;  // per program parameter; -1: not all-reduced
};

// The buckets have the plan's sizes (partitioner::BucketSizes).
absl::StatusOr<Buckets> RegisterSynced(const RankPlan& r, TrainingProgram& program,
                                       comm::Communicator& comm,
                                       const partitioner::BucketSizes& sizes) {
  Buckets b;
  b.id_of.assign(program.parameters().size(), -1);
  if (r.ranks == 1) return b;
  if (sizes.first_bytes <= 0 || sizes.bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan's gradient bucket sizes must be positive (first ", sizes.first_bytes,
        ", others ", sizes.bytes, "); plan again"));
  }
  b.buckets = std::make_unique<comm::GradientBuckets>(
      comm, comm::GradientBucketOptions{.bucket_bytes = sizes.bytes,
                                        .first_bucket_bytes = sizes.first_bytes,
                                        .op = comm::ReduceOp::kSum,
                                        .launch_on_caller = true});
  const std::vector<size_t> ready = program.GradientReadyOrder();
  for (auto it = ready.rbegin(); it != ready.rend(); ++it) {
    TrainingProgram::Parameter& p = program.parameters()[*it];
    if (!r.params.at(p.name).synced) continue;
    TS_ASSIGN_OR_RETURN(b.id_of[*it], b.buckets->Register(p.name, p.grad));
  }
  return b;
}

// Per plan layer: the gradient elements it owns (the first layer naming a parameter) that are
// all-reduced.
std::vector<int64_t> SyncedElementsPerLayer(const partitioner::Plan& plan, const RankPlan& r) {
  std::vector<int64_t> out(plan.layers.size(), 0);
  std::map<std::string, bool> seen;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    for (const std::string& name : plan.layers[i].param_names) {
      auto it = r.params.find(name);
      if (it == r.params.end() || seen[name] || !it->second.synced) continue;
      seen[name] = true;
      out[i] += graph::NumElements(it->second.global_shape);
    }
  }
  return out;
}

using DenseKernels = std::map<std::string, std::shared_ptr<CollectiveKernel>>;

// Per plan layer, what this rank sent in the last step: the distributed layers their own
// collectives' bytes (`before`: their counters at the step's start), the data-parallel ones
// the gradient channel's bytes in proportion to their all-reduced elements.
std::vector<int64_t> LayerBytes(const partitioner::Plan& plan, const RankPlan& r,
                                const DenseKernels& dense,
                                const std::map<std::string, int64_t>& before,
                                int64_t gradient_bytes) {
  const std::vector<int64_t> synced = SyncedElementsPerLayer(plan, r);
  int64_t synced_total = 0;
  for (int64_t e : synced) synced_total += e;
  std::vector<int64_t> out(plan.layers.size(), 0);
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    auto it = dense.find(plan.layers[i].name);
    if (it != dense.end()) {
      auto b = before.find(it->first);
      out[i] = it->second->traffic_bytes() - (b == before.end() ? 0 : b->second);
    } else if (synced_total > 0) {
      out[i] = gradient_bytes * synced[i] / synced_total;
    }
  }
  return out;
}

// The distributed layers' kernels, by node name, on the activation channel: a layer that
// changes an input's layout wraps the layer's own distributed kernel, if any.
DenseKernels MakeDenseKernels(const RankPlan& r, comm::Communicator& act) {
  DenseKernels dense;
  for (const DenseLayer& d : r.dense) {
    if (d.strategy == partitioner::Strategy::kModelParallel) {
      dense[d.node] = std::make_shared<ModelParallelDense>(act, d.x_batch_axis);
    } else {
      dense[d.node] = std::make_shared<LateMultiplyDense>(act, d.x_batch_axis);
    }
  }
  for (const LayoutLayer& l : r.layout_layers) {
    std::shared_ptr<CollectiveKernel>& k = dense[l.node];
    k = std::make_shared<LayoutNode>(act, l, k);
  }
  return dense;
}

using base::Median;

// Medians over the steps after the warm-up, the slowest rank's; bytes summed over the ranks.
absl::StatusOr<JobMeasure> SummarizeJob(const WorkerResult& w, int64_t warmup,
                                        comm::Communicator& comm) {
  // Every rank resumed at the same step, so all have steps or none has (nothing to measure).
  if (w.steps.empty()) return JobMeasure{.layer_bytes = w.layer_bytes};
  const size_t first = std::min<size_t>(std::max<int64_t>(0, warmup), w.steps.size() - 1);
  std::vector<double> step, blocked, wait, gradient, input;
  for (size_t s = first; s < w.steps.size(); ++s) {
    step.push_back(w.steps[s].step_s);
    blocked.push_back(w.steps[s].blocked_s);
    wait.push_back(w.steps[s].finish_wait_s);
    gradient.push_back(w.steps[s].gradient_comm_s);
    input.push_back(w.steps[s].input_wait_s);
  }
  std::vector<float> times = {static_cast<float>(Median(step)), static_cast<float>(Median(blocked)),
                              static_cast<float>(Median(wait)),
                              static_cast<float>(Median(gradient)),
                              static_cast<float>(Median(input))};
  TS_RETURN_IF_ERROR(comm.AllReduce(times, comm::ReduceOp::kMax));
  std::vector<int64_t> bytes = {w.steps.back().activation_bytes, w.steps.back().gradient_bytes};
  bytes.insert(bytes.end(), w.layer_bytes.begin(), w.layer_bytes.end());
  TS_RETURN_IF_ERROR(comm.AllReduce(bytes, comm::ReduceOp::kSum));
  return JobMeasure{.step_s = times[0], .blocked_s = times[1], .finish_wait_s = times[2],
                    .gradient_comm_s = times[3], .input_wait_s = times[4],
                    .activation_bytes = bytes[0],
                    .gradient_bytes = bytes[1],
                    .layer_bytes = std::vector<int64_t>(bytes.begin() + 2, bytes.end())};
}

// One training step (forward, backward with the buckets launched as gradients become final,
// the wait for the buckets, the ranks' agreement on the loss and norm, clipping, the update),
// with what it sent and where its time went. The agreement's few bytes are not counted.
struct Step {
  StepMeasure measure;
  StepEnd end;
};

absl::StatusOr<Step> MeasuredStep(const StepParts& parts, comm::GradientBuckets* buckets,
                                  Optimizer& optimizer, int64_t step, double lr,
                                  const StepEndOptions& end_options, const DenseKernels& dense,
                                  absl::Span<comm::Communicator* const> channels,
                                  StepTrace* trace) {
  Step s;
  StepMeasure& m = s.measure;
  double blocked_before = 0;
  for (const auto& [name, k] : dense) blocked_before += k->blocked_seconds();
  const comm::Traffic act0 = channels[0]->traffic(), grad0 = channels[1]->traffic();
  if (trace != nullptr) trace->BeginStep(step);
  const Clock::time_point start = Clock::now();
  TS_RETURN_IF_ERROR(parts.program.RunStep());
  const Clock::time_point backward_end = Clock::now();
  if (buckets != nullptr) TS_RETURN_IF_ERROR(buckets->Finish());
  const Clock::time_point finished = Clock::now();
  m.finish_wait_s = Since(backward_end);
  const comm::Traffic act1 = channels[0]->traffic(), grad1 = channels[1]->traffic();
  if (trace != nullptr) trace->EndCommunication();
  TS_ASSIGN_OR_RETURN(s.end, EndStep(parts, step, lr, end_options, optimizer));
  m.step_s = Since(start);
  if (trace != nullptr) {
    if (buckets != nullptr) {
      trace->AddComputeSpan("wait for gradient buckets", backward_end, finished);
    }
    trace->AddComputeSpan("optimizer update", finished, Clock::now());
    trace->EndStep();
  }
  for (const auto& [name, k] : dense) m.blocked_s += k->blocked_seconds();
  m.blocked_s -= blocked_before;
  m.activation_bytes = act1.payload_bytes - act0.payload_bytes;
  m.gradient_bytes = grad1.payload_bytes - grad0.payload_bytes;
  m.gradient_comm_s = grad1.busy_s - grad0.busy_s;
  return s;
}

}  // namespace

namespace {

// One rank's program and what runs beside it; heap-held, as the program's gradient-ready hook
// points at the buckets.
struct Worker {
  std::unique_ptr<StepTrace> trace;  // first: outlives the buckets' collectives in flight
  RankPlan rank;
  LossShare share;
  DenseKernels dense;
  Buckets buckets;
  std::unique_ptr<TrainingProgram> program;
  std::unique_ptr<Optimizer> optimizer;
  // HybridOptions::variants, each with its rank plan, distributed kernels and a program that
  // shares `program`'s parameters (declared after it: destroyed first).
  struct Variant {
    RankPlan rank;
    DenseKernels dense;
    std::unique_ptr<TrainingProgram> program;
  };
  std::vector<Variant> variants;
  const DenseKernels* last_dense = &dense;  // the last step's (LayerBytes)
};

// The program, rank plan and distributed kernels of shape variant v (kWhole: the model's own).
struct Running {
  TrainingProgram& program;
  const RankPlan& rank;
  const DenseKernels& dense;
};
Running RunningOf(Worker& w, int v) {
  if (v == DataSource::kWhole) return {*w.program, w.rank, w.dense};
  Worker::Variant& x = w.variants[static_cast<size_t>(v)];
  return {*x.program, x.rank, x.dense};
}

// The programs of HybridOptions::variants, sharing the model's program's parameters; `po` is
// the model's program's options (its hooks serve every variant: the same parameters, in the
// same order).
absl::Status MakeVariants(const partitioner::Plan& plan, comm::Communicator& act,
                          const HybridOptions& options, ProgramOptions po, Worker& w) {
  po.share_persistent_with = w.program.get();
  for (const graph::Graph& g : options.variants) {
    Worker::Variant v;
    TS_ASSIGN_OR_RETURN(v.rank, BuildRankPlan(g, plan, act.rank(), act.size()));
    v.dense = MakeDenseKernels(v.rank, act);
    po.node_kernels.clear();
    for (const auto& [name, kernel] : v.dense) po.node_kernels[name] = kernel;
    TS_ASSIGN_OR_RETURN(v.program, TrainingProgram::Create(v.rank.graph, po));
    const auto& mine = v.program->parameters();
    const auto& whole = w.program->parameters();
    for (size_t i = 0; i < std::max(mine.size(), whole.size()); ++i) {
      if (i >= mine.size() || i >= whole.size() || mine[i].name != whole[i].name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "shape variant '", g.name(), "' does not have the parameters of the model, in its "
            "order: its parameter ", i, " is '", i < mine.size() ? mine[i].name : "(none)",
            "', the model's '", i < whole.size() ? whole[i].name : "(none)", "'"));
      }
    }
    w.variants.push_back(std::move(v));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Worker>> MakeWorker(const graph::Graph& global,
                                                   const partitioner::Plan& plan,
                                                   absl::Span<comm::Communicator* const> channels,
                                                   const HybridOptions& options) {
  comm::Communicator& act = *channels[0];
  auto w = std::make_unique<Worker>();
  TS_ASSIGN_OR_RETURN(w->rank, BuildRankPlan(global, plan, act.rank(), act.size()));
  TS_ASSIGN_OR_RETURN(w->share, FindLossShare(global));
  ProgramOptions po{.seed = options.seed, .threads = options.threads,
                    .loss_scale = 1.f / static_cast<float>(w->rank.ranks)};
  if (options.device != Device::kCpu) {
    TS_ASSIGN_OR_RETURN(po.backend, MakeBackend({.device = options.device,
                                                 .threads = options.threads,
                                                 .cuda_device = act.rank(),
                                                 .tf32 = options.tf32}));
  }
  w->dense = MakeDenseKernels(w->rank, act);
  if (options.trace_steps > 0) {
    std::vector<std::string> names;
    for (const graph::Node& n : w->rank.graph.nodes()) names.push_back(n.name);
    w->trace = std::make_unique<StepTrace>(options.trace_steps, std::move(names));
    po.on_node_timed = [trace = w->trace.get()](graph::NodeId node, bool backward, double s) {
      trace->OnNode(node, backward, s);
    };
  }
  for (const auto& [name, kernel] : w->dense) po.node_kernels[name] = kernel;
  Buckets* buckets = &w->buckets;
  po.on_gradient_ready = [buckets](size_t i) -> absl::Status {
    if (buckets->id_of[i] < 0) return absl::OkStatus();
    return buckets->buckets->MarkReady(buckets->id_of[i]);
  };
  TS_ASSIGN_OR_RETURN(w->program, TrainingProgram::Create(w->rank.graph, po));
  TS_RETURN_IF_ERROR(InitializeFromWholeModel(global, w->rank, options.seed, *w->program));
  TS_ASSIGN_OR_RETURN(w->buckets,
                      RegisterSynced(w->rank, *w->program, *channels[1], plan.buckets));
  w->optimizer = std::make_unique<Optimizer>(options.optimizer, w->program->backend());
  TS_RETURN_IF_ERROR(MakeVariants(plan, act, options, std::move(po), *w));
  return w;
}

// Steps from the resumed one up to options.steps (or an agreed stop), checkpointing as asked.
absl::Status RunSteps(Worker& w, const graph::Graph& global, const partitioner::Plan& plan,
                      DataSource& data, absl::Span<comm::Communicator* const> channels,
                      const HybridOptions& options, WorkerResult& result,
                      std::map<std::string, int64_t>& layer_before) {
  const RankPlan& r = w.rank;
  const LearningRateSchedule schedule({.base = options.lr, .warmup_steps = options.warmup_steps,
                                       .total_steps = options.steps, .decay = options.decay,
                                       .final_fraction = options.final_lr_fraction});
  const StepEndOptions end_options{.clip_norm = options.clip_norm, .stop = options.stop};
  internal::RunMonitor monitor(options, r.rank, r.global_batch, result.resumed_from_step);
  const bool checkpoints = !options.checkpoint_dir.empty();
  Batch whole, mine;
  const int64_t rows = RowsPerRank(data, r, global);
  const bool variants = !w.variants.empty();
  for (int64_t step = result.resumed_from_step; step < options.steps && !result.stopped; ++step) {
    float scale = 1.f;
    int v = DataSource::kWhole;
    const Clock::time_point input_start = Clock::now();
    if (rows > 0) {
      TS_ASSIGN_OR_RETURN(scale, ReadRows(data, step, rows, r, w.share, *channels[0], mine));
      if (variants) {
        TS_ASSIGN_OR_RETURN(v, AgreeVariant(data, mine, w.variants.size(), *channels[0]));
        TS_RETURN_IF_ERROR(data.FitVariant(v, mine));
      }
    } else {
      TS_RETURN_IF_ERROR(data.Next(step, whole));
      if (variants) {  // every rank has the whole batch: the same answer, nothing to agree on
        v = data.Variant(whole);
        TS_RETURN_IF_ERROR(data.FitVariant(v, whole));
      }
      mine = ShardBatch(whole, RunningOf(w, v).rank, v == DataSource::kWhole
                                                         ? global
                                                         : options.variants[v]);
      // A global loss (split along the classes) is every rank's whole share already.
      scale = r.global_loss ? 1.f : w.share.Scale(whole, mine, r.ranks);
    }
    const double input_wait_s = Since(input_start);
    const Running run = RunningOf(w, v);
    TS_RETURN_IF_ERROR(SetInputs(run.program, mine));
    run.program.set_loss_scale(scale);
    run.program.set_steps_run(w.program->steps_run());  // Dropout masks follow the run's steps
    w.last_dense = &run.dense;
    for (const auto& [name, k] : run.dense) layer_before[name] = k->traffic_bytes();
    const StepParts parts{.program = run.program, .shards = &r.params, .comm = *channels[0],
                          .loss_scale = scale};
    TS_ASSIGN_OR_RETURN(Step s, MeasuredStep(parts, w.buckets.buckets.get(), *w.optimizer, step,
                                             schedule.At(step), end_options, run.dense, channels,
                                             w.trace.get()));
    w.program->set_steps_run(run.program.steps_run());
    s.measure.input_wait_s = input_wait_s;
    result.steps.push_back(s.measure);
    result.losses.push_back(s.end.loss);
    result.stopped = s.end.stop;
    const bool save = step + 1 == options.steps || s.end.stop ||
                      (options.checkpoint_every > 0 && (step + 1) % options.checkpoint_every == 0);
    if (save && checkpoints) {
      TS_RETURN_IF_ERROR(SaveShard(options.checkpoint_dir, plan, *w.program, *w.optimizer,
                                   r.rank, step + 1, options.seed));
    }
    TS_RETURN_IF_ERROR(monitor.AfterStep(step, s.end.loss, schedule.At(step), s.end.stop, r,
                                         *w.program, *channels[0]));
  }
  monitor.Finish();
  return absl::OkStatus();
}

// The trace observes the channels while it lives in this scope (none: nothing observed).
class ObservedChannels {
 public:
  ObservedChannels(absl::Span<comm::Communicator* const> channels, StepTrace* trace)
      : channels_(channels), observed_(trace != nullptr) {
    if (!observed_) return;
    channels_[0]->set_observer(&trace->activations());
    channels_[1]->set_observer(&trace->gradients());
  }
  ~ObservedChannels() {
    if (!observed_) return;
    for (comm::Communicator* c : channels_) c->set_observer(nullptr);
  }

 private:
  absl::Span<comm::Communicator* const> channels_;
  bool observed_;
};

}  // namespace

absl::StatusOr<WorkerResult> RunHybridWorker(const graph::Graph& global,
                                             const partitioner::Plan& plan,
                                             absl::Span<comm::Communicator* const> channels,
                                             DataSource& data, const HybridOptions& options) {
  if (options.steps < 1) return absl::InvalidArgumentError("steps must be at least 1");
  if (channels.size() < 2) {
    return absl::InvalidArgumentError(
        "RunHybridWorker needs two channels (activations, gradients)");
  }
  if (!(options.clip_norm >= 0) || options.warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "clip_norm (", options.clip_norm, ") and warmup_steps (", options.warmup_steps,
        ") must be at least 0"));
  }
  comm::Communicator& act = *channels[0];
  TS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> w, MakeWorker(global, plan, channels, options));
  WorkerResult result;
  if (w->buckets.buckets != nullptr) {
    result.gradient_buckets = static_cast<int>(w->buckets.buckets->buckets().size());
  }
  if (!options.checkpoint_dir.empty()) {
    TS_ASSIGN_OR_RETURN(result.resumed_from_step,
                        ResumeShard(options.checkpoint_dir, plan, *w->program, *w->optimizer, act,
                                    options.seed, &result.warnings));
  }
  std::map<std::string, int64_t> layer_before;
  {
    const ObservedChannels observed(channels.subspan(0, 2), w->trace.get());
    TS_RETURN_IF_ERROR(
        RunSteps(*w, global, plan, data, channels, options, result, layer_before));
  }
  const RankPlan& r = w->rank;
  if (w->trace != nullptr) {
    TS_ASSIGN_OR_RETURN(result.trace, GatherTraceEvents(act, *w->trace));
    if (r.rank != 0) result.trace.clear();
  }
  result.layer_bytes = LayerBytes(plan, r, *w->last_dense, layer_before,
                                  result.steps.empty() ? 0 : result.steps.back().gradient_bytes);
  TS_ASSIGN_OR_RETURN(result.parameters, internal::GatherParameters(r, *w->program, act));
  if (r.rank == 0) result.buffers = internal::FloatingConstants(*w->program);
  TS_ASSIGN_OR_RETURN(result.job, SummarizeJob(result, options.unmeasured_steps, act));
  result.rank = r.rank;
  result.ranks = r.ranks;
  return result;
}

}  // namespace tessera::exec
