// The single-worker training step (training_program.h). Step by step:
// 1. Create: lifetimes of the step (memory/lifetime.h), the arena's offsets
//    (memory/offset_planner.h), one arena in the back-end's memory, storage for parameters,
//    gradients and constants, and the address of every value.
// 2. RunStep: the schedule's forward steps run the nodes' forward kernels; the graph outputs are
//    copied out; the loss gradient is seeded with 1; the backward steps run the backward kernels
//    in reverse order, summing the contributions of a tensor's consumers into its gradient.
#include "tessera/exec/training_program.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/exec/backend/cpu_backend.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/param_init.h"
#include "tessera/exec/training_program_impl.h"
#include "tessera/memory/arena.h"
#include "tessera/memory/device_memory.h"

namespace tessera::exec {
namespace {

using graph::OpKind;
using graph::TensorId;
using Span = std::pair<const std::byte*, int64_t>;  // [address, bytes)

bool Overlap(const Span& a, const Span& b) {
  return a.first != nullptr && b.first != nullptr && a.first < b.first + b.second &&
         b.first < a.first + a.second;
}

}  // namespace

TrainingProgram::TrainingProgram(graph::Graph graph)
    : graph_(std::move(graph)), impl_(std::make_unique<Impl>()) {}
TrainingProgram::~TrainingProgram() = default;

namespace {

absl::Status CheckKernelsAndLoss(const graph::Graph& g, const ProgramOptions& options,
                                 const Backend& backend) {
  std::vector<std::string> missing;
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) {
    const std::string name(graph::OpName(g.node(n).kind));
    if (!backend.Covers(g.node(n).kind) && !options.node_kernels.contains(g.node(n).name) &&
        std::find(missing.begin(), missing.end(), name) == missing.end()) {
      missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", g.name(), "' uses ops without a ", backend.name(), " kernel yet: ",
        absl::StrJoin(missing, ", ")));
  }
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    const graph::Tensor& x = g.tensor(t);
    if (x.dtype == graph::DType::kF16 || x.dtype == graph::DType::kBF16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", g.name(), "': tensor '", x.name, "' is ", graph::DTypeName(x.dtype),
          "; the ", backend.name(), " kernels train float32 models only"));
    }
  }
  if (g.outputs().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", g.name(), "' has no output to use as the loss"));
  }
  const graph::Tensor& loss = g.tensor(g.outputs()[0]);
  if (graph::NumElements(loss.shape) != 1 || !graph::IsFloating(loss.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", g.name(), "': the first output '", loss.name,
        "' is the loss and must be one floating value; it has shape [",
        absl::StrJoin(loss.shape, ","), "]"));
  }
  return absl::OkStatus();
}

// An integer constant's values (Tensor::data) in its dtype; zeros when the graph has none.
absl::Status StoreIntegerConstant(Backend& backend, const graph::Tensor& x, std::byte* addr) {
  if (x.role != graph::TensorRole::kConstant || x.data.empty() || addr == nullptr) {
    return absl::OkStatus();
  }
  const int64_t n = graph::NumElements(x.shape);
  std::vector<std::byte> host(n * graph::DTypeSize(x.dtype));
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.data[static_cast<size_t>(i) % x.data.size()];
    if (x.dtype == graph::DType::kI64) reinterpret_cast<int64_t*>(host.data())[i] = static_cast<int64_t>(v);
    if (x.dtype == graph::DType::kI32) reinterpret_cast<int32_t*>(host.data())[i] = static_cast<int32_t>(v);
    if (x.dtype == graph::DType::kBool) reinterpret_cast<uint8_t*>(host.data())[i] = v != 0;
  }
  return backend.CopyFromHost(addr, host.data(), static_cast<int64_t>(host.size()));
}

}  // namespace

