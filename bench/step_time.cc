// tessera-step-time: the median time of one training step (forward, backward, SGD update) of a
// CPU-sized CRNN or seq2seq LSTM, the Tessera side of bench/compare_pytorch.sh. The models are the
// zoo's "ocr" (--model crnn_small) and "nmt" (--model seq2seq_small), graph/zoo/ocr_small.cc and
// nmt_small.cc, and for the GPU benchmark the zoo's full-size "crnn" and "gnmt"; its PyTorch
// side, bench/torch_step_time.py, builds the same models (docs/benchmarks.md, docs/gpu.md).
//
//   tessera-step-time --model crnn_small --steps 20 --warmup 3 --threads 2
//   tessera-step-time --model seq2seq_small --profile   # also the time of every op kind
//   tessera-step-time --model crnn_small --device cuda  # on GPU 0 (CUDA builds)
//
// The last line printed is one JSON object:
//   {"model": "crnn_small", "batch": 32, "threads": 2, "warmup": 3, "steps": 20,
//    "step_s": <median>, "step_min_s": <fastest>, "loss": <after the timed steps>, "params": N,
//    "device": "cpu", "tf32": false}
// A step is SetInput of every data input + TrainingProgram::RunStep + Optimizer::Apply (SGD, no
// momentum), then a wait for the back-end (a GPU's queued work counts in its step); the data is
// random, drawn once per run from --seed. --profile then runs the graph
// through the CPU kernels directly (exec/cpu/kernels.h), every tensor in a buffer of its own, and
// times each node's forward and backward call: a table per op kind and the slowest nodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tessera/base/median.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/param_init.h"
#include "tessera/exec/training_program.h"
#include "tessera/base/check.h"
#include "tessera/graph/zoo/zoo.h"
#include "tessera/tools/cli/arg_parser.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

using base::Median;

// ----- the two models: the zoo's "ocr" and "nmt" (graph/zoo/ocr_small.cc, nmt_small.cc) ------

// The size of axis `axis` (negative: from the end) of tensor `name`, which the zoo model has.
int64_t Dim(const graph::Graph& g, absl::string_view name, int axis) {
  const std::optional<graph::TensorId> t = g.FindTensor(name);
  TS_CHECK(t.has_value()) << "zoo model '" << g.name() << "' has no tensor " << name;
  const graph::Shape& shape = g.tensor(*t).shape;
  const int rank = static_cast<int>(shape.size());
  TS_CHECK(axis >= -rank && axis < rank) << name << " has no axis " << axis;
  return shape[axis < 0 ? rank + axis : axis];
}

// ----- random data, fixed per run --------------------------------------------------------------

struct StepData {
  std::vector<std::pair<std::string, std::vector<float>>> floats;
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
};

std::vector<int64_t> Uniform(std::mt19937_64& rng, int64_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) x = d(rng);
  return v;
}

// Images N(0, 1); targets of 5 to max-label symbols, drawn from the non-blank classes; every
// image as wide as the frames the CNN leaves.
StepData CrnnData(const graph::Graph& g, int64_t batch, uint64_t seed) {
  const int64_t max_label = Dim(g, "targets", 1), classes = Dim(g, "log_probs", -1);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> images(graph::NumElements(g.tensor(*g.FindTensor("images")).shape));
  for (float& x : images) x = normal(rng);
  StepData d;
  d.floats.emplace_back("images", std::move(images));
  d.ints.emplace_back("targets", Uniform(rng, batch * max_label, 1, classes - 1));
  d.ints.emplace_back("input_lengths", std::vector<int64_t>(batch, Dim(g, "log_probs", 0)));
  d.ints.emplace_back("target_lengths", Uniform(rng, batch, 5, max_label));
  return d;
}

