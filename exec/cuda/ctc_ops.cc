// CUDA CtcLoss: the CPU kernel's semantics (exec/cpu/kernels_loss.cc, docs/kernels.md) with the
// recursions on the device. CtcLoss(log_probs[T, N, C], targets[N, S], input_lengths[N],
// target_lengths[N]) -> loss ([N] for reduction none, else a scalar).
//
// Forward: the integer inputs are copied to the host and checked (the CPU kernel's messages),
// the extended label sequences (blank, l1, blank, ..., lL, blank) are uploaded, and one block per
// sample runs the log-space alpha recursion in float64 (ctc_kernels.cu). log P per sample comes
// back to the host, where the loss is reduced exactly as on the CPU (PyTorch's mean: each loss
// divided by max(target length, 1), then averaged over N; a sample no alignment can produce has
// loss 0, PyTorch's zero_infinity=True, which this op always applies) and uploaded.
// Backward: one block per sample runs the beta recursion and writes d loss / d log_probs, the
// gradient w.r.t. log_probs as free inputs (0 past input_lengths and for infeasible samples).
// OpState: buffers[0] alpha [N, T, 2S+1] and buffers[1] log P [N] (float64);
// reals: log P per sample.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/exec/cuda/ops_impl.h"
#include "tessera/exec/cuda/recurrent_launch.h"
#include "tessera/graph/shape.h"

namespace tessera::exec::cuda {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The lattice of every sample on the host and its device copy.
struct CtcProblem {
  int64_t t_max = 0, n = 0, c = 0, s_max = 0, u_max = 1, blank = 0;
  std::vector<int64_t> ext, frames, states;  // [N, u_max], [N], [N]
  memory::DeviceAllocation ext_dev, frames_dev, states_dev;

  CtcLattice Lattice() const {
    return CtcLattice{.ext = As<const int64_t>(ext_dev),
                      .frames = As<const int64_t>(frames_dev),
                      .states = As<const int64_t>(states_dev),
                      .t_max = t_max, .n = n, .c = c, .u_max = u_max, .blank = blank};
  }
  int64_t TargetLength(int64_t b) const { return (states[b] - 1) / 2; }
};

absl::Status CheckShapes(const graph::Node& node, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  if (in.size() != 4 || out.size() != 1 || !in[0].present() || !in[1].present() ||
      !in[2].present() || !in[3].present()) {
    return NodeError(node, "CtcLoss needs log_probs, targets, input_lengths and target_lengths");
  }
  if (!std::holds_alternative<graph::LossAttrs>(node.attrs)) {
    return NodeError(node, "the node's attributes are not LossAttrs");
  }
  const graph::Shape& lp = in[0].shape;
  if (lp.size() != 3 || in[1].shape.size() != 2 || in[1].shape[0] != lp[1] ||
      in[2].size() != lp[1] || in[3].size() != lp[1]) {
    return NodeError(node, absl::StrCat("expected log_probs [T, N, C], targets [N, S] and lengths "
                                        "[N]; got ", graph::ShapeString(lp), ", ",
                                        graph::ShapeString(in[1].shape), ", ",
                                        graph::ShapeString(in[2].shape), ", ",
                                        graph::ShapeString(in[3].shape)));
  }
  return absl::OkStatus();
}

// Reads and checks the integer inputs (the CPU kernel's ReadCtc) and uploads the lattice.
absl::StatusOr<CtcProblem> ReadCtc(const graph::Node& node, absl::Span<const Tensor> in,
                                   const KernelContext& ctx) {
  const cudaStream_t stream = ctx.stream;
  CtcProblem p;
  p.t_max = in[0].shape[0];
  p.n = in[0].shape[1];
  p.c = in[0].shape[2];
  p.s_max = in[1].shape[1];
  p.u_max = 2 * p.s_max + 1;
  p.blank = std::get<graph::LossAttrs>(node.attrs).blank;
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> targets, IntsToHost(in[1], stream));
  TS_ASSIGN_OR_RETURN(p.frames, IntsToHost(in[2], stream));
  TS_ASSIGN_OR_RETURN(const std::vector<int64_t> lengths, IntsToHost(in[3], stream));
  p.ext.assign(p.n * p.u_max, p.blank);
  p.states.resize(p.n);
  for (int64_t b = 0; b < p.n; ++b) {
    const int64_t len = lengths[b];
    if (p.frames[b] < 0 || p.frames[b] > p.t_max || len < 0 || len > p.s_max) {
      return NodeError(node, absl::StrCat("sample ", b, " has input length ", p.frames[b],
                                          " and target length ", len, "; they must lie in [0, ",
                                          p.t_max, "] and [0, ", p.s_max, "]"));
    }
    for (int64_t i = 0; i < len; ++i) {
      const int64_t label = targets[b * p.s_max + i];
      if (label < 0 || label >= p.c || label == p.blank) {
        return NodeError(node, absl::StrCat("target ", label, " of sample ", b, " at position ",
                                            i, " is not a non-blank class in [0, ", p.c,
                                            ") (blank is ", p.blank, ")"));
      }
      p.ext[b * p.u_max + 2 * i + 1] = label;
    }
    p.states[b] = 2 * len + 1;
  }
  TS_ASSIGN_OR_RETURN(p.ext_dev, UploadInts(node, ctx, p.ext));
  TS_ASSIGN_OR_RETURN(p.frames_dev, UploadInts(node, ctx, p.frames));
  TS_ASSIGN_OR_RETURN(p.states_dev, UploadInts(node, ctx, p.states));
  return p;
}