// share_persistent_with: the tensors of g that use `other`'s storage (ProgramOptions).
absl::StatusOr<absl::flat_hash_map<TensorId, TrainingProgram::SharedTensor>>
TrainingProgram::SharedPersistentTensors(const graph::Graph& g, const TrainingProgram& other,
                                         uint64_t seed) {
  absl::flat_hash_map<TensorId, SharedTensor> out;
  const graph::Graph& og = other.graph_;
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    const graph::Tensor& x = g.tensor(t);
    const bool parameter = x.role == graph::TensorRole::kParameter;
    if (!parameter && !(x.role == graph::TensorRole::kConstant && graph::IsFloating(x.dtype))) {
      continue;
    }
    const std::optional<TensorId> o = og.FindTensor(x.name);
    const bool alike = o.has_value() && og.tensor(*o).role == x.role &&
                       og.tensor(*o).dtype == x.dtype &&
                       graph::NumElements(og.tensor(*o).shape) == graph::NumElements(x.shape);
    if (parameter && !alike) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", g.name(), "' cannot share parameter '", x.name, "' (",
          graph::NumElements(x.shape), " values) with model '", og.name(), "'",
          o.has_value() ? absl::StrCat(", whose '", x.name, "' holds ",
                                       graph::NumElements(og.tensor(*o).shape), " values")
                        : ", which has no such parameter"));
    }
    if (!alike) continue;
    if (!parameter) {  // a constant both define alike (e.g. running statistics), not a table
      TS_ASSIGN_OR_RETURN(std::vector<float> mine, InitialValues(g, t, seed));
      TS_ASSIGN_OR_RETURN(std::vector<float> theirs, InitialValues(og, *o, seed));
      if (mine != theirs) continue;
    }
    out[t] = {.value = other.impl_->value_addr[*o], .grad = other.impl_->grad_addr[*o]};
  }
  return out;
}