// Token ids uniform over each vocabulary, every sentence full length.
StepData Seq2SeqData(const graph::Graph& g, int64_t batch, uint64_t seed) {
  const int64_t src_len = Dim(g, "src_tokens", 1), tgt_len = Dim(g, "tgt_tokens", 1);
  std::mt19937_64 rng(seed);
  StepData d;
  d.ints.emplace_back("src_tokens",
                      Uniform(rng, batch * src_len, 0, Dim(g, "encoder.embedding.weight", 0) - 1));
  d.ints.emplace_back("tgt_tokens",
                      Uniform(rng, batch * tgt_len, 0, Dim(g, "decoder.embedding.weight", 0) - 1));
  d.ints.emplace_back("tgt_labels",
                      Uniform(rng, batch * tgt_len, 0, Dim(g, "classifier.weight", 0) - 1));
  d.ints.emplace_back("tgt_lengths", std::vector<int64_t>(batch, tgt_len));
  return d;
}

// zoo:gnmt: token ids uniform over the shared vocabulary, every sentence full length.
StepData GnmtData(const graph::Graph& g, int64_t batch, uint64_t seed) {
  const int64_t len = Dim(g, "src_tokens", 1), vocab = Dim(g, "encoder.embedder.weight", 0);
  std::mt19937_64 rng(seed);
  StepData d;
  for (const char* name : {"src_tokens", "tgt_tokens", "tgt_labels"}) {
    d.ints.emplace_back(name, Uniform(rng, batch * len, 0, vocab - 1));
  }
  return d;
}

struct ModelSpec {
  const char* name;      // --model
  const char* zoo_name;  // graph::zoo::BuildZooModel
  StepData (*data)(const graph::Graph& g, int64_t batch, uint64_t seed);
};

// The CPU-sized models, and the zoo's full-size CRNN and GNMT for the GPU benchmark
// (bench/compare_pytorch_gpu.sh).
constexpr ModelSpec kModels[] = {{"crnn_small", "ocr", &CrnnData},
                                 {"seq2seq_small", "nmt", &Seq2SeqData},
                                 {"crnn", "crnn", &CrnnData},
                                 {"gnmt", "gnmt", &GnmtData}};

// ----- the timed steps ------------------------------------------------------------------------

struct Args {
  std::string model = "crnn_small";
  int64_t batch = 32, threads = 2, steps = 20, warmup = 3, seed = 1;
  double lr = 0.01;
  bool profile = false;
  std::string device = "cpu";
  bool tf32 = false;
  bool blas_kernels = false;
};

struct StepTimes {
  std::vector<double> step, set_input, run, update;  // seconds, per timed step
  std::vector<double> forward;  // --profile: RunForward(training) alone, per step
  float loss = 0;
  int64_t params = 0;
};

absl::Status SetInputs(exec::TrainingProgram& program, const StepData& data) {
  for (const auto& [name, v] : data.floats) TS_RETURN_IF_ERROR(program.SetInput(name, v));
  for (const auto& [name, v] : data.ints) TS_RETURN_IF_ERROR(program.SetInput(name, v));
  return absl::OkStatus();
}

absl::StatusOr<StepTimes> TimeSteps(graph::Graph g, const StepData& data, const Args& args) {
  exec::ProgramOptions options{.seed = static_cast<uint64_t>(args.seed),
                               .threads = static_cast<int>(args.threads)};
  TS_ASSIGN_OR_RETURN(const exec::Device device, exec::ParseDevice(args.device));
  if (device != exec::Device::kCpu) {
    TS_ASSIGN_OR_RETURN(options.backend, exec::MakeBackend({.device = device, .tf32 = args.tf32}));
  }
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      exec::TrainingProgram::Create(std::move(g), options));
  exec::Optimizer sgd({.kind = exec::OptimizerKind::kSgd, .momentum = 0}, program->backend());
  StepTimes t;
  for (const auto& p : program->parameters()) t.params += static_cast<int64_t>(p.value.size());
  for (int64_t i = 0; i < args.warmup + args.steps; ++i) {
    const Clock::time_point t0 = Clock::now();
    TS_RETURN_IF_ERROR(SetInputs(*program, data));
    const double set_input = Since(t0);
    const Clock::time_point t1 = Clock::now();
    TS_RETURN_IF_ERROR(program->RunStep());
    const double run = Since(t1);
    const Clock::time_point t2 = Clock::now();
    TS_RETURN_IF_ERROR(sgd.Apply(program->parameters(), args.lr));
    TS_RETURN_IF_ERROR(program->backend().Synchronize());
    const double update = Since(t2);
    if (i < args.warmup) continue;
    t.step.push_back(Since(t0));
    t.set_input.push_back(set_input);
    t.run.push_back(run);
    t.update.push_back(update);
  }
  t.loss = program->Loss();
  for (int64_t i = 0; args.profile && i < args.steps; ++i) {
    TS_RETURN_IF_ERROR(SetInputs(*program, data));
    const Clock::time_point t0 = Clock::now();
    TS_RETURN_IF_ERROR(program->RunForward(/*training=*/true));
    t.forward.push_back(Since(t0));
  }
  return t;
}

