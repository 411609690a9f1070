// TrainHybrid and PlanForWorkers (hybrid_training.h).
#include "tessera/exec/hybrid_training.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/comm/launch.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/exec/param_file.h"
#include "tessera/exec/prefetch_data_source.h"

namespace tessera::exec {

absl::StatusOr<partitioner::Plan> PlanForWorkers(
    const graph::Graph& graph, int workers, const std::string& cluster,
    partitioner::PlanOptions options, const std::optional<costmodel::MeasuredOpTimes>& op_times) {
  TS_ASSIGN_OR_RETURN(costmodel::ClusterSpec spec, costmodel::LoadCluster(cluster));
  const costmodel::ClusterSpec sized = spec.WithDevices(workers);
  const costmodel::RooflineCostModel roofline(sized);  // with the cluster file's efficiencies
  options.devices = workers;
  options.executable = true;
  if (!op_times.has_value()) return partitioner::PlanModel(graph, sized, roofline, options);
  const costmodel::MeasuredCostModel measured(roofline, *op_times);
  TS_ASSIGN_OR_RETURN(partitioner::Plan plan,
                      partitioner::PlanModel(graph, sized, measured, options));
  for (const partitioner::LayerPlan& l : plan.layers) {
    plan.measured_op_layers += measured.Measured(l.name);
  }
  return plan;
}

absl::StatusOr<HybridRun> TrainHybrid(const graph::Graph& graph, const partitioner::Plan& plan,
                                      const HybridRunOptions& options) {
  HybridRun run;  // an unknown back-end: RunRanksWithChannels says so, naming those compiled in
  std::mutex mu;
  // The runtime's tensors are host memory (CPU kernels): NCCL stages them through the GPUs.
  const comm::CommOptions comm_options{.backend = options.backend, .timeout = options.timeout,
                                       .host_buffers = options.backend == comm::Backend::kNccl};
  TS_RETURN_IF_ERROR(comm::RunRanksWithChannels(
      comm_options, options.workers, 2,
      [&](absl::Span<comm::Communicator* const> channels) -> absl::Status {
        if (options.backend == comm::Backend::kMpi && channels[0]->size() != plan.devices) {
          return absl::InvalidArgumentError(absl::StrCat(
              "the job has ", channels[0]->size(), " MPI ranks but the plan is for ",
              plan.devices, " workers; run mpiexec -n ", plan.devices));
        }
        std::unique_ptr<DataSource> data;
        if (options.data_source) {
          TS_ASSIGN_OR_RETURN(data, options.data_source(graph));
        } else {
          data = std::make_unique<RandomDataSource>(graph, options.data);
        }
        if (options.prefetch > 0) {
          data = std::make_unique<PrefetchingDataSource>(std::move(data),
                                                         PrefetchOptions{.depth = options.prefetch});
        }
        TS_ASSIGN_OR_RETURN(WorkerResult result,
                            RunHybridWorker(graph, plan, channels, *data, options.worker));
        std::lock_guard<std::mutex> lock(mu);
        if (result.rank != 0 && comm::RanksAreThreads(options.backend)) return absl::OkStatus();
        run.report = MakeRunReport(plan, result, comm::BackendName(options.backend));
        run.is_rank0 = result.rank == 0;
        run.parameters = std::move(result.parameters);
        run.buffers = std::move(result.buffers);
        run.resumed_from_step = result.resumed_from_step;
        run.stopped = result.stopped;
        run.warnings = std::move(result.warnings);
        run.trace = std::move(result.trace);
        return absl::OkStatus();
      }));
  return run;
}

std::vector<NamedParameter> WholeParameters(
    const graph::Graph& graph, const std::map<std::string, std::vector<float>>& parameters) {
  std::vector<NamedParameter> out;
  for (const auto& [name, values] : parameters) {
    const std::optional<graph::TensorId> t = graph.FindTensor(name);
    out.push_back({.name = name, .shape = t ? graph.tensor(*t).shape : graph::Shape{},
                   .values = values});
  }
  return out;
}

}  // namespace tessera::exec