absl::StatusOr<std::unique_ptr<TrainingProgram>> TrainingProgram::Create(
    graph::Graph graph, const ProgramOptions& options) {
  const TrainingProgram* shared = options.share_persistent_with;
  std::shared_ptr<Backend> backend = shared != nullptr ? shared->impl_->backend : options.backend;
  if (backend == nullptr) {
    backend = MakeCpuBackend(options.threads);
    cpu::SetBlasThreads(options.threads);
  }
  TS_RETURN_IF_ERROR(CheckKernelsAndLoss(graph, options, *backend));
  std::unique_ptr<TrainingProgram> p(new TrainingProgram(std::move(graph)));
  const graph::Graph& g = p->graph_;
  Impl& m = *p->impl_;
  m.backend = std::move(backend);
  memory::LifetimeOptions lifetime_options{.in_place = options.in_place, .alignment = 64};
  for (const auto& [name, kernel] : options.node_kernels) lifetime_options.custom_nodes.insert(name);
  TS_ASSIGN_OR_RETURN(p->lifetimes_, memory::AnalyzeTrainingLifetimes(g, lifetime_options));
  const std::vector<memory::Buffer> buffers = memory::TransientBuffers(p->lifetimes_);
  TS_ASSIGN_OR_RETURN(p->arena_plan_,
                      memory::PlanOffsets(buffers, {.time_limit_s = options.plan_time_limit_s}));
  TS_ASSIGN_OR_RETURN(m.arena, memory::Arena::Create(m.backend->memory(),
                                                     std::max<int64_t>(64, p->arena_plan_.arena_bytes)));
  absl::flat_hash_map<int64_t, int64_t> offset_of_root;
  for (size_t i = 0; i < buffers.size(); ++i) offset_of_root[buffers[i].id] = p->arena_plan_.offsets[i];
  const auto root = [&](int64_t v) {
    while (p->lifetimes_.values[v].shares_with >= 0) v = p->lifetimes_.values[v].shares_with;
    return v;
  };
  m.value_addr.assign(g.num_tensors(), nullptr);
  m.grad_addr.assign(g.num_tensors(), nullptr);
  m.grad_content.resize(g.num_tensors());
  for (TensorId t = 0; t < g.num_tensors(); ++t) m.grad_content[t] = t;
  m.input_set.assign(g.num_tensors(), false);
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) m.states.push_back(m.backend->NewNodeState());
  m.backward = costmodel::AnalyzeBackward(g);
  m.ctx = {.seed = options.seed};
  TS_RETURN_IF_ERROR(p->InstallHooks(options));
  absl::flat_hash_map<TensorId, SharedTensor> shared_of;
  if (shared != nullptr) {
    TS_ASSIGN_OR_RETURN(shared_of, SharedPersistentTensors(g, *shared, options.seed));
  }
  std::byte* base = static_cast<std::byte*>(m.arena->base());
  const auto& values = p->lifetimes_.values;
  absl::flat_hash_map<TensorId, std::byte*> storage_of;  // persistent tensors' storage
  for (size_t v = 0; v < values.size(); ++v) {
    const memory::Value& val = values[v];
    if (val.tensor < 0) continue;
    const bool gradient = val.kind == memory::ValueKind::kActivationGradient ||
                          val.kind == memory::ValueKind::kParameterGradient;
    std::byte* addr = nullptr;
    const int64_t r = root(static_cast<int64_t>(v));
    if (auto it = offset_of_root.find(r); it != offset_of_root.end()) {
      addr = base + it->second;
    } else if (val.kind == memory::ValueKind::kOptimizerState || val.kind == memory::ValueKind::kSaved) {
      continue;  // the optimizer and the kernels keep these themselves
    } else {
      // Persistent: its own storage (a group of views of a weight shares the root's).
      const TensorId owner = values[r].tensor;
      const bool owner_grad = values[r].kind == memory::ValueKind::kParameterGradient ||
                              values[r].kind == memory::ValueKind::kActivationGradient;
      const TensorId key = owner_grad ? -2 - owner : owner;
      auto [it, inserted] = storage_of.try_emplace(key, nullptr);
      if (auto s = shared_of.find(owner); inserted && s != shared_of.end()) {
        it->second = owner_grad ? s->second.grad : s->second.value;
      }
      if (it->second == nullptr) {
        TS_ASSIGN_OR_RETURN(it->second, m.NewStorage(g, owner));
      }
      addr = it->second;
    }
    if (gradient) {
      m.grad_addr[val.tensor] = addr;
    } else {
      m.value_addr[val.tensor] = addr;
    }
  }
  m.LinkViewGradients(g);
  m.written.assign(g.num_tensors(), false);
  for (TensorId t : g.outputs()) {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation block,
                        memory::DeviceAllocation::Create(
                            m.backend->memory(), std::max<int64_t>(4, m.Bytes(g, t)), 64));
    m.output_storage.push_back(std::move(block));
  }
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    const graph::Tensor& x = g.tensor(t);
    if (x.role != graph::TensorRole::kParameter && x.role != graph::TensorRole::kConstant) continue;
    const auto s = shared_of.find(t);
    if (s != shared_of.end()) {  // the other program's, values and all
      if (m.value_addr[t] == nullptr) m.value_addr[t] = s->second.value;
      if (m.grad_addr[t] == nullptr) m.grad_addr[t] = s->second.grad;
    }
    if (m.value_addr[t] == nullptr) {  // not read by any node: still give it storage
      TS_ASSIGN_OR_RETURN(m.value_addr[t], m.NewStorage(g, t));
    }
    if (!graph::IsFloating(x.dtype)) {
      TS_RETURN_IF_ERROR(StoreIntegerConstant(*m.backend, x, m.value_addr[t]));  // gather indices
      continue;
    }
    if (s == shared_of.end()) {
      TS_ASSIGN_OR_RETURN(std::vector<float> init, InitialValues(g, t, options.seed));
      TS_RETURN_IF_ERROR(
          m.backend->CopyFromHost(m.value_addr[t], init.data(), init.size() * sizeof(float)));
    }
    if (x.role != graph::TensorRole::kParameter) continue;
    if (m.grad_addr[t] == nullptr) {
      TS_ASSIGN_OR_RETURN(m.grad_addr[t], m.NewStorage(g, t));
    }
    const auto n = static_cast<size_t>(graph::NumElements(x.shape));
    p->parameters_.push_back({.name = x.name, .tensor = t,
                              .value = {reinterpret_cast<float*>(m.value_addr[t]), n},
                              .grad = {reinterpret_cast<float*>(m.grad_addr[t]), n}});
  }
  p->ScheduleGradientReady();
  return p;
}

namespace {

absl::StatusOr<TensorId> DataInput(const graph::Graph& g, absl::string_view name) {
  std::optional<TensorId> t = g.FindTensor(name);
  if (!t.has_value() || g.tensor(*t).role != graph::TensorRole::kInput) {
    std::vector<std::string> names;
    for (TensorId i = 0; i < g.num_tensors(); ++i) {
      if (g.tensor(i).role == graph::TensorRole::kInput) names.push_back(g.tensor(i).name);
    }
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a data input of model '",
                                                   g.name(), "'; its inputs are ",
                                                   absl::StrJoin(names, ", ")));
  }
  return *t;
}