// ----- --profile: every node's kernels timed one by one ---------------------------------------

struct NodeTime {
  std::string kind;
  double forward = 0, backward = 0;  // seconds per step: the median over the profiled steps
};

struct Profile {
  std::vector<NodeTime> nodes;  // per node id
  double gradient_sums = 0;     // median per step
  int64_t steps = 0;
};

// Every tensor in its own buffer of 8-byte words, its gradient beside it when it needs one.
struct Shim {
  const graph::Graph* g = nullptr;
  std::vector<std::vector<int64_t>> value, grad;
  std::vector<int> reads;  // (node, input slot) pairs reading each tensor
  std::vector<bool> needs_grad;
  std::vector<exec::cpu::OpState> states;
  exec::cpu::KernelContext ctx;

  static std::vector<int64_t> Words(const graph::Tensor& t) {
    return std::vector<int64_t>((graph::NumElements(t.shape) * graph::DTypeSize(t.dtype) + 7) /
                                8);
  }
  exec::cpu::Tensor<float> View(graph::TensorId t, std::vector<int64_t>* words) const {
    if (t == graph::kNoTensor || words == nullptr || words->empty()) return {};
    const graph::Tensor& x = g->tensor(t);
    return {.shape = x.shape, .data = reinterpret_cast<float*>(words->data()), .dtype = x.dtype};
  }
  exec::cpu::Tensor<float> Value(graph::TensorId t) {
    return View(t, t == graph::kNoTensor ? nullptr : &value[t]);
  }
};

// Parameters and constants from exec/param_init.h, data inputs from `data`; which tensors need
// a gradient (those computed from a parameter) and how often each tensor is read.
absl::Status InitShim(const graph::Graph& g, const StepData& data, const Args& args,
                      const std::vector<graph::NodeId>& order, Shim& s) {
  s.g = &g;
  s.value.resize(g.num_tensors());
  s.grad.resize(g.num_tensors());
  s.reads.assign(g.num_tensors(), 0);
  s.needs_grad.assign(g.num_tensors(), false);
  s.states.resize(g.num_nodes());
  s.ctx = {.threads = static_cast<int>(args.threads), .training = true,
           .seed = static_cast<uint64_t>(args.seed)};
  for (graph::TensorId t = 0; t < g.num_tensors(); ++t) {
    const graph::Tensor& x = g.tensor(t);
    s.value[t] = Shim::Words(x);
    if (x.role != graph::TensorRole::kParameter && x.role != graph::TensorRole::kConstant) continue;
    TS_ASSIGN_OR_RETURN(std::vector<float> init, exec::InitialValues(g, t, args.seed));
    std::copy(init.begin(), init.end(), reinterpret_cast<float*>(s.value[t].data()));
    s.needs_grad[t] = x.role == graph::TensorRole::kParameter;
  }
  for (const auto& [name, v] : data.floats)
    std::copy(v.begin(), v.end(), reinterpret_cast<float*>(s.value[*g.FindTensor(name)].data()));
  for (const auto& [name, v] : data.ints)  // every integer data input here is i64
    std::copy(v.begin(), v.end(), s.value[*g.FindTensor(name)].begin());
  for (graph::NodeId n : order) {
    bool from_parameter = false;
    for (graph::TensorId t : g.node(n).inputs) {
      if (t == graph::kNoTensor) continue;
      ++s.reads[t];
      from_parameter = from_parameter || s.needs_grad[t];
    }
    for (graph::TensorId t : g.node(n).outputs)
      s.needs_grad[t] = from_parameter && graph::IsFloating(g.tensor(t).dtype);
  }
  for (graph::TensorId t = 0; t < g.num_tensors(); ++t)
    if (s.needs_grad[t]) s.grad[t] = Shim::Words(g.tensor(t));
  return absl::OkStatus();
}

