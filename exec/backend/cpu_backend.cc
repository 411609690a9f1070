// The CPU back-end (cpu_backend.h).
#include "tessera/exec/backend/cpu_backend.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/backend/cpu_update_impl.h"
#include "tessera/exec/cpu/gemm.h"

namespace tessera::exec {
namespace {

struct CpuNodeState : NodeState {
  cpu::OpState op;
};

// Batch norm in training: running = momentum * running + (1 - momentum) * batch statistic
// (ONNX's momentum), from the batch mean and unbiased variance the kernel left in its state.
void UpdateRunningStatistics(const graph::Node& node, const std::vector<cpu::Tensor<float>>& in,
                             const cpu::OpState& state) {
  const auto* attrs = std::get_if<graph::BatchNormAttrs>(&node.attrs);
  if (attrs == nullptr || in.size() < 5 || state.reals.size() < 3) return;
  const double momentum = attrs->momentum;
  for (int k = 0; k < 2; ++k) {
    const cpu::Tensor<float>& running = in[3 + k];
    const std::vector<double>& batch = state.reals[k == 0 ? 0 : 2];
    if (!running.present() || static_cast<size_t>(running.size()) != batch.size()) continue;
    for (size_t c = 0; c < batch.size(); ++c) {
      running.data[c] = static_cast<float>(momentum * running.data[c] + (1 - momentum) * batch[c]);
    }
  }
}

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(int threads) : threads_(threads) { cpu::SetBlasThreads(threads); }

  absl::string_view name() const override { return "cpu"; }
  bool host_memory() const override { return true; }
  memory::DeviceMemory& memory() override { return host_; }

  bool Covers(graph::OpKind kind) const override { return cpu::HasCpuKernel(kind); }
  std::unique_ptr<NodeState> NewNodeState() const override {
    return std::make_unique<CpuNodeState>();
  }

  absl::Status Forward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                       const StepContext& ctx, NodeState& state) override {
    const std::vector<cpu::Tensor<float>> in = HostTensors(inputs);
    cpu::OpState& op = static_cast<CpuNodeState&>(state).op;
    TS_RETURN_IF_ERROR(cpu::Forward<float>(node, in, HostTensors(outputs), Context(ctx), op));
    if (node.kind == graph::OpKind::kBatchNorm && ctx.training) {
      UpdateRunningStatistics(node, in, op);
    }
    return absl::OkStatus();
  }

  absl::Status Backward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                        TensorViews grad_outputs, TensorViews grad_inputs, const StepContext& ctx,
                        const NodeState& state) override {
    return cpu::Backward<float>(node, HostTensors(inputs), HostTensors(outputs),
                                HostTensors(grad_outputs), HostTensors(grad_inputs), Context(ctx),
                                static_cast<const CpuNodeState&>(state).op);
  }

  absl::Status CopyFromHost(void* dst, const void* src, int64_t bytes) override {
    return Copy(dst, src, bytes);
  }
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override {
    return Copy(dst, src, bytes);
  }
  absl::Status Copy(void* dst, const void* src, int64_t bytes) override {
    if (bytes > 0 && dst != src) std::memmove(dst, src, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  absl::Status Fill(absl::Span<float> x, float value) override {
    std::fill(x.begin(), x.end(), value);
    return absl::OkStatus();
  }
  absl::Status Accumulate(absl::Span<float> dst, absl::Span<const float> src) override {
    if (dst.size() != src.size()) return SizeError("Accumulate", dst.size(), src.size());
    float* __restrict d = dst.data();
    const float* __restrict s = src.data();
    for (size_t i = 0; i < dst.size(); ++i) d[i] += s[i];
    return absl::OkStatus();
  }
  absl::Status Scale(absl::Span<float> x, float factor) override {
    for (float& v : x) v *= factor;
    return absl::OkStatus();
  }
  absl::StatusOr<ArrayStats> Inspect(absl::Span<const absl::Span<const float>> arrays,
                                     bool squares) override {
    ArrayStats stats;
    // An exponent of all ones is infinity or NaN; OR-ing the test over every value vectorises
    // and, unlike a float sum, does not depend on the order.
    uint32_t any = 0;
    for (absl::Span<const float> a : arrays) {
      if (squares) {
        double sum = 0;
        for (float g : a) sum += static_cast<double>(g) * g;
        stats.squares.push_back(sum);
      }
      const uint32_t* bits = reinterpret_cast<const uint32_t*>(a.data());
      for (size_t i = 0; i < a.size(); ++i) any |= (bits[i] & 0x7f800000u) == 0x7f800000u;
    }
    stats.finite = any == 0;
    return stats;
  }
  absl::Status Update(const UpdateRule& rule, absl::Span<float> w, absl::Span<const float> g,
                      absl::Span<float* const> slots) override {
    if (w.size() != g.size()) return SizeError("Update", w.size(), g.size());
    if (static_cast<int>(slots.size()) != rule.slots()) {
      return absl::InvalidArgumentError(absl::StrCat("Update: the rule needs ", rule.slots(),
                                                     " state arrays, got ", slots.size()));
    }
    cpu::UpdateHost(rule, w.data(), g.data(), slots.data(), w.size());
    return absl::OkStatus();
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }

 private:
  cpu::KernelContext Context(const StepContext& ctx) const {
    return {.threads = threads_, .training = ctx.training, .seed = ctx.seed, .step = ctx.step};
  }
  static absl::Status SizeError(absl::string_view what, size_t a, size_t b) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": arrays of ", a, " and ", b, " values; they must match"));
  }

  int threads_;
  memory::HostMemory host_;
};

}  // namespace

std::vector<cpu::Tensor<float>> HostTensors(TensorViews views) {
  std::vector<cpu::Tensor<float>> out;
  out.reserve(views.size());
  for (const TensorView& v : views) out.push_back(HostTensor(v));
  return out;
}

std::unique_ptr<Backend> MakeCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace tessera::exec