absl::Status CheckCount(const graph::Tensor& x, size_t count) {
  if (static_cast<int64_t>(count) != graph::NumElements(x.shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", x.name, "' holds ", graph::NumElements(x.shape), " values (shape [",
        absl::StrJoin(x.shape, ","), "]); got ", count));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TrainingProgram::SetInput(absl::string_view name, absl::Span<const float> values) {
  TS_ASSIGN_OR_RETURN(TensorId t, DataInput(graph_, name));
  const graph::Tensor& x = graph_.tensor(t);
  if (!graph::IsFloating(x.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", x.name, "' is ", graph::DTypeName(x.dtype), "; pass integers, not floats"));
  }
  TS_RETURN_IF_ERROR(CheckCount(x, values.size()));
  if (impl_->value_addr[t] != nullptr) {
    TS_RETURN_IF_ERROR(impl_->backend->CopyFromHost(impl_->value_addr[t], values.data(),
                                                    values.size() * sizeof(float)));
  }
  impl_->input_set[t] = true;
  return absl::OkStatus();
}

absl::Status TrainingProgram::SetInput(absl::string_view name, absl::Span<const int64_t> values) {
  TS_ASSIGN_OR_RETURN(TensorId t, DataInput(graph_, name));
  const graph::Tensor& x = graph_.tensor(t);
  if (x.dtype != graph::DType::kI64 && x.dtype != graph::DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", x.name, "' is ", graph::DTypeName(x.dtype), "; pass floats, not integers"));
  }
  TS_RETURN_IF_ERROR(CheckCount(x, values.size()));
  std::byte* addr = impl_->value_addr[t];
  if (addr != nullptr && x.dtype == graph::DType::kI64) {
    TS_RETURN_IF_ERROR(
        impl_->backend->CopyFromHost(addr, values.data(), values.size() * sizeof(int64_t)));
  } else if (addr != nullptr) {
    std::vector<int32_t> narrow(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < INT32_MIN || values[i] > INT32_MAX) {
        return absl::InvalidArgumentError(absl::StrCat("input '", x.name, "' is int32; value ",
                                                       values[i], " at ", i, " does not fit"));
      }
      narrow[i] = static_cast<int32_t>(values[i]);
    }
    TS_RETURN_IF_ERROR(
        impl_->backend->CopyFromHost(addr, narrow.data(), narrow.size() * sizeof(int32_t)));
  }
  impl_->input_set[t] = true;
  return absl::OkStatus();
}

float TrainingProgram::Loss() const {
  if (!ReadOutputs().ok()) return std::numeric_limits<float>::quiet_NaN();
  auto it = impl_->outputs.find(graph_.tensor(graph_.outputs()[0]).name);
  return it == impl_->outputs.end() || it->second.empty() ? 0.f : it->second[0];
}

Backend& TrainingProgram::backend() const { return *impl_->backend; }

namespace {

// A parameter's or floating constant's values in the program's memory; empty for other names.
absl::Span<float> PersistentArray(const graph::Graph& g, const std::vector<std::byte*>& addr,
                                  absl::string_view name) {
  std::optional<TensorId> t = g.FindTensor(name);
  if (!t.has_value()) return {};
  const graph::Tensor& x = g.tensor(*t);
  const bool persistent =
      x.role == graph::TensorRole::kParameter || x.role == graph::TensorRole::kConstant;
  if (!persistent || !graph::IsFloating(x.dtype) || addr[*t] == nullptr) return {};
  return {reinterpret_cast<float*>(addr[*t]), static_cast<size_t>(graph::NumElements(x.shape))};
}

}  // namespace

std::vector<float> TrainingProgram::PersistentValue(absl::string_view name) const {
  const absl::Span<float> array = PersistentArray(graph_, impl_->value_addr, name);
  absl::StatusOr<std::vector<float>> values = ReadFloats(*impl_->backend, array);
  return values.ok() ? *std::move(values) : std::vector<float>{};
}

absl::Status TrainingProgram::SetPersistentValue(absl::string_view name,
                                                 absl::Span<const float> values) {
  const absl::Span<float> current = PersistentArray(graph_, impl_->value_addr, name);
  if (current.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a floating parameter or "
                                                   "constant of model '", graph_.name(), "'"));
  }
  if (current.size() != values.size()) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' of model '", graph_.name(),
                                                   "' holds ", current.size(), " values, not ",
                                                   values.size()));
  }
  return WriteFloats(*impl_->backend, current, values);
}

