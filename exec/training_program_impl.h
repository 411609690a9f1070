// Internal to the training program: its state (training_program.h's Impl), shared by
// training_program.cc (create, run, kernels) and training_program_hooks.cc (ProgramOptions'
// hooks: NodeKernels, the loss seed, gradient-ready reports).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/training_program.h"
#include "tessera/memory/arena.h"
#include "tessera/memory/device_memory.h"

namespace tessera::exec {

struct TrainingProgram::Impl {
  std::shared_ptr<Backend> backend;
  std::optional<memory::Arena> arena;               // in the back-end's memory
  std::vector<memory::DeviceAllocation> storage;    // persistent tensors, 64-byte aligned
  std::vector<std::byte*> value_addr;         // per tensor: its forward value
  std::vector<std::byte*> grad_addr;          // per tensor: its gradient (nullptr: none)
  // Per tensor: the gradient it shares its content with (a view's input and output gradients
  // are one accumulator); written[content] says whether it holds a value this step. Tensors
  // whose gradients hand memory over in place have different contents.
  std::vector<graph::TensorId> grad_content;
  std::vector<bool> written;
  std::vector<bool> input_set;                // per tensor (data inputs)
  std::vector<std::unique_ptr<NodeState>> states;  // per node, the back-end's
  costmodel::BackwardInfo backward;
  // The graph outputs: per output, a copy in the back-end's memory made by each step (the arena
  // slot is reused by backward), and on the host when read (`outputs`, by name).
  std::vector<memory::DeviceAllocation> output_storage;
  bool outputs_stale = false;
  absl::flat_hash_map<std::string, std::vector<float>> outputs;
  std::vector<memory::DeviceAllocation> scratch;  // per slot, grown as needed
  StepContext ctx;
  // ProgramOptions' hooks: per node its NodeKernel (null: the CPU kernel); the loss seed; per
  // schedule step the parameters whose gradients are final after it (and those never written,
  // reported at the end of the step).
  std::vector<std::shared_ptr<NodeKernel>> node_kernels;
  float loss_scale = 1.f;
  std::function<absl::Status(size_t)> on_gradient_ready;
  std::function<void(graph::NodeId, bool, double)> on_node_timed;
  std::vector<std::vector<size_t>> ready_after_step;
  std::vector<size_t> ready_at_end;

  int64_t Bytes(const graph::Graph& g, graph::TensorId t) const {
    return graph::NumElements(g.tensor(t).shape) * graph::DTypeSize(g.tensor(t).dtype);
  }
  TensorView View(const graph::Graph& g, graph::TensorId t, std::byte* addr) const {
    const graph::Tensor& x = g.tensor(t);
    return {.shape = x.shape, .data = addr, .dtype = x.dtype};
  }
  // Zeroed persistent storage for tensor t of g in the back-end's memory.
  absl::StatusOr<std::byte*> NewStorage(const graph::Graph& g, graph::TensorId t) {
    const int64_t words = std::max<int64_t>(1, (Bytes(g, t) + 3) / 4);
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation block,
                        memory::DeviceAllocation::Create(backend->memory(), words * 4, 64));
    TS_RETURN_IF_ERROR(backend->Fill({static_cast<float*>(block.data()),
                                      static_cast<size_t>(words)}, 0.f));
    storage.push_back(std::move(block));
    return static_cast<std::byte*>(storage.back().data());
  }
  // Zeroed scratch of `elements` floats in slot `slot`, kept for the next calls.
  absl::StatusOr<float*> Scratch(size_t slot, int64_t elements) {
    if (scratch.size() <= slot) scratch.resize(slot + 1);
    memory::DeviceAllocation& s = scratch[slot];
    const int64_t bytes = std::max<int64_t>(4, elements * 4);
    if (s.size() < bytes) {
      TS_RETURN_IF_ERROR(s.Reset());
      TS_ASSIGN_OR_RETURN(s, memory::DeviceAllocation::Create(backend->memory(), bytes, 64));
    }
    float* data = static_cast<float*>(s.data());
    TS_RETURN_IF_ERROR(backend->Fill({data, static_cast<size_t>(elements)}, 0.f));
    return data;
  }
  // A view whose output gradient is its input gradient's memory: one accumulator, one content.
  void LinkViewGradients(const graph::Graph& g) {
    const auto find = [&](graph::TensorId t) {
      while (grad_content[t] != t) t = grad_content[t];
      return t;
    };
    for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
      const graph::Node& node = g.node(n);
      if (!memory::IsViewOp(node.kind) || node.inputs.empty() || node.outputs.empty()) continue;
      const graph::TensorId x = node.inputs[0], y = node.outputs[0];
      if (x < 0 || y < 0 || grad_addr[x] == nullptr || grad_addr[x] != grad_addr[y]) continue;
      grad_content[find(y)] = find(x);
    }
    for (graph::TensorId t = 0; t < g.num_tensors(); ++t) grad_content[t] = find(t);
  }
};

}  // namespace tessera::exec
