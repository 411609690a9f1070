// The CUDA back-end of the execution seam (backend.h).
#include "tessera/exec/cuda/backend.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/cuda/backend_kernels_impl.h"
#include "tessera/exec/cuda/op_kernels.h"
#include "tessera/memory/cached_memory.h"
#include "tessera/memory/cuda/cuda_memory.h"

namespace tessera::exec::cuda {
namespace {

// A non-blocking stream (it does not wait for the legacy default stream), destroyed with its
// owner.
class Stream {
 public:
  static absl::StatusOr<Stream> Create() {
    cudaStream_t s = nullptr;
    TS_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
  }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  explicit Stream(cudaStream_t s) : stream_(s) {}
  cudaStream_t stream_ = nullptr;
};

struct CudaNodeState : NodeState {
  OpState op;
};

std::vector<Tensor> DeviceTensors(TensorViews views) {
  std::vector<Tensor> out;
  out.reserve(views.size());
  for (const TensorView& v : views) {
    out.push_back({.shape = v.shape, .data = static_cast<float*>(v.data), .dtype = v.dtype});
  }
  return out;
}

absl::Status SizeError(absl::string_view what, size_t a, size_t b) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": arrays of ", a, " and ", b, " values; they must match"));
}

// The rule's constants for the kernels; an unknown kind is AdamW, as on the CPU.
UpdateConstants Constants(const UpdateRule& rule) {
  UpdateConstants c{.lr = rule.lr, .weight_decay = rule.weight_decay, .momentum = rule.momentum,
                    .epsilon = rule.epsilon, .beta1 = rule.beta1, .beta2 = rule.beta2,
                    .one_minus_beta1 = rule.one_minus_beta1,
                    .one_minus_beta2 = rule.one_minus_beta2, .step_size = rule.step_size,
                    .inv_sqrt_c2 = rule.inv_sqrt_c2, .decay = rule.decay};
  switch (rule.kind) {
    case costmodel::OptimizerKind::kSgd: c.kind = UpdateKind::kSgd; break;
    case costmodel::OptimizerKind::kMomentum: c.kind = UpdateKind::kMomentum; break;
    default: c.kind = UpdateKind::kAdamW; break;
  }
  return c;
}

// State arrays per parameter (UpdateRule::slots(), without linking tessera_exec).
int StateArrays(UpdateKind kind) {
  return kind == UpdateKind::kSgd ? 0 : (kind == UpdateKind::kMomentum ? 1 : 2);
}

class CudaBackend : public Backend {
 public:
  CudaBackend(int device, bool tf32, std::unique_ptr<memory::CudaMemory> memory, Stream stream,
              CublasHandle blas, CudnnHandle dnn)
      : device_(device), tf32_(tf32), memory_(std::move(memory)),
        cached_(std::make_unique<memory::CachedMemory>(*memory_)), stream_(std::move(stream)),
        blas_(std::move(blas)), dnn_(std::move(dnn)) {}
  // Waits for the stream before the members go (in reverse order: the Inspect scratch, then the
  // handles bound to the stream, the stream, and last the memory they all used).
  ~CudaBackend() override {
    if (cudaSetDevice(device_) == cudaSuccess) cudaStreamSynchronize(stream_.get());
  }

  absl::string_view name() const override { return "cuda"; }
  bool host_memory() const override { return false; }
  // Through a cache: the kernels' scratch, freed after each call, is reused from the second
  // step on instead of going back to cudaFree (memory/cached_memory.h).
  memory::DeviceMemory& memory() override { return *cached_; }

  bool Covers(graph::OpKind kind) const override { return HasCudaKernel(kind); }
  std::unique_ptr<NodeState> NewNodeState() const override {
    return std::make_unique<CudaNodeState>();
  }
  absl::Status Forward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                       const StepContext& ctx, NodeState& state) override;
  absl::Status Backward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                        TensorViews grad_outputs, TensorViews grad_inputs, const StepContext& ctx,
                        const NodeState& state) override;

  absl::Status CopyFromHost(void* dst, const void* host_src, int64_t bytes) override;
  absl::Status CopyToHost(void* host_dst, const void* src, int64_t bytes) override;
  absl::Status Copy(void* dst, const void* src, int64_t bytes) override;
  absl::Status Fill(absl::Span<float> x, float value) override {
    TS_RETURN_IF_ERROR(Bind());
    TS_CUDA_RETURN_IF_ERROR(LaunchFillValue(x.data(), x.size(), value, stream_.get()));
    return absl::OkStatus();
  }
  absl::Status Accumulate(absl::Span<float> dst, absl::Span<const float> src) override {
    if (dst.size() != src.size()) return SizeError("Accumulate", dst.size(), src.size());
    TS_RETURN_IF_ERROR(Bind());
    TS_CUDA_RETURN_IF_ERROR(LaunchAccumulate(dst.data(), src.data(), dst.size(), stream_.get()));
    return absl::OkStatus();
  }
  absl::Status Scale(absl::Span<float> x, float factor) override {
    TS_RETURN_IF_ERROR(Bind());
    TS_CUDA_RETURN_IF_ERROR(LaunchScale(x.data(), x.size(), factor, stream_.get()));
    return absl::OkStatus();
  }
  absl::StatusOr<ArrayStats> Inspect(absl::Span<const absl::Span<const float>> arrays,
                                     bool squares) override;
  absl::Status Update(const UpdateRule& rule, absl::Span<float> w, absl::Span<const float> g,
                      absl::Span<float* const> slots) override;
  absl::Status Synchronize() override {
    TS_RETURN_IF_ERROR(Bind());
    TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_.get()));
    TS_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

 private:
  // Makes this back-end's GPU current on the calling thread (cheap when it already is).
  absl::Status Bind() const {
    TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return absl::OkStatus();
  }
  KernelContext Context(const StepContext& ctx) {
    return {.stream = stream_.get(), .blas = blas_.get(), .dnn = dnn_.get(),
            .memory = cached_.get(), .training = ctx.training, .seed = ctx.seed,
            .step = ctx.step, .tf32 = tf32_};
  }
  absl::Status UpdateRunningStatistics(const graph::Node& node, const std::vector<Tensor>& in,
                                       const OpState& op);
  absl::StatusOr<double*> InspectScratch(int64_t values);

  int device_;
  bool tf32_;
  std::unique_ptr<memory::CudaMemory> memory_;
  std::unique_ptr<memory::CachedMemory> cached_;  // over memory_; gives its segments back first
  Stream stream_;
  CublasHandle blas_;  // bound to stream_; math mode from tf32
  CudnnHandle dnn_;    // bound to stream_
  memory::DeviceAllocation inspect_;  // Inspect's results, kept between calls (grows)
};