absl::Span<const float> TrainingProgram::Output(absl::string_view name) const {
  if (!ReadOutputs().ok()) return {};
  auto it = impl_->outputs.find(std::string(name));
  if (it == impl_->outputs.end()) return {};
  return it->second;
}

absl::Status TrainingProgram::RunStep() { return Run(/*backward=*/true, /*training=*/true); }
absl::Status TrainingProgram::RunForward(bool training) { return Run(false, training); }

namespace {

// What one kernel call reads, for the aliasing checks.
std::vector<Span> Reads(const std::vector<TensorView>& tensors) {
  std::vector<Span> spans;
  for (const TensorView& t : tensors) {
    if (t.present()) spans.push_back({static_cast<const std::byte*>(t.data), t.bytes()});
  }
  return spans;
}

bool OverlapsAny(const Span& w, const std::vector<Span>& reads, const std::byte* allowed) {
  for (const Span& r : reads) {
    if (Overlap(w, r) && !(r.first == allowed && w.first == allowed)) return true;
  }
  return false;
}

}  // namespace

absl::Status TrainingProgram::Run(bool backward, bool training) {
  Impl& m = *impl_;
  const graph::Graph& g = graph_;
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (g.tensor(t).role == graph::TensorRole::kInput && m.value_addr[t] != nullptr &&
        !m.input_set[t]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "input '", g.tensor(t).name, "' was not set for this step (SetInput before every step: "
          "data inputs live in the arena)"));
    }
  }
  m.ctx.training = training;
  m.ctx.step = steps_run_;
  std::fill(m.written.begin(), m.written.end(), false);
  bool outputs_copied = false;
  for (size_t k = 0; k < lifetimes_.steps.size(); ++k) {
    const memory::Step& step = lifetimes_.steps[k];
    if (step.phase != memory::Phase::kForward && !outputs_copied) {
      TS_RETURN_IF_ERROR(CopyOutputs());
      outputs_copied = true;
      if (!backward) break;
      TS_RETURN_IF_ERROR(SeedLoss());
    }
    if (step.phase == memory::Phase::kForward) {
      TS_RETURN_IF_ERROR(TimedNode(step.node, /*backward=*/false));
    } else if (step.phase == memory::Phase::kBackward) {
      TS_RETURN_IF_ERROR(TimedNode(step.node, /*backward=*/true));
      TS_RETURN_IF_ERROR(ReportGradientsReady(m.ready_after_step[k]));
    }
  }
  if (!outputs_copied) TS_RETURN_IF_ERROR(CopyOutputs());
  if (backward) {
    TS_RETURN_IF_ERROR(ZeroUnwrittenParameterGradients());
    TS_RETURN_IF_ERROR(ReportGradientsReady(m.ready_at_end));
  }
  std::fill(m.input_set.begin(), m.input_set.end(), false);
  if (backward) ++steps_run_;
  return absl::OkStatus();
}

// Timed nodes wait for the back-end, so that an asynchronous one is timed by what it ran.
absl::Status TrainingProgram::TimedNode(graph::NodeId id, bool backward) {
  const auto& hook = impl_->on_node_timed;
  if (!hook) return backward ? BackwardNode(id) : ForwardNode(id);
  const auto start = std::chrono::steady_clock::now();
  TS_RETURN_IF_ERROR(backward ? BackwardNode(id) : ForwardNode(id));
  TS_RETURN_IF_ERROR(impl_->backend->Synchronize());
  hook(id, backward,
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return absl::OkStatus();
}

// The outputs' arena slots are reused by backward: each is copied to its own storage now, on the
// back-end, and read to the host only when asked (ReadOutputs). A step that never computed an
// output (no node writes it) leaves zeros.
absl::Status TrainingProgram::CopyOutputs() {
  Impl& m = *impl_;
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    const TensorId t = graph_.outputs()[i];
    void* storage = m.output_storage[i].data();
    const int64_t bytes = m.Bytes(graph_, t);
    if (m.value_addr[t] == nullptr) {
      TS_RETURN_IF_ERROR(m.backend->Fill(
          {static_cast<float*>(storage), static_cast<size_t>(m.output_storage[i].size() / 4)}, 0.f));
    } else {
      TS_RETURN_IF_ERROR(m.backend->Copy(storage, m.value_addr[t], bytes));
    }
  }
  m.outputs_stale = true;
  return absl::OkStatus();
}

