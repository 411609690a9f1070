// Hybrid-parallel training of a graph from a plan, on threads of this process or as one MPI
// rank of a job: the C++ API behind `tessera train` (docs/training.md: the training loop;
// docs/hybrid-training.md: how a plan runs on many workers).
//
//   graph::Graph g = ...;                                   // the builder, at the global batch
//   TS_ASSIGN_OR_RETURN(partitioner::Plan plan, PlanForWorkers(g, 4, "local"));
//   TS_ASSIGN_OR_RETURN(HybridRun run, TrainHybrid(g, plan, {.workers = 4}));
//   std::cout << RunReportTable(run.report);                // predicted against measured
//
// With {.backend = comm::Backend::kMpi} each process of `mpiexec -n 4 prog` calls TrainHybrid
// and is one rank (an MpiSession must be alive); every rank gets the same report, rank 0 the
// parameters. With {.backend = comm::Backend::kNccl} (CUDA builds) worker r is a thread whose
// collectives run on GPU r through NCCL; the kernels stay on the CPU and each collective stages
// its host buffers through the GPU
// (comm::CommOptions::host_buffers).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tessera/comm/backend.h"
#include "tessera/costmodel/measured_cost_model.h"
#include "tessera/exec/data_source.h"
#include "tessera/exec/hybrid_worker.h"
#include "tessera/exec/param_file.h"
#include "tessera/exec/run_report.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"
#include "tessera/partitioner/planner.h"

namespace tessera::exec {

// An executable plan of `graph` for `workers` devices of `cluster` (a preset, "local", or a
// cluster file), priced by the cluster's roofline with its efficiencies or, with `op_times`,
// by those measured times where they have the node (costmodel::MeasuredCostModel; the plan's
// measured_op_layers counts them). `options` chooses the planner, optimizer and
// (PlannerKind::kGiven) the strategies; its `devices` and `executable` are set here.
absl::StatusOr<partitioner::Plan> PlanForWorkers(
    const graph::Graph& graph, int workers, const std::string& cluster,
    partitioner::PlanOptions options = {},
    const std::optional<costmodel::MeasuredOpTimes>& op_times = std::nullopt);

struct HybridRunOptions {
  comm::Backend backend = comm::Backend::kThread;
  int workers = 2;                 // thread and nccl back-ends; mpi: must equal the job's size
  absl::Duration timeout = absl::Seconds(60);  // a rank that dies ends the others within it
  HybridOptions worker;
  RandomDataOptions data;          // the global batches, when `data_source` is not set
  // Makes each rank's source of global batches (called once per rank, on the rank's thread).
  // A source with rows (DataSource::HasRows) gives each rank only its block.
  std::function<absl::StatusOr<std::unique_ptr<DataSource>>(const graph::Graph&)> data_source;
  // Batches each rank prepares ahead on a thread of its own (prefetch_data_source.h); 0: none.
  int prefetch = 2;
};

struct HybridRun {
  RunReport report;
  bool is_rank0 = true;
  std::map<std::string, std::vector<float>> parameters;  // rank 0: every parameter whole
  // Rank 0: its floating constants, e.g. BatchNormalization's running statistics (of its shard,
  // as DDP keeps rank 0's buffers), for evaluation.
  std::map<std::string, std::vector<float>> buffers;
  int64_t resumed_from_step = 0;
  bool stopped = false;               // HybridOptions::stop ended it before the last step
  std::vector<std::string> warnings;  // checkpoint files skipped on resume
  // With worker.trace_steps, on rank 0: every worker's timeline (training_trace.h writes it).
  std::vector<std::vector<TraceEvent>> trace;
};

absl::StatusOr<HybridRun> TrainHybrid(const graph::Graph& graph, const partitioner::Plan& plan,
                                      const HybridRunOptions& options);

// Rank 0's parameters with their shapes in `graph`, for WriteParamFile (param_file.h).
std::vector<NamedParameter> WholeParameters(
    const graph::Graph& graph, const std::map<std::string, std::vector<float>>& parameters);

}  // namespace tessera::exec
