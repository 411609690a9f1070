// FitEfficiency and FitLink: the cost model's free parameters solved from measurements.
#include "tessera/tools/calibrate_fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tessera/costmodel/collective_cost.h"
#include "tessera/costmodel/roofline_cost_model.h"
#include "tessera/costmodel/winograd.h"

namespace tessera::tools {
namespace {

using costmodel::Collective;
using costmodel::Efficiency;

constexpr double kMinFraction = 1e-6;
constexpr int kBisectionSteps = 100;

// Seconds the roofline model predicts for `samples` with `fraction` as the class's
// compute (or memory) efficiency and 1 as the other.
double ClassSeconds(absl::Span<const KernelSample* const> samples, const costmodel::ClusterSpec& c,
                    Efficiency e, int index, bool compute_bound, double fraction) {
  e.flops[index] = compute_bound ? fraction : 1;
  e.bandwidth[index] = compute_bound ? 1 : fraction;
  const costmodel::RooflineCostModel model(c, e);
  double seconds = 0;
  for (const KernelSample* s : samples) seconds += PredictedSeconds(*s, model);
  return seconds;
}

// The fraction in [kMinFraction, 1] whose predicted seconds equal `target` (predictions
// fall as the fraction grows), found by bisection on its logarithm.
double SolveFraction(absl::Span<const KernelSample* const> samples,
                     const costmodel::ClusterSpec& c, const Efficiency& e, int index,
                     bool compute_bound, double target) {
  auto predicted = [&](double f) { return ClassSeconds(samples, c, e, index, compute_bound, f); };
  if (predicted(1) >= target) return 1;
  if (predicted(kMinFraction) <= target) return kMinFraction;
  double lo = std::log(kMinFraction), hi = 0;  // predicted(exp(lo)) > target > predicted(exp(hi))
  for (int step = 0; step < kBisectionSteps; ++step) {
    const double mid = 0.5 * (lo + hi);
    if (predicted(std::exp(mid)) > target) lo = mid; else hi = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

// Ring coefficients of latency and of S/b on one node: t = ca * a + cs * S / b.
bool RingCoefficients(const CommSample& s, double& ca, double& cs) {
  const double p = s.ranks;
  if (s.ranks < 2 || !(s.bytes > 0) || !(s.measured_s > 0)) return false;
  switch (s.kind) {
    case Collective::kAllReduce: ca = 2 * (p - 1), cs = 2 * (p - 1) / p; return true;
    case Collective::kAllGather:
    case Collective::kReduceScatter: ca = p - 1, cs = (p - 1) / p; return true;
    default: return false;
  }
}

}  // namespace

std::vector<costmodel::OpWork> PlannerOpWork(const graph::Graph& graph, graph::NodeId id,
                                             const costmodel::OpEstimate& estimate) {
  const graph::Node& node = graph.node(id);
  const costmodel::OpWork base{.op_class = graph::GetOpSchema(node.kind).op_class,
                               .dtype = graph.tensor(node.outputs[0]).dtype,
                               .winograd = costmodel::RunsAsWinograd(graph, node)};
  const double bytes = static_cast<double>(estimate.bytes_read + estimate.bytes_written);
  std::vector<costmodel::OpWork> work = {base};
  work[0].flops = estimate.flops_forward;
  work[0].bytes = bytes;
  if (estimate.flops_backward > 0) {
    work.push_back(base);
    work.back().flops = estimate.flops_backward;
    work.back().bytes = 2 * bytes;
  }
  return work;
}

double PredictedSeconds(const KernelSample& sample, const costmodel::CostModel& model) {
  double seconds = 0;
  for (const costmodel::OpWork& w : sample.work) seconds += model.OpTime(w);
  return seconds;
}

EfficiencyFit FitEfficiency(absl::Span<const KernelSample> samples,
                            const costmodel::DeviceSpec& device, double op_overhead_s) {
  EfficiencyFit fit;
  fit.efficiency.op_overhead_s = op_overhead_s;
  fit.efficiency.winograd_speedup = 1;  // Tessera's CPU convolutions: im2col + GEMM
  costmodel::ClusterSpec cluster{.name = "calibration", .device = device};
  for (int index = 0; index < costmodel::kOpClassCount; ++index) {
    std::vector<const KernelSample*> mine;
    double compute = 0, memory = 0, target = 0;
    for (const KernelSample& s : samples) {
      if (Efficiency::Index(s.op_class) != index) continue;
      mine.push_back(&s);
      for (const costmodel::OpWork& w : s.work) {
        compute += w.flops / device.peak_flops(w.dtype);
        memory += w.bytes / device.memory_bandwidth;
      }
      target += s.measured_s() + op_overhead_s * static_cast<double>(s.work.size());
    }
    ClassFit& c = fit.classes[index];
    c.samples = static_cast<int>(mine.size());
    if (mine.empty()) continue;
    c.compute_bound = compute > memory;
    const double f = SolveFraction(mine, cluster, fit.efficiency, index, c.compute_bound, target);
    fit.efficiency.flops[index] = c.compute_bound ? f : 1;
    fit.efficiency.bandwidth[index] = c.compute_bound ? 1 : f;
    c.measured_s = target;
    c.predicted_s = ClassSeconds(mine, cluster, fit.efficiency, index, c.compute_bound, f);
    c.clamped = f == 1 && c.predicted_s > target * (1 + 1e-9);
  }
  return fit;
}

EfficiencyFit FitEfficiencyRaisingPeak(absl::Span<const KernelSample> samples,
                                       costmodel::DeviceSpec& device, double op_overhead_s) {
  constexpr int kMaxRounds = 20;
  EfficiencyFit fit = FitEfficiency(samples, device, op_overhead_s);
  for (int round = 0; round < kMaxRounds; ++round) {
    // The largest factor by which a clamped class's roofline part exceeds its measured part.
    double factor = 1;
    for (int index = 0; index < costmodel::kOpClassCount; ++index) {
      const ClassFit& c = fit.classes[index];
      if (!c.clamped || !c.compute_bound) continue;
      double calls = 0;
      for (const KernelSample& s : samples) {
        if (Efficiency::Index(s.op_class) == index) calls += static_cast<double>(s.work.size());
      }
      const double fixed = calls * op_overhead_s;
      if (c.measured_s <= fixed * (1 + 1e-9)) continue;  // overhead alone exceeds it
      factor = std::max(factor, (c.predicted_s - fixed) / (c.measured_s - fixed) * (1 + 1e-6));
    }
    if (factor <= 1) break;
    device.peak_flops_f32 *= factor;
    fit = FitEfficiency(samples, device, op_overhead_s);
  }
  return fit;
}

absl::StatusOr<costmodel::LinkSpec> FitLink(absl::Span<const CommSample> samples) {
  // Minimise sum_i ((ca_i a + cs_i S_i u - t_i) / t_i)^2 over a = latency, u = 1 / bandwidth:
  // with r_i = ca_i / t_i and q_i = cs_i S_i / t_i, the normal equations are
  //   [sum r^2  sum rq] [a]   [sum r]
  //   [sum rq   sum q^2] [u] = [sum q].
  double rr = 0, rq = 0, qq = 0, r1 = 0, q1 = 0;
  for (const CommSample& s : samples) {
    double ca = 0, cs = 0;
    if (!RingCoefficients(s, ca, cs)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective sample ", costmodel::CollectiveName(s.kind), " of ", s.bytes, " bytes on ",
          s.ranks, " ranks in ", s.measured_s,
          " s: only all-reduce, all-gather and reduce-scatter on >= 2 ranks with bytes > 0 and "
          "a time > 0 can be fitted"));
    }
    const double r = ca / s.measured_s, q = cs * s.bytes / s.measured_s;
    rr += r * r, rq += r * q, qq += q * q, r1 += r, q1 += q;
  }
  if (samples.size() < 2) {
    return absl::InvalidArgumentError("fitting a link needs at least two collective samples");
  }
  const double det = rr * qq - rq * rq;
  double a = det > 0 ? (r1 * qq - q1 * rq) / det : 0;
  double u = det > 0 ? (rr * q1 - rq * r1) / det : 0;
  if (!(det > 0) || !(a >= 0)) {  // the best fit has no latency: bandwidth alone
    a = 0;
    u = q1 / qq;
  }
  if (!(u > 0) || !std::isfinite(u)) {
    return absl::InvalidArgumentError(
        "the measured collective times do not grow with their size; no positive bandwidth fits "
        "them (is the machine busy? run `tessera calibrate` again)");
  }
  return costmodel::LinkSpec{.bandwidth = 1 / u, .latency = a};
}

}  // namespace tessera::tools