absl::Status CudaBackend::Forward(const graph::Node& node, TensorViews inputs,
                                  TensorViews outputs, const StepContext& ctx, NodeState& state) {
  TS_RETURN_IF_ERROR(Bind());
  const std::vector<Tensor> in = DeviceTensors(inputs);
  OpState& op = static_cast<CudaNodeState&>(state).op;
  TS_RETURN_IF_ERROR(cuda::Forward(node, in, DeviceTensors(outputs), Context(ctx), op));
  if (node.kind == graph::OpKind::kBatchNorm && ctx.training) {
    return UpdateRunningStatistics(node, in, op);
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::Backward(const graph::Node& node, TensorViews inputs,
                                   TensorViews outputs, TensorViews grad_outputs,
                                   TensorViews grad_inputs, const StepContext& ctx,
                                   const NodeState& state) {
  TS_RETURN_IF_ERROR(Bind());
  return cuda::Backward(node, DeviceTensors(inputs), DeviceTensors(outputs),
                        DeviceTensors(grad_outputs), DeviceTensors(grad_inputs), Context(ctx),
                        static_cast<const CudaNodeState&>(state).op);
}

// Batch norm in training: running = momentum * running + (1 - momentum) * batch statistic
// (ONNX's momentum) for inputs 3 (mean) and 4 (variance), from the batch mean and unbiased
// variance the kernel left in state.buffers[0] and [2] (batchnorm_ops.cc). Enqueued after the
// forward on the same stream, so it reads the statistics the forward wrote.
absl::Status CudaBackend::UpdateRunningStatistics(const graph::Node& node,
                                                  const std::vector<Tensor>& in,
                                                  const OpState& op) {
  const auto* attrs = std::get_if<graph::BatchNormAttrs>(&node.attrs);
  if (attrs == nullptr || in.size() < 5 || op.buffers.size() < 3 || in[0].shape.size() < 2) {
    return absl::OkStatus();
  }
  const int64_t channels = in[0].shape[1];
  for (int k = 0; k < 2; ++k) {
    const Tensor& running = in[3 + k];
    if (!running.present() || running.size() != channels) continue;
    const auto* batch = static_cast<const float*>(op.buffers[k == 0 ? 0 : 2].data());
    TS_CUDA_RETURN_IF_ERROR(
        LaunchRunningStatistic(running.data, batch, channels, attrs->momentum, stream_.get()));
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::CopyFromHost(void* dst, const void* host_src, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  TS_RETURN_IF_ERROR(Bind());
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, host_src, static_cast<size_t>(bytes),
                                          cudaMemcpyHostToDevice, stream_.get()));
  // The caller may free or reuse `host_src` on return; with pinned memory the copy above would
  // still be reading it (and with pageable memory the driver gives no promise), so wait.
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_.get()));
  return absl::OkStatus();
}

absl::Status CudaBackend::CopyToHost(void* host_dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  TS_RETURN_IF_ERROR(Bind());
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_dst, src, static_cast<size_t>(bytes),
                                          cudaMemcpyDeviceToHost, stream_.get()));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_.get()));  // the host reads it next
  return absl::OkStatus();
}

absl::Status CudaBackend::Copy(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0 || dst == src) return absl::OkStatus();
  // cudaMemcpy's regions must not overlap (the CPU back-end's memmove allows it).
  const auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  const auto n = static_cast<uintptr_t>(bytes);
  if (d < s + n && s < d + n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Copy of ", bytes, " bytes: the source and destination overlap on the CUDA back-end; "
        "copy through a separate buffer"));
  }
  TS_RETURN_IF_ERROR(Bind());
  TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                          cudaMemcpyDeviceToDevice, stream_.get()));
  return absl::OkStatus();
}