absl::Status ShimForward(Shim& s, graph::NodeId n, double& time) {
  const graph::Node& node = s.g->node(n);
  std::vector<exec::cpu::Tensor<float>> in, out;
  for (graph::TensorId t : node.inputs) in.push_back(s.Value(t));
  for (graph::TensorId t : node.outputs) out.push_back(s.Value(t));
  s.states[n].Clear();
  const Clock::time_point t0 = Clock::now();
  TS_RETURN_IF_ERROR(exec::cpu::Forward<float>(node, in, out, s.ctx, s.states[n]));
  time = Since(t0);
  return absl::OkStatus();
}

// A tensor read once gets its gradient written in place; one read several times gets each
// reader's contribution in scratch, summed afterwards (timed apart as "gradient sums").
absl::Status ShimBackward(Shim& s, graph::NodeId n, double& time, double& sums) {
  const graph::Node& node = s.g->node(n);
  const graph::TensorId loss = s.g->outputs()[0];
  std::vector<exec::cpu::Tensor<float>> in, out, dout, din;
  std::vector<std::vector<int64_t>> scratch(node.inputs.size());
  bool any = false;
  for (graph::TensorId t : node.outputs) {
    out.push_back(s.Value(t));
    dout.push_back(s.reads[t] > 0 || t == loss ? s.View(t, &s.grad[t]) : exec::cpu::Tensor<float>{});
    any = any || dout.back().present();
  }
  if (!any) return absl::OkStatus();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const graph::TensorId t = node.inputs[i];
    in.push_back(s.Value(t));
    const bool wanted = t != graph::kNoTensor && s.needs_grad[t];
    if (wanted && s.reads[t] > 1) scratch[i] = Shim::Words(s.g->tensor(t));
    din.push_back(!wanted ? exec::cpu::Tensor<float>{}
                          : s.View(t, s.reads[t] > 1 ? &scratch[i] : &s.grad[t]));
  }
  const Clock::time_point t0 = Clock::now();
  TS_RETURN_IF_ERROR(exec::cpu::Backward<float>(node, in, out, dout, din, s.ctx, s.states[n]));
  time = Since(t0);
  const Clock::time_point t1 = Clock::now();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (scratch[i].empty()) continue;
    float* acc = reinterpret_cast<float*>(s.grad[node.inputs[i]].data());
    const float* add = reinterpret_cast<const float*>(scratch[i].data());
    for (int64_t j = 0; j < din[i].size(); ++j) acc[j] += add[j];
  }
  sums += Since(t1);
  return absl::OkStatus();
}

