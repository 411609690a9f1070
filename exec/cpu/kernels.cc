// The CPU kernel dispatcher: checks the call's shape (counts, presence), then runs the
// registered kernel of the node's kind.
#include "tessera/exec/cpu/kernels.h"

#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

template <typename T>
KernelTable<T> BuildTable() {
  KernelTable<T> table{};
  RegisterElementwiseKernels<T>(table);
  RegisterLayoutKernels<T>(table);
  RegisterReduceSoftmaxKernels<T>(table);
  RegisterDenseKernels<T>(table);
  RegisterConvPoolKernels<T>(table);
  RegisterNormKernels<T>(table);
  RegisterRecurrentKernels<T>(table);
  RegisterLossKernels<T>(table);
  return table;
}

std::string NodeLabel(const graph::Node& node) {
  return absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ")");
}

template <typename T>
absl::Status CheckCounts(const graph::Node& node, size_t inputs, size_t outputs) {
  if (inputs != node.inputs.size() || outputs != node.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(node), ": kernel called with ", inputs, " inputs and ", outputs,
        " outputs; the node has ", node.inputs.size(), " and ", node.outputs.size()));
  }
  return absl::OkStatus();
}

absl::Status Missing(const graph::Node& node, absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(NodeLabel(node), ": no CPU ", what, " kernel for this op yet"));
}

}  // namespace

template <typename T>
int64_t Tensor<T>::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

template <typename T>
int64_t Tensor<T>::index(int64_t i) const {
  const void* p = data;
  if (dtype == graph::DType::kI32) return static_cast<const int32_t*>(p)[i];
  if (dtype == graph::DType::kI64) return static_cast<const int64_t*>(p)[i];
  if (dtype == graph::DType::kBool) return static_cast<const uint8_t*>(p)[i];
  return static_cast<int64_t>(data[i]);
}

int64_t OpState::bytes() const {
  int64_t b = 0;
  for (const auto& v : reals) b += static_cast<int64_t>(v.size() * sizeof(double));
  for (const auto& v : ints) b += static_cast<int64_t>(v.size() * sizeof(int64_t));
  return b;
}

template <typename T>
const KernelTable<T>& Kernels() {
  static const KernelTable<T> table = BuildTable<T>();
  return table;
}

bool HasCpuKernel(graph::OpKind kind) {
  const KernelFns<float>& fns = Kernels<float>()[static_cast<size_t>(kind)];
  return fns.forward != nullptr && fns.backward != nullptr;
}

template <typename T>
absl::Status Forward(const graph::Node& node, absl::Span<const Tensor<T>> inputs,
                     absl::Span<const Tensor<T>> outputs, const KernelContext& ctx,
                     OpState& state) {
  if (absl::Status s = CheckCounts<T>(node, inputs.size(), outputs.size()); !s.ok()) return s;
  const KernelFns<T>& fns = Kernels<T>()[static_cast<size_t>(node.kind)];
  if (fns.forward == nullptr) return Missing(node, "forward");
  state.Clear();
  return fns.forward(ForwardArgs<T>{node, inputs, outputs, ctx, state});
}

template <typename T>
absl::Status Backward(const graph::Node& node, absl::Span<const Tensor<T>> inputs,
                      absl::Span<const Tensor<T>> outputs,
                      absl::Span<const Tensor<T>> grad_outputs,
                      absl::Span<const Tensor<T>> grad_inputs, const KernelContext& ctx,
                      const OpState& state) {
  if (absl::Status s = CheckCounts<T>(node, inputs.size(), outputs.size()); !s.ok()) return s;
  if (grad_inputs.size() != inputs.size() || grad_outputs.size() != outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(node), ": backward called with ", grad_inputs.size(), " input gradients and ",
        grad_outputs.size(), " output gradients; expected one per input and per output"));
  }
  const KernelFns<T>& fns = Kernels<T>()[static_cast<size_t>(node.kind)];
  if (fns.backward == nullptr) return Missing(node, "backward");
  return fns.backward(BackwardArgs<T>{node, inputs, outputs, grad_outputs, grad_inputs, ctx, state});
}

#define TESSERA_INSTANTIATE(T)                                                              \
  template struct Tensor<T>;                                                                \
  template const KernelTable<T>& Kernels<T>();                                              \
  template absl::Status Forward<T>(const graph::Node&, absl::Span<const Tensor<T>>,          \
                                   absl::Span<const Tensor<T>>, const KernelContext&, OpState&); \
  template absl::Status Backward<T>(const graph::Node&, absl::Span<const Tensor<T>>,         \
                                    absl::Span<const Tensor<T>>, absl::Span<const Tensor<T>>, \
                                    absl::Span<const Tensor<T>>, const KernelContext&,       \
                                    const OpState&);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::exec::cpu
