// The CUDA dispatcher (op_kernels.h) and the host helpers of ops_impl.h.
#include <cstring>

#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

const OpTable& Table() {
  static const OpTable* table = [] {
    auto* t = new OpTable();
    RegisterCudaElementwise(*t);
    RegisterCudaLayout(*t);
    RegisterCudaReduceSoftmax(*t);
    RegisterCudaDense(*t);
    RegisterCudaNorm(*t);
    RegisterCudaConvPool(*t);
    RegisterCudaRecurrent(*t);
    return t;
  }();
  return *table;
}

absl::Status Unimplemented(const graph::Node& node) {
  return absl::UnimplementedError(
      absl::StrCat("node '", node.name, "': op ", graph::OpName(node.kind),
                   " has no CUDA kernel yet; run it on the CPU back-end (exec/cpu/kernels.h)"));
}

}  // namespace

int64_t Tensor::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void OpState::Clear() {
  buffers.clear();
  ints.clear();
  reals.clear();
}

absl::StatusOr<CudnnHandle> CudnnHandle::Create() {
  cudnnHandle_t h = nullptr;
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreate(&h));
  return CudnnHandle(h);
}

CudnnHandle::~CudnnHandle() {
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

bool HasCudaKernel(graph::OpKind kind) {
  return Table()[static_cast<size_t>(kind)].forward != nullptr;
}

absl::Status Forward(const graph::Node& node, absl::Span<const Tensor> inputs,
                     absl::Span<const Tensor> outputs, const KernelContext& ctx, OpState& state) {
  const OpFns& fns = Table()[static_cast<size_t>(node.kind)];
  if (fns.forward == nullptr) return Unimplemented(node);
  if (inputs.size() != node.inputs.size() || outputs.size() != node.outputs.size()) {
    return NodeError(node, absl::StrCat("got ", inputs.size(), " inputs and ", outputs.size(),
                                        " outputs for a node with ", node.inputs.size(), " and ",
                                        node.outputs.size()));
  }
  state.Clear();
  return fns.forward(FwdArgs{node, inputs, outputs, ctx, state});
}

absl::Status Backward(const graph::Node& node, absl::Span<const Tensor> inputs,
                      absl::Span<const Tensor> outputs, absl::Span<const Tensor> grad_outputs,
                      absl::Span<const Tensor> grad_inputs, const KernelContext& ctx,
                      const OpState& state) {
  const OpFns& fns = Table()[static_cast<size_t>(node.kind)];
  if (fns.backward == nullptr) return Unimplemented(node);
  if (grad_inputs.size() != inputs.size() || grad_outputs.size() != outputs.size()) {
    return NodeError(node, "grad_inputs/grad_outputs must match inputs/outputs one to one");
  }
  return fns.backward(BwdArgs{node, inputs, outputs, grad_outputs, grad_inputs, ctx, state});
}

absl::Status NodeError(const graph::Node& node, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ", CUDA): ", what));
}

absl::StatusOr<Dims> ToDims(const graph::Node& node, const graph::Shape& shape) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return NodeError(node, absl::StrCat("rank ", shape.size(), " exceeds the CUDA kernels' ",
                                        kMaxRank, "; reshape to fewer axes"));
  }
  Dims dims;
  dims.rank = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) dims.d[d] = shape[d];
  return dims;
}

View BroadcastView(const graph::Shape& shape, const Dims& space) {
  View v;
  const int shift = space.rank - static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int d = space.rank - 1; d >= 0; --d) {
    const int k = d - shift;
    if (k < 0) continue;
    v.s[d] = (shape[k] == 1 && space.d[d] != 1) ? 0 : stride;
    stride *= shape[k];
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> IntsToHost(const Tensor& t, cudaStream_t stream) {
  const int64_t n = t.size();
  std::vector<int64_t> out(n);
  if (n == 0) return out;
  const int64_t width = graph::DTypeSize(t.dtype);
  std::vector<unsigned char> raw(n * width);
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(raw.data(), t.data, raw.size(), cudaMemcpyDeviceToHost, stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype == graph::DType::kI64) {
      std::memcpy(&out[i], raw.data() + 8 * i, 8);
    } else if (t.dtype == graph::DType::kI32) {
      int32_t v;
      std::memcpy(&v, raw.data() + 4 * i, 4);
      out[i] = v;
    } else if (t.dtype == graph::DType::kBool) {
      out[i] = raw[i] != 0;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an integer tensor, got dtype ", graph::DTypeName(t.dtype)));
    }
  }
  return out;
}

absl::StatusOr<memory::DeviceAllocation> ScratchBytes(const graph::Node& node,
                                                      const KernelContext& ctx, int64_t bytes) {
  if (ctx.memory == nullptr) {
    return NodeError(node, "needs device memory for its scratch in KernelContext::memory "
                           "(memory::CudaMemory::Create)");
  }
  constexpr int64_t kScratchAlignment = 256;  // cudaMalloc's own
  return memory::DeviceAllocation::Create(*ctx.memory, bytes, kScratchAlignment);
}

absl::StatusOr<memory::DeviceAllocation> UploadInts(const graph::Node& node,
                                                    const KernelContext& ctx,
                                                    const std::vector<int64_t>& v) {
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation buffer, Scratch<int64_t>(node, ctx, v.size()));
  if (!v.empty()) {
    TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(buffer.data(), v.data(), v.size() * sizeof(int64_t),
                                            cudaMemcpyHostToDevice, ctx.stream));
    // The host vector may die before the copy runs: wait for it.
    TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx.stream));
  }
  return buffer;
}

absl::Status ZeroFill(const Tensor& t, cudaStream_t stream) {
  if (!t.present()) return absl::OkStatus();
  TS_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(t.data, 0, sizeof(float) * t.size(), stream));
  return absl::OkStatus();
}

absl::Status CopyDevice(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n == 0 || dst == src) return absl::OkStatus();
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst, src, sizeof(float) * n, cudaMemcpyDeviceToDevice, stream));
  return absl::OkStatus();
}

}  // namespace tessera::exec::cuda