// One warm-up step, then `args.steps` timed steps of forward and backward (no update: the
// values do not matter for the time of these kernels). Medians per node resist the odd preemption.
absl::StatusOr<Profile> ProfileKernels(const graph::Graph& g, const StepData& data,
                                       const Args& args) {
  TS_ASSIGN_OR_RETURN(std::vector<graph::NodeId> order, g.TopologicalOrder());
  Shim s;
  TS_RETURN_IF_ERROR(InitShim(g, data, args, order, s));
  exec::cpu::SetBlasThreads(static_cast<int>(args.threads));
  const size_t nodes = g.num_nodes();
  std::vector<std::vector<double>> forward(nodes), backward(nodes);  // per node, per step
  std::vector<double> sums;
  for (int64_t step = 0; step <= args.steps; ++step) {
    std::vector<double> fwd(nodes, 0), bwd(nodes, 0);
    double sum = 0;
    for (graph::NodeId n : order) TS_RETURN_IF_ERROR(ShimForward(s, n, fwd[n]));
    for (auto& grad : s.grad) std::fill(grad.begin(), grad.end(), 0);
    reinterpret_cast<float*>(s.grad[g.outputs()[0]].data())[0] = 1.f;
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      TS_RETURN_IF_ERROR(ShimBackward(s, *it, bwd[*it], sum));
    ++s.ctx.step;
    if (step == 0) continue;  // the warm-up
    for (size_t n = 0; n < nodes; ++n) {
      forward[n].push_back(fwd[n]);
      backward[n].push_back(bwd[n]);
    }
    sums.push_back(sum);
  }
  Profile prof{.nodes = std::vector<NodeTime>(nodes), .gradient_sums = Median(sums),
               .steps = args.steps};
  for (size_t n = 0; n < nodes; ++n) {
    prof.nodes[n] = {.kind = std::string(graph::OpName(g.node(n).kind)),
                     .forward = Median(forward[n]), .backward = Median(backward[n])};
  }
  return prof;
}

// Time per step (ms) by op kind, largest first, then the slowest nodes.
void PrintProfile(const graph::Graph& g, absl::string_view model, const Profile& prof,
                  const StepTimes& times) {
  const double per = 1e3;  // ms
  std::map<std::string, NodeTime> kinds;
  std::map<std::string, int> counts;
  double total = prof.gradient_sums, forward = 0;
  for (const NodeTime& t : prof.nodes) {
    kinds[t.kind].forward += t.forward;
    kinds[t.kind].backward += t.backward;
    ++counts[t.kind];
    total += t.forward + t.backward;
    forward += t.forward;
  }
  std::vector<std::pair<std::string, NodeTime>> rows(kinds.begin(), kinds.end());
  const auto by_total = [](const auto& a, const auto& b) {
    return a.second.forward + a.second.backward > b.second.forward + b.second.backward;
  };
  std::sort(rows.begin(), rows.end(), by_total);
  absl::PrintF("profile of %s: CPU kernels called one by one, ms per step (median of %d steps)\n",
               model, prof.steps);
  absl::PrintF("  %-22s %5s %10s %10s %10s %6s\n", "op kind", "nodes", "forward", "backward",
               "total", "share");
  for (const auto& [kind, t] : rows) {
    absl::PrintF("  %-22s %5d %10.2f %10.2f %10.2f %5.1f%%\n", kind, counts[kind],
                 t.forward * per, t.backward * per, (t.forward + t.backward) * per,
                 100 * (t.forward + t.backward) / total);
  }
  absl::PrintF("  %-22s %5s %10s %10s %10.2f %5.1f%%\n", "(gradient sums)", "", "", "",
               prof.gradient_sums * per, 100 * prof.gradient_sums / total);
  absl::PrintF("  %-22s %5s %10s %10s %10.2f\n", "kernels, total", "", "", "", total * per);
  absl::PrintF("  %-22s %5s %10.2f %10.2f %10.2f\n", "TrainingProgram", "",
               Median(times.forward) * per, (Median(times.run) - Median(times.forward)) * per,
               Median(times.run) * per);
  absl::PrintF("  (TrainingProgram: forward = RunForward, backward = RunStep - RunForward; "
               "SGD update %.2f ms, SetInput %.2f ms; kernels' forward sum %.2f ms)\n",
               Median(times.update) * per, Median(times.set_input) * per, forward * per);
  std::vector<std::pair<std::string, NodeTime>> nodes;
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) nodes.emplace_back(g.node(n).name, prof.nodes[n]);
  std::sort(nodes.begin(), nodes.end(), by_total);
  absl::PrintF("  slowest nodes:\n");
  for (size_t i = 0; i < std::min<size_t>(12, nodes.size()); ++i) {
    const NodeTime& t = nodes[i].second;
    absl::PrintF("    %-28s %-18s fwd %8.2f  bwd %8.2f ms\n", nodes[i].first, t.kind,
                 t.forward * per, t.backward * per);
  }
}