// Per-sample weight of the upstream gradient under the reduction (the CPU kernel's CtcScale).
double CtcScale(graph::Reduction r, const CtcProblem& p, int64_t b, const double* dy) {
  if (r == graph::Reduction::kNone) return dy[b];
  if (r == graph::Reduction::kSum) return dy[0];
  return dy[0] / (static_cast<double>(std::max<int64_t>(p.TargetLength(b), 1)) *
                  static_cast<double>(p.n));
}

absl::Status CtcLossForward(const FwdArgs& a) {
  TS_RETURN_IF_ERROR(CheckShapes(a.node, a.inputs, a.outputs));
  const cudaStream_t s = a.ctx.stream;
  TS_ASSIGN_OR_RETURN(const CtcProblem p, ReadCtc(a.node, a.inputs, a.ctx));
  const graph::Reduction reduction = std::get<graph::LossAttrs>(a.node.attrs).reduction;
  const int64_t want = reduction == graph::Reduction::kNone ? p.n : 1;
  if (a.outputs[0].size() != want || !a.outputs[0].present()) {
    return NodeError(a.node, absl::StrCat("the loss output needs ", want, " values; it has shape ",
                                          graph::ShapeString(a.outputs[0].shape)));
  }
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation alpha,
                      Scratch<double>(a.node, a.ctx, p.n * p.t_max * p.u_max));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation log_p_dev, Scratch<double>(a.node, a.ctx, p.n));
  TS_CUDA_RETURN_IF_ERROR(
      LaunchCtcAlpha(a.inputs[0].data, p.Lattice(), As<double>(alpha), As<double>(log_p_dev), s));
  std::vector<double> log_p(p.n);
  if (p.n > 0) {
    TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(log_p.data(), log_p_dev.data(),
                                            sizeof(double) * p.n, cudaMemcpyDeviceToHost, s));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  // The reduction, on the host in float64 as on the CPU.
  std::vector<float> y(want, 0.f);
  const double one = 1.0;
  double total = 0;
  for (int64_t b = 0; b < p.n; ++b) {
    const double loss = log_p[b] == kNegInf ? 0.0 : -log_p[b];  // infeasible: 0 (zero_infinity)
    if (reduction == graph::Reduction::kNone) {
      y[b] = static_cast<float>(loss);
    } else {
      total += loss * CtcScale(reduction, p, b, &one);
    }
  }
  if (reduction != graph::Reduction::kNone) y[0] = static_cast<float>(total);
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(a.outputs[0].data, y.data(), sizeof(float) * want,
                                          cudaMemcpyHostToDevice, s));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));  // `y` dies on return
  a.state.buffers.push_back(std::move(alpha));
  a.state.buffers.push_back(std::move(log_p_dev));
  a.state.reals = std::move(log_p);
  return absl::OkStatus();
}

absl::Status CtcLossBackward(const BwdArgs& a) {
  const Tensor& dlp = a.grad_inputs[0];
  if (!dlp.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(CheckShapes(a.node, a.inputs, a.outputs));
  const cudaStream_t s = a.ctx.stream;
  TS_RETURN_IF_ERROR(ZeroFill(dlp, s));
  const float* dy_dev = GradOut(a, 0);
  if (dy_dev == nullptr) return absl::OkStatus();
  if (a.state.buffers.size() != 2) return NodeError(a.node, "backward without a forward");
  TS_ASSIGN_OR_RETURN(const CtcProblem p, ReadCtc(a.node, a.inputs, a.ctx));
  if (a.state.buffers[0].size() < static_cast<int64_t>(sizeof(double)) * p.n * p.t_max * p.u_max ||
      a.state.buffers[1].size() < static_cast<int64_t>(sizeof(double)) * p.n) {
    return NodeError(a.node, "backward with inputs of another shape than the forward's");
  }
  const auto& attrs = std::get<graph::LossAttrs>(a.node.attrs);
  // The upstream gradient to the host, then one weight per sample.
  std::vector<float> dy_f(std::max<int64_t>(1, a.grad_outputs[0].size()));
  const int64_t want = attrs.reduction == graph::Reduction::kNone ? p.n : 1;
  if (a.grad_outputs[0].size() != want) {
    return NodeError(a.node, absl::StrCat("the loss gradient needs ", want, " values"));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dy_f.data(), dy_dev, sizeof(float) * want,
                                          cudaMemcpyDeviceToHost, s));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  const std::vector<double> dy(dy_f.begin(), dy_f.end());
  std::vector<double> scale(p.n);
  for (int64_t b = 0; b < p.n; ++b) scale[b] = CtcScale(attrs.reduction, p, b, dy.data());
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation scale_dev, Scratch<double>(a.node, a.ctx, p.n));
  if (p.n > 0) {
    TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(scale_dev.data(), scale.data(), sizeof(double) * p.n,
                                            cudaMemcpyHostToDevice, s));
  }
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation beta,
                      Scratch<double>(a.node, a.ctx, p.n * p.t_max * p.u_max));
  TS_CUDA_RETURN_IF_ERROR(LaunchCtcBackward(
      a.inputs[0].data, p.Lattice(), As<const double>(a.state.buffers[0]),
      As<const double>(a.state.buffers[1]), As<const double>(scale_dev), As<double>(beta),
      dlp.data, s));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));  // `scale` and the buffers die on return
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaCtc(OpTable& table) {
  Slot(table, graph::OpKind::kCtcLoss) = {&CtcLossForward, &CtcLossBackward};
}

}  // namespace tessera::exec::cuda