absl::Status TrainingProgram::ReadOutputs() const {
  Impl& m = *impl_;
  if (!m.outputs_stale) return absl::OkStatus();
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    const graph::Tensor& x = graph_.tensor(graph_.outputs()[i]);
    std::vector<float>& out = m.outputs[x.name];
    out.assign(graph::NumElements(x.shape), 0.f);
    const void* storage = m.output_storage[i].data();
    if (graph::IsFloating(x.dtype)) {
      TS_RETURN_IF_ERROR(m.backend->CopyToHost(out.data(), storage, out.size() * sizeof(float)));
      continue;
    }
    std::vector<std::byte> raw(out.size() * graph::DTypeSize(x.dtype));
    TS_RETURN_IF_ERROR(m.backend->CopyToHost(raw.data(), storage, static_cast<int64_t>(raw.size())));
    for (size_t k = 0; k < out.size(); ++k) {
      out[k] = x.dtype == graph::DType::kI64
                   ? static_cast<float>(reinterpret_cast<const int64_t*>(raw.data())[k])
                   : static_cast<float>(reinterpret_cast<const int32_t*>(raw.data())[k]);
    }
  }
  m.outputs_stale = false;
  return absl::OkStatus();
}

absl::Status TrainingProgram::SeedLoss() {
  const TensorId loss = graph_.outputs()[0];
  if (impl_->grad_addr[loss] == nullptr) return absl::OkStatus();
  TS_RETURN_IF_ERROR(impl_->backend->Fill(
      {reinterpret_cast<float*>(impl_->grad_addr[loss]), 1}, impl_->loss_scale));
  impl_->written[impl_->grad_content[loss]] = true;
  return absl::OkStatus();
}

absl::Status TrainingProgram::ZeroUnwrittenParameterGradients() {
  for (Parameter& p : parameters_) {
    if (!impl_->written[impl_->grad_content[p.tensor]]) {
      TS_RETURN_IF_ERROR(impl_->backend->Fill(p.grad, 0.f));
    }
  }
  return absl::OkStatus();
}

absl::Status TrainingProgram::ForwardNode(graph::NodeId id) {
  Impl& m = *impl_;
  const graph::Node& node = graph_.node(id);
  std::vector<TensorView> in, out, real_out;
  for (TensorId t : node.inputs) {
    in.push_back(t == graph::kNoTensor ? TensorView{} : m.View(graph_, t, m.value_addr[t]));
  }
  const std::vector<Span> reads = Reads(in);
  // The kernels of the ops the lifetime analysis runs in place read each element before
  // writing it, so exactly those may have their output on an input.
  const bool in_place_ok = !memory::InPlaceInputSlots(node.kind).empty();
  bool use_scratch = false;
  for (TensorId t : node.outputs) {
    real_out.push_back(m.View(graph_, t, m.value_addr[t]));
    const Span w{m.value_addr[t], m.Bytes(graph_, t)};
    const std::byte* allowed = in_place_ok ? w.first : nullptr;
    if (memory::IsViewOp(node.kind) && !in.empty() && w.first == in[0].data) {
      return absl::OkStatus();  // a view sharing its input's memory: nothing to compute
    }
    use_scratch = use_scratch || OverlapsAny(w, reads, allowed);
  }
  out = real_out;
  if (use_scratch) {
    for (size_t j = 0; j < out.size(); ++j) {
      TS_ASSIGN_OR_RETURN(out[j].data, m.Scratch(j, (m.Bytes(graph_, node.outputs[j]) + 3) / 4));
    }
  }
  if (m.node_kernels[id] != nullptr) {
    TS_RETURN_IF_ERROR(m.node_kernels[id]->Forward(node, in, out, *m.backend, m.ctx));
  } else {
    TS_RETURN_IF_ERROR(m.backend->Forward(node, in, out, m.ctx, *m.states[id]));
  }
  if (use_scratch) {
    for (size_t j = 0; j < out.size(); ++j) {
      TS_RETURN_IF_ERROR(
          m.backend->Copy(real_out[j].data, out[j].data, m.Bytes(graph_, node.outputs[j])));
    }
  }
  return absl::OkStatus();
}