// ----- main -----------------------------------------------------------------------------------

absl::Status Run(const Args& args) {
  const ModelSpec* spec = nullptr;
  for (const ModelSpec& m : kModels)
    if (args.model == m.name) spec = &m;
  if (spec == nullptr) return absl::InvalidArgumentError("unknown --model");  // AddChoice checks
  TS_ASSIGN_OR_RETURN(graph::Graph g, graph::zoo::BuildZooModel(spec->zoo_name, args.batch));
  const StepData data = spec->data(g, args.batch, static_cast<uint64_t>(args.seed));
  TS_ASSIGN_OR_RETURN(StepTimes times, TimeSteps(g, data, args));
  absl::PrintF("%s: loss %.4f after %d steps; step %.2f ms (median), RunStep %.2f ms, update "
               "%.2f ms\n",
               args.model, times.loss, args.warmup + args.steps, Median(times.step) * 1e3,
               Median(times.run) * 1e3, Median(times.update) * 1e3);
  if (args.profile && args.device == "cpu") {
    TS_ASSIGN_OR_RETURN(Profile prof, ProfileKernels(g, data, args));
    PrintProfile(g, args.model, prof, times);
  }
  absl::PrintF(
      "{\"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"warmup\": %d, \"steps\": %d, "
      "\"step_s\": %.6g, \"step_min_s\": %.6g, \"loss\": %.6g, \"params\": %d, "
      "\"device\": \"%s\", \"tf32\": %s, \"blas\": \"%s\"}\n",
      args.model, args.batch, args.threads, args.warmup, args.steps, Median(times.step),
      *std::min_element(times.step.begin(), times.step.end()), times.loss, times.params,
      args.device, args.tf32 ? "true" : "false", exec::cpu::BlasKernelsInUse().running);
  return absl::OkStatus();
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  using tessera::bench::Args;
  Args args;
  tessera::tools::ArgParser p("tessera-step-time",
                              "Median training-step time (forward, backward, SGD) of a CPU-sized "
                              "model; the Tessera side of bench/compare_pytorch.sh.");
  p.AddChoice("--model", {"crnn_small", "seq2seq_small", "crnn", "gnmt"},
              "model to time (crnn, gnmt: the zoo's full-size models)", &args.model);
  p.AddInt("--batch", "B", "batch size", &args.batch, 1);
  p.AddInt("--threads", "N", "intra-op threads (kernels and OpenBLAS)", &args.threads, 1);
  p.AddInt("--steps", "N", "timed steps (the median is reported)", &args.steps, 1);
  p.AddInt("--warmup", "N", "untimed steps first", &args.warmup, 0);
  p.AddInt("--seed", "S", "parameters and data", &args.seed, 0);
  p.AddPositiveNumber("--lr", "LR", "SGD learning rate", &args.lr);
  p.AddFlag("--profile", "also time every node's kernels and print a table per op kind (cpu)",
            &args.profile);
  p.AddChoice("--device", {"cpu", "cuda"}, "where the step runs (cuda: GPU 0, CUDA builds)",
              &args.device);
  p.AddFlag("--tf32", "cuda: TF32 tensor cores in cuBLAS and cuDNN (off: exact float32)",
            &args.tf32);
  p.AddFlag("--blas-kernels",
            "print the OpenBLAS core type the kernels multiply with and exit (the comparison "
            "scripts give PyTorch the same)",
            &args.blas_kernels);
  const std::vector<std::string> argv_list(argv + 1, argv + argc);
  if (std::optional<int> code = p.ParseOrExitCode(argv_list, std::cout, std::cerr)) return *code;
  if (args.blas_kernels) {
    const tessera::exec::cpu::BlasKernels& k = tessera::exec::cpu::BlasKernelsInUse();
    std::printf("%s\n", k.running.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "tessera-step-time: OpenBLAS kernels %s: %s\n", k.running.c_str(),
                 k.why.c_str());
    return 0;
  }
  const absl::Status status = tessera::bench::Run(args);
  if (!status.ok()) {
    std::fprintf(stderr, "tessera-step-time: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
