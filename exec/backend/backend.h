// The execution seam: the one interface through which a training step reaches a device (after
// ggml's ggml_backend_i and Caffe's Forward_cpu/Forward_gpu). The training program
// (exec/training_program.h), the distributed layers (exec/node_kernel.h), the optimizer
// (exec/optimizer.h) and the end of a step (exec/step_end.h) are written once against it; the
// CPU back-end (cpu_backend.h) wraps the CPU kernels, the CUDA back-end (exec/cuda/backend.h)
// the CUDA kernels, cuBLAS and cuDNN.
//
//   TS_ASSIGN_OR_RETURN(std::unique_ptr<Backend> be, MakeBackend({.device = Device::kCuda}));
//   TS_ASSIGN_OR_RETURN(auto block, memory::DeviceAllocation::Create(be->memory(), bytes, 256));
//   TensorView x{.shape = {2, 3}, .data = block.data()};
//   std::unique_ptr<NodeState> state = be->NewNodeState();
//   TS_RETURN_IF_ERROR(be->Forward(relu_node, {x}, {y}, StepContext{}, *state));
//   TS_RETURN_IF_ERROR(be->CopyToHost(host.data(), y.data, y.bytes()));
//
// Conventions (the kernels'): tensors follow node.inputs / node.outputs; an absent optional
// input, an unwanted input gradient and a zero output gradient have data nullptr; Backward
// overwrites every requested input gradient. Floating tensors are float32; integer tensors
// carry their dtype. Pointers are the back-end's memory (host memory only for the CPU
// back-end: host code reads a back-end's memory through CopyToHost, never directly, unless
// host_memory() says it may). Calls may be asynchronous (the CUDA back-end enqueues them on its
// stream): CopyToHost, Inspect and Synchronize wait for what was enqueued before them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/device_memory.h"

namespace tessera::exec {

// An untyped dense row-major tensor in a back-end's memory.
struct TensorView {
  graph::Shape shape;
  void* data = nullptr;
  graph::DType dtype = graph::DType::kF32;

  int64_t size() const { return graph::NumElements(shape); }  // elements (1 for a scalar)
  int64_t bytes() const { return size() * graph::DTypeSize(dtype); }
  bool present() const { return data != nullptr; }
  float* floats() const { return static_cast<float*>(data); }
};
using TensorViews = absl::Span<const TensorView>;

// What every node call of one step shares.
struct StepContext {
  bool training = true;  // Dropout and BatchNorm behave as in training
  uint64_t seed = 0;     // dropout masks: from (seed, node, step), the same on every back-end
  int64_t step = 0;
};

// What one node's Forward leaves for its Backward (masks, statistics, gates): opaque, made by
// the back-end that uses it.
class NodeState {
 public:
  virtual ~NodeState() = default;
};

// One optimizer step's constants (exec/optimizer.h computes them; PyTorch's update rules):
// - SGD:      w -= lr * (g + wd * w)
// - momentum: v = mu * v + (g + wd * w); w -= lr * v
// - AdamW:    m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//             w -= step_size * m / (sqrt(v) * inv_sqrt_c2 + eps) + decay * w
// The constants are computed in double and rounded once, so every back-end applies the same
// float values.
struct UpdateRule {
  costmodel::OptimizerKind kind = costmodel::OptimizerKind::kSgd;
  float lr = 0, weight_decay = 0, momentum = 0, epsilon = 0;
  float beta1 = 0, beta2 = 0, one_minus_beta1 = 0, one_minus_beta2 = 0;
  float step_size = 0;    // AdamW: lr / (1 - beta1^t)
  float inv_sqrt_c2 = 0;  // AdamW: 1 / sqrt(1 - beta2^t)
  float decay = 0;        // AdamW: lr * wd
  // State vectors per parameter: momentum 1 (v), AdamW 2 (m, v), SGD none.
  int slots() const;
};

// What Inspect finds in a list of float arrays (gradients, before the update).
struct ArrayStats {
  std::vector<double> squares;  // per array: the sum of its squares (when asked)
  bool finite = true;           // no NaN or infinity in any of them
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual absl::string_view name() const = 0;  // "cpu", "cuda"
  // Whether host code may read and write this back-end's memory directly (the CPU's).
  virtual bool host_memory() const = 0;
  // Where the program's arena, parameters, gradients and optimizer state live.
  virtual memory::DeviceMemory& memory() = 0;

  // A node's kernels. Covers: whether `kind` has a kernel here (the others are an
  // InvalidArgument naming the node at TrainingProgram::Create).
  virtual bool Covers(graph::OpKind kind) const = 0;
  virtual std::unique_ptr<NodeState> NewNodeState() const = 0;
  virtual absl::Status Forward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                               const StepContext& ctx, NodeState& state) = 0;
  virtual absl::Status Backward(const graph::Node& node, TensorViews inputs, TensorViews outputs,
                                TensorViews grad_outputs, TensorViews grad_inputs,
                                const StepContext& ctx, const NodeState& state) = 0;

  // Moving and combining memory. `bytes` and sizes may be 0.
  virtual absl::Status CopyFromHost(void* dst, const void* host_src, int64_t bytes) = 0;
  virtual absl::Status CopyToHost(void* host_dst, const void* src, int64_t bytes) = 0;
  virtual absl::Status Copy(void* dst, const void* src, int64_t bytes) = 0;
  virtual absl::Status Fill(absl::Span<float> x, float value) = 0;
  virtual absl::Status Accumulate(absl::Span<float> dst, absl::Span<const float> src) = 0;
  virtual absl::Status Scale(absl::Span<float> x, float factor) = 0;
  // Sums of squares (in double, when `squares`) and the finiteness of the arrays.
  virtual absl::StatusOr<ArrayStats> Inspect(absl::Span<const absl::Span<const float>> arrays,
                                             bool squares) = 0;

  // One optimizer update of `w` from `g`; `slots` holds rule.slots() arrays of w's size.
  virtual absl::Status Update(const UpdateRule& rule, absl::Span<float> w,
                              absl::Span<const float> g, absl::Span<float* const> slots) = 0;

  // Waits until everything enqueued has run; its errors as a Status.
  virtual absl::Status Synchronize() = 0;
};

enum class Device : uint8_t { kCpu, kCuda };
absl::string_view DeviceName(Device device);  // "cpu", "cuda"
// InvalidArgument naming `name` and the known devices.
absl::StatusOr<Device> ParseDevice(absl::string_view name);

struct BackendOptions {
  Device device = Device::kCpu;
  int threads = 2;       // CPU: intra-op threads (Eigen, OpenBLAS)
  int cuda_device = 0;   // CUDA: which GPU
  bool tf32 = false;     // CUDA: let cuBLAS and cuDNN use TF32 tensor cores
};

// The back-end for `options.device`. FailedPrecondition with the check that failed when it
// cannot run here (a build without CUDA, no GPU, a driver older than the runtime).
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options);

// Which ops each back-end has kernels for: one row per op kind of the catalogue (cuda false
// throughout in builds without CUDA; docs/backends.md shows the table).
struct OpCoverage {
  graph::OpKind kind;
  bool cpu = false, cuda = false;
};
std::vector<OpCoverage> KernelCoverage();

// A back-end's arrays, read to or written from the host: what checkpoints, parameter files and
// evaluation use. InvalidArgument when the sizes differ.
absl::StatusOr<std::vector<float>> ReadFloats(Backend& backend, absl::Span<const float> array);
absl::Status WriteFloats(Backend& backend, absl::Span<float> array,
                         absl::Span<const float> values);

}  // namespace tessera::exec