namespace {

// Per input slot of a backward call: where its gradient goes, and whether the kernel may
// write it there.
enum class GradMode { kNone, kDirect, kScratchCopy, kScratchAdd, kShared };

}  // namespace

absl::Status TrainingProgram::BackwardNode(graph::NodeId id) {
  Impl& m = *impl_;
  const graph::Graph& g = graph_;
  const graph::Node& node = g.node(id);
  std::vector<TensorView> in, out, dout, din;
  for (TensorId t : node.inputs) {
    in.push_back(t == graph::kNoTensor ? TensorView{} : m.View(g, t, m.value_addr[t]));
  }
  for (TensorId t : node.outputs) {
    out.push_back(m.View(g, t, m.value_addr[t]));
    const bool has = m.grad_addr[t] != nullptr && m.written[m.grad_content[t]];
    dout.push_back(has ? m.View(g, t, m.grad_addr[t]) : TensorView{.shape = g.tensor(t).shape});
  }
  std::vector<Span> reads = Reads(in);
  for (const auto& spans : {Reads(out), Reads(dout)}) {
    reads.insert(reads.end(), spans.begin(), spans.end());
  }
  const bool unary_elementwise =
      node.inputs.size() == 1 &&
      graph::GetOpSchema(node.kind).op_class == graph::OpClass::kElementwise;
  std::vector<GradMode> mode(node.inputs.size(), GradMode::kNone);
  bool any = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId t = node.inputs[i];
    din.push_back(t == graph::kNoTensor
                      ? TensorView{}
                      : TensorView{.shape = g.tensor(t).shape, .dtype = g.tensor(t).dtype});
    if (t == graph::kNoTensor || !m.backward.needs_grad[t] || m.grad_addr[t] == nullptr) continue;
    std::byte* dest = m.grad_addr[t];
    const Span w{dest, m.Bytes(g, t)};
    const bool shared_view = memory::IsViewOp(node.kind) && !dout.empty() && dout[0].present() &&
                             dout[0].data == dest;
    if (shared_view) {
      mode[i] = GradMode::kShared;  // dX is dY's memory already
      continue;
    }
    bool repeated = false;
    for (size_t k = 0; k < i; ++k) {
      repeated = repeated || (node.inputs[k] == t && mode[k] != GradMode::kNone);
    }
    const bool written = m.written[m.grad_content[t]];
    const std::byte* allowed = unary_elementwise ? dest : nullptr;
    const bool direct = !written && !repeated && !OverlapsAny(w, reads, allowed);
    mode[i] = direct ? GradMode::kDirect
                     : (written || repeated ? GradMode::kScratchAdd : GradMode::kScratchCopy);
    if (direct) {
      din[i].data = dest;
    } else {
      TS_ASSIGN_OR_RETURN(din[i].data, m.Scratch(i, graph::NumElements(g.tensor(t).shape)));
    }
    any = true;
  }
  if (any && m.node_kernels[id] != nullptr) {
    TS_RETURN_IF_ERROR(m.node_kernels[id]->Backward(node, in, out, dout, din, *m.backend, m.ctx));
  } else if (any) {
    TS_RETURN_IF_ERROR(m.backend->Backward(node, in, out, dout, din, m.ctx, *m.states[id]));
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId t = node.inputs[i];
    if (mode[i] == GradMode::kNone) continue;
    const absl::Span<float> dest(reinterpret_cast<float*>(m.grad_addr[t]),
                                 static_cast<size_t>(graph::NumElements(g.tensor(t).shape)));
    const absl::Span<const float> computed(din[i].floats(), dest.size());
    if (mode[i] == GradMode::kScratchCopy) {
      TS_RETURN_IF_ERROR(m.backend->Copy(dest.data(), computed.data(), dest.size() * 4));
    }
    if (mode[i] == GradMode::kScratchAdd) {
      if (!m.written[m.grad_content[t]]) TS_RETURN_IF_ERROR(m.backend->Fill(dest, 0.f));
      TS_RETURN_IF_ERROR(m.backend->Accumulate(dest, computed));
    }
    if (mode[i] == GradMode::kShared && !(dout[0].present())) continue;  // zero stays unwritten
    m.written[m.grad_content[t]] = true;
  }
  return absl::OkStatus();
}

}  // namespace tessera::exec
