// Fitting the cost model to what `tessera calibrate` measured: per op class the fraction of
// peak (FLOP/s or memory bandwidth) that makes the roofline time of the sample kernels equal
// their measured time, and the latency and bandwidth that make the ring formulas of
// costmodel/collective_cost.h equal the measured collectives. Pure functions, no timing.
//
//   std::vector<KernelSample> samples = ...;   // measured forward and backward seconds
//   EfficiencyFit fit = FitEfficiency(samples, device, /*op_overhead_s=*/2e-6);
//   costmodel::RooflineCostModel model(cluster, fit.efficiency);
//   PredictedSeconds(samples[0], model);       // forward + backward as the planner prices them
//   TS_ASSIGN_OR_RETURN(costmodel::LinkSpec link, FitLink(comm_samples));
#pragma once

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/costmodel/cluster.h"
#include "tessera/costmodel/cost_model.h"
#include "tessera/costmodel/efficiency.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/op_kind.h"

namespace tessera::tools {

// One op measured with Tessera's CPU kernels.
struct KernelSample {
  std::string label;  // "Gemm 640x256x2000"
  graph::OpClass op_class = graph::OpClass::kElementwise;
  std::vector<costmodel::OpWork> work;  // the OpTime calls the planner makes for it
  double forward_s = 0;   // measured kernel seconds
  double backward_s = 0;
  double measured_s() const { return forward_s + backward_s; }
};

// The OpTime calls the planner makes for one op on one device (partitioner/layer_options.cc,
// SetCompute with share 1): forward {flops_forward, bytes}, then backward
// {flops_backward, 2 * bytes} when flops_backward > 0, with bytes = bytes_read + bytes_written,
// the node's op class, its first output's dtype and whether it runs as Winograd.
std::vector<costmodel::OpWork> PlannerOpWork(const graph::Graph& graph, graph::NodeId id,
                                             const costmodel::OpEstimate& estimate);

// Seconds `model` predicts for the sample: the sum of OpTime over its work, overheads included.
double PredictedSeconds(const KernelSample& sample, const costmodel::CostModel& model);

struct ClassFit {
  int samples = 0;
  bool compute_bound = false;  // the fitted fraction is of peak FLOP/s, else of bandwidth
  bool clamped = false;        // measured faster than the roofline at a fraction of 1
  double measured_s = 0;       // sum over the class's samples, plus op_overhead_s per call
  double predicted_s = 0;      // the same sum as the fitted model predicts it
};

struct EfficiencyFit {
  costmodel::Efficiency efficiency;  // op_overhead_s as given; unmeasured classes: defaults
  std::array<ClassFit, costmodel::kOpClassCount> classes;
};

// For every class with samples: the class is compute-bound when its samples' ideal compute
// time (FLOPs / peak) exceeds their ideal memory time (bytes / bandwidth), summed over the
// samples. The fraction of that bound is solved (bisection) so that the class's predicted
// seconds equal its measured seconds plus op_overhead_s per OpTime call (the framework's cost
// per op, which timing the kernels alone leaves out); the other fraction is 1. A fraction
// that would exceed 1 is clamped to 1 (ClassFit::clamped). Classes without samples keep the
// Efficiency{} defaults.
EfficiencyFit FitEfficiency(absl::Span<const KernelSample> samples,
                            const costmodel::DeviceSpec& device, double op_overhead_s);

// FitEfficiency after raising `device`'s peak FLOP/s to the rate a clamped compute-bound
// class reached in the planner's terms, until no compute-bound class is clamped: the peak
// measured directly (one GEMM) is a lower bound on what the kernels reach, and FLOP counts
// are exact. The bandwidth is kept: byte counts are nominal (an embedding counts its whole
// table), so a memory-bound class faster than the triad stays clamped at a fraction of 1.
EfficiencyFit FitEfficiencyRaisingPeak(absl::Span<const KernelSample> samples,
                                        costmodel::DeviceSpec& device, double op_overhead_s);

// One collective measured on the thread back-end.
struct CommSample {
  costmodel::Collective kind = costmodel::Collective::kAllReduce;
  int ranks = 2;
  double bytes = 0;  // as CostModel::CollectiveTime defines them
  double measured_s = 0;
};

// The one-node link whose ring formulas reproduce the samples: all-reduce
// 2(P-1) a + 2(P-1)/P S/b, reduce-scatter and all-gather (P-1) a + (P-1)/P S/b. Least squares
// in relative error over the samples (a >= 0). InvalidArgument when the samples are not
// all-reduce/all-gather/reduce-scatter on >= 2 ranks, or when their times do not grow with the
// bytes (no positive bandwidth fits).
absl::StatusOr<costmodel::LinkSpec> FitLink(absl::Span<const CommSample> samples);

}  // namespace tessera::tools