// `values` doubles of device memory for Inspect's results. The previous block is idle: every
// Inspect waits for its results before it returns.
absl::StatusOr<double*> CudaBackend::InspectScratch(int64_t values) {
  const int64_t bytes = values * static_cast<int64_t>(sizeof(double));
  if (inspect_.size() < bytes) {
    TS_RETURN_IF_ERROR(inspect_.Reset());
    TS_ASSIGN_OR_RETURN(inspect_, memory::DeviceAllocation::Create(*cached_, bytes, 256));
  }
  return static_cast<double*>(inspect_.data());
}

// Results on the device: slot 0 holds the non-finite flag (an unsigned int in a double's
// place), slot 1 + k the sum of squares of array k. One kernel per array adds to its slot; one
// copy brings every slot back, and one wait covers them all.
absl::StatusOr<ArrayStats> CudaBackend::Inspect(absl::Span<const absl::Span<const float>> arrays,
                                                bool squares) {
  TS_RETURN_IF_ERROR(Bind());
  const int64_t values = 1 + (squares ? static_cast<int64_t>(arrays.size()) : 0);
  const size_t bytes = static_cast<size_t>(values) * sizeof(double);
  TS_ASSIGN_OR_RETURN(double* results, InspectScratch(values));
  auto* nonfinite = reinterpret_cast<unsigned int*>(results);
  TS_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(results, 0, bytes, stream_.get()));  // 0.0 and flag 0
  for (size_t k = 0; k < arrays.size(); ++k) {
    double* sum = squares ? results + 1 + k : nullptr;
    TS_CUDA_RETURN_IF_ERROR(LaunchSumSquares(arrays[k].data(), arrays[k].size(), sum, nonfinite,
                                             stream_.get()));
  }
  std::vector<double> host(values);
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host.data(), results, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_.get()));
  unsigned int flag = 0;
  std::memcpy(&flag, host.data(), sizeof(flag));
  ArrayStats stats;
  stats.finite = flag == 0;
  if (squares) stats.squares.assign(host.begin() + 1, host.end());
  return stats;
}

absl::Status CudaBackend::Update(const UpdateRule& rule, absl::Span<float> w,
                                 absl::Span<const float> g, absl::Span<float* const> slots) {
  if (w.size() != g.size()) return SizeError("Update", w.size(), g.size());
  const UpdateConstants c = Constants(rule);
  const int needed = StateArrays(c.kind);
  if (static_cast<int>(slots.size()) != needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("Update: the rule needs ", needed, " state arrays, got ", slots.size()));
  }
  TS_RETURN_IF_ERROR(Bind());
  float* s0 = needed > 0 ? slots[0] : nullptr;
  float* s1 = needed > 1 ? slots[1] : nullptr;
  TS_CUDA_RETURN_IF_ERROR(LaunchUpdate(c, w.data(), g.data(), s0, s1, w.size(), stream_.get()));
  return absl::OkStatus();
}

// The GPU, its memory, a stream, and cuBLAS and cuDNN handles bound to it.
absl::StatusOr<std::unique_ptr<Backend>> Create(int device, bool tf32) {
  TS_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  TS_ASSIGN_OR_RETURN(std::unique_ptr<memory::CudaMemory> memory,
                      memory::CudaMemory::Create(device));
  TS_ASSIGN_OR_RETURN(Stream stream, Stream::Create());
  TS_ASSIGN_OR_RETURN(CublasHandle blas, CublasHandle::Create());
  TS_CUBLAS_RETURN_IF_ERROR(cublasSetStream(blas.get(), stream.get()));
  // Default math is FP32 for FP32 products; TF32 tensor cores only when asked.
  TS_CUBLAS_RETURN_IF_ERROR(
      cublasSetMathMode(blas.get(), tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  TS_ASSIGN_OR_RETURN(CudnnHandle dnn, CudnnHandle::Create());
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetStream(dnn.get(), stream.get()));
  return std::make_unique<CudaBackend>(device, tf32, std::move(memory), std::move(stream),
                                       std::move(blas), std::move(dnn));
}

}  // namespace

absl::StatusOr<std::unique_ptr<exec::Backend>> MakeCudaBackend(const CudaBackendOptions& options) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error for later calls
    return absl::FailedPreconditionError(absl::StrCat(
        "device cuda: no CUDA device: cudaGetDeviceCount failed: ", cudaGetErrorName(code), " (",
        cudaGetErrorString(code), "); check the NVIDIA driver (nvidia-smi) or use --device cpu"));
  }
  if (count == 0) {
    return absl::FailedPreconditionError(
        "device cuda: no CUDA device: cudaGetDeviceCount found 0 devices; use --device cpu");
  }
  if (options.device < 0 || options.device >= count) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device cuda: CUDA device ", options.device, " is out of range: this machine has ",
        count, " CUDA device(s), 0 to ", count - 1));
  }
  return Create(options.device, options.tf32);
}

}  // namespace tessera::exec::cuda
