// What a hybrid training run measured against what its plan predicted: the table `tessera train
// --report` prints and the JSON `--report-json FILE` writes (docs/train-report.md).
//
//   RunReport report = MakeRunReport(plan, worker_result, "thread");
//   std::cout << RunReportTable(report);
//   nlohmann::json j = RunReportJson(report);   // {"predicted": {...}, "measured": {...}, ...}
//
// Measured times are medians over the steps after the warm-up (the slowest rank's):
// step_time_s the whole step (forward, backward, waiting for the gradients, the update);
// exposed_comm_s the time the step waited on communication (the distributed layers'
// collectives plus the wait for the gradient buckets after backward, the latter also as
// gradient_wait_s); compute_s the rest;
// comm_s the distributed layers' collectives plus the gradient all-reduces' own time (hidden
// or not); input_wait_s the wait for the step's batch before it (not part of step_time_s; about
// 0 when the data source's prefetching keeps up). comm_bytes is the payload one device sent in the last
// step (all ranks' sum / P); per layer, data-parallel layers share the gradient channel's bytes
// in proportion to their gradients.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "tessera/exec/hybrid_worker.h"
#include "tessera/partitioner/plan.h"

namespace tessera::exec {

struct ReportTimes {
  double step_time_s = 0, compute_s = 0, comm_s = 0, exposed_comm_s = 0;
  double gradient_wait_s = 0;  // the part of exposed_comm_s spent waiting for the gradients
  double input_wait_s = 0;     // measured: waiting for the batch before the step (not in it)
  int64_t comm_bytes = 0;  // per device
};

struct ReportLayer {
  std::string name, op, strategy;
  int64_t planned_bytes = 0, measured_bytes = 0;  // per device per step
  double predicted_compute_s = 0, predicted_comm_s = 0;
};

struct RunReport {
  std::string model, cluster, backend;
  int workers = 1;
  int64_t global_batch = 0, steps = 0;
  // "measured": the plan priced the compute of its layers with op times measured on this
  // machine (costmodel/measured_cost_model.h); "model": with the cluster's cost model.
  std::string op_times = "model";
  ReportTimes predicted, measured;
  int64_t measured_bytes_all_ranks = 0;  // the last step's payload, every rank's
  // The plan's gradient buckets (partitioner::BucketSizes: sizes, tuned, count predicted) and
  // how many the runtime formed from them.
  partitioner::BucketSizes buckets;
  int measured_buckets = 0;
  std::vector<ReportLayer> layers;
  std::vector<double> losses;  // per step
  // Every rank's bytes equal P x the plan's bytes per device.
  bool BytesMatchPlan() const;
};

RunReport MakeRunReport(const partitioner::Plan& plan, const WorkerResult& result,
                        absl::string_view backend);
std::string RunReportTable(const RunReport& report);
nlohmann::json RunReportJson(const RunReport& report);

}  // namespace tessera::exec
