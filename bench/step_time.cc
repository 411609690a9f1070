// tessera-step-time: the median time of one training step (forward, backward, SGD update) of a
// CPU-sized CRNN or seq2seq LSTM, the Tessera side of bench/compare_pytorch.sh. Its PyTorch side,
// bench/torch_step_time.py, builds the same two models (docs/benchmarks.md).
//
//   tessera-step-time --model crnn_small --steps 20 --warmup 3 --threads 2
//   tessera-step-time --model seq2seq_small --profile   # also the time of every op kind
//
// The last line printed is one JSON object:
//   {"model": "crnn_small", "batch": 32, "threads": 2, "warmup": 3, "steps": 20,
//    "step_s": <median>, "step_min_s": <fastest>, "loss": <after the timed steps>, "params": N}
// A step is SetInput of every data input + TrainingProgram::RunStep + Optimizer::Apply (SGD, no
// momentum); the data is random, drawn once per run from --seed. --profile then runs the graph
// through the CPU kernels directly (exec/cpu/kernels.h), every tensor in a buffer of its own, and
// times each node's forward and backward call: a table per op kind and the slowest nodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kernels.h"
#include "tessera/exec/optimizer.h"
#include "tessera/exec/param_init.h"
#include "tessera/exec/training_program.h"
#include "tessera/graph/builder.h"
#include "tessera/tools/cli/arg_parser.h"

namespace tessera::bench {
namespace {

using graph::DType;
using graph::GraphBuilder;
using graph::Value;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ----- the two models --------------------------------------------------------------------------

constexpr int64_t kCrnnClasses = 37;  // blank + 36 symbols
constexpr int64_t kCrnnMaxLabel = 10;
constexpr int64_t kCrnnHidden = 128;

Value ConvRelu(GraphBuilder& b, Value x, int i, int64_t channels, graph::Size2 kernel,
               graph::Size2 padding, bool batch_norm) {
  x = b.Conv2d(x, channels, kernel, absl::StrCat("conv", i), {.padding = padding});
  if (batch_norm) x = b.BatchNorm2d(x, absl::StrCat("bn", i));
  return x.Relu(absl::StrCat("relu", i));
}

// A bi-LSTM and a Linear on every frame: [T, B, I] -> [T, B, out].
Value BiLstm(GraphBuilder& b, Value x, int64_t out, absl::string_view name) {
  auto scope = b.Scope(name);
  const int64_t frames = x.dim(0);
  Value h = b.Lstm(x, kCrnnHidden, "lstm", {.bidirectional = true});  // [T, B, 2H]
  Value y = b.Linear(h.Reshape({-1, 2 * kCrnnHidden}, "frames"), out, "linear");
  return y.Reshape({frames, -1, out}, "per_frame");
}

// images [B,1,32,128] -> conv/pool stack -> [B,128,1,32] -> [T=32,B,128] -> 2 x (bi-LSTM 128 +
// per-frame Linear) -> LogSoftmax -> CTC.
absl::StatusOr<graph::Graph> BuildCrnnSmall(int64_t batch) {
  GraphBuilder b("crnn_small");
  Value images = b.Input("images", {batch, 1, 32, 128});
  Value targets = b.Input("targets", {batch, kCrnnMaxLabel}, DType::kI64);
  Value input_lengths = b.Input("input_lengths", {batch}, DType::kI64);
  Value target_lengths = b.Input("target_lengths", {batch}, DType::kI64);
  const graph::Pool2dOptions tall{.stride = {2, 1}};
  Value x = b.MaxPool2d(ConvRelu(b, images, 0, 32, 3, 1, false), 2, "pool0");  // 32 x 16 x 64
  x = b.MaxPool2d(ConvRelu(b, x, 1, 64, 3, 1, false), 2, "pool1");             // 64 x 8 x 32
  x = b.MaxPool2d(ConvRelu(b, x, 2, 128, 3, 1, true), {2, 1}, "pool2", tall);  // 128 x 4 x 32
  x = b.MaxPool2d(ConvRelu(b, x, 3, 128, 3, 1, true), {2, 1}, "pool3", tall);  // 128 x 2 x 32
  x = ConvRelu(b, x, 4, 128, {2, 1}, 0, false);                                // 128 x 1 x 32
  Value seq = x.Squeeze({2}, "squeeze").Transpose({2, 0, 1}, "to_sequence");  // [T, B, 128]
  seq = BiLstm(b, seq, kCrnnHidden, "rnn0");
  seq = BiLstm(b, seq, kCrnnClasses, "rnn1");
  b.Output(b.CtcLoss(seq.LogSoftmax(-1, "log_probs"), targets, input_lengths, target_lengths,
                     "loss"));
  return std::move(b).Build();
}

constexpr int64_t kVocab = 2000;
constexpr int64_t kEmbed = 128;
constexpr int64_t kS2sHidden = 256;
constexpr int64_t kSrcLen = 20;
constexpr int64_t kTgtLen = 20;

// Encoder: embedding -> 2-layer LSTM 256. Decoder: embedding of the target (teacher forcing) ->
// LSTM 256 started from the encoder's last layer's final (h, c) -> Linear 256 -> 2000 ->
// SoftmaxCrossEntropy. The decoder is an LSTM node built by hand (GraphBuilder::Lstm takes no
// initial state); its sequence_lens input is the data input "tgt_lengths" (every entry kTgtLen),
// since the builder has no absent optional inputs and integer constants are not loaded yet.
absl::StatusOr<graph::Graph> BuildSeq2SeqSmall(int64_t batch) {
  GraphBuilder b("seq2seq_small");
  Value src = b.Input("src_tokens", {batch, kSrcLen}, DType::kI64);
  Value tgt = b.Input("tgt_tokens", {batch, kTgtLen}, DType::kI64);
  Value labels = b.Input("tgt_labels", {batch, kTgtLen}, DType::kI64);
  Value tgt_lengths = b.Input("tgt_lengths", {batch}, DType::kI64);
  {
    auto scope = b.Scope("encoder");
    Value x = b.Embedding(src.Transpose({1, 0}, "seq_first"), kVocab, kEmbed, "embedding");
    b.Lstm(x, kS2sHidden, "rnn", {.num_layers = 2});
  }
  Value h0 = b.Find("encoder.rnn.1.h_n");  // [1, B, H]
  Value c0 = b.Find("encoder.rnn.1.c_n");
  Value y;
  {
    auto scope = b.Scope("decoder");
    Value x = b.Embedding(tgt.Transpose({1, 0}, "seq_first"), kVocab, kEmbed, "embedding");
    Value w = b.Parameter("rnn.weight_ih", {1, 4 * kS2sHidden, kEmbed});
    Value r = b.Parameter("rnn.weight_hh", {1, 4 * kS2sHidden, kS2sHidden});
    Value bias = b.Parameter("rnn.bias", {1, 8 * kS2sHidden});
    std::vector<Value> outs =
        b.AddOp(graph::OpKind::kLstm, {x, w, r, bias, tgt_lengths, h0, c0},
                graph::LstmAttrs{.hidden_size = kS2sHidden}, "rnn", 3);
    if (outs.empty()) return b.status();
    y = outs[0].Squeeze({1}, "rnn.squeeze");  // [T, B, H]
  }
  Value logits = b.Linear(y.Reshape({-1, kS2sHidden}, "frames"), kVocab, "classifier");
  Value targets = labels.Transpose({1, 0}, "labels_seq_first").Reshape({-1}, "labels_flat");
  b.Output(b.SoftmaxCrossEntropy(logits, targets, "loss"));
  return std::move(b).Build();
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

StepData CrnnData(int64_t batch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> images(batch * 32 * 128);
  for (float& x : images) x = normal(rng);
  StepData d;
  d.floats.emplace_back("images", std::move(images));
  d.ints.emplace_back("targets", Uniform(rng, batch * kCrnnMaxLabel, 1, kCrnnClasses - 1));
  d.ints.emplace_back("input_lengths", std::vector<int64_t>(batch, 32));
  d.ints.emplace_back("target_lengths", Uniform(rng, batch, 5, kCrnnMaxLabel));
  return d;
}

StepData Seq2SeqData(int64_t batch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  StepData d;
  d.ints.emplace_back("src_tokens", Uniform(rng, batch * kSrcLen, 0, kVocab - 1));
  d.ints.emplace_back("tgt_tokens", Uniform(rng, batch * kTgtLen, 0, kVocab - 1));
  d.ints.emplace_back("tgt_labels", Uniform(rng, batch * kTgtLen, 0, kVocab - 1));
  d.ints.emplace_back("tgt_lengths", std::vector<int64_t>(batch, kTgtLen));
  return d;
}

struct ModelSpec {
  const char* name;
  absl::StatusOr<graph::Graph> (*build)(int64_t batch);
  StepData (*data)(int64_t batch, uint64_t seed);
};

constexpr ModelSpec kModels[] = {{"crnn_small", &BuildCrnnSmall, &CrnnData},
                                 {"seq2seq_small", &BuildSeq2SeqSmall, &Seq2SeqData}};

// ----- the timed steps ------------------------------------------------------------------------

struct Args {
  std::string model = "crnn_small";
  int64_t batch = 32, threads = 2, steps = 20, warmup = 3, seed = 1;
  double lr = 0.01;
  bool profile = false;
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
  const exec::ProgramOptions options{.seed = static_cast<uint64_t>(args.seed),
                                     .threads = static_cast<int>(args.threads)};
  TS_ASSIGN_OR_RETURN(std::unique_ptr<exec::TrainingProgram> program,
                      exec::TrainingProgram::Create(std::move(g), options));
  exec::Optimizer sgd({.kind = exec::OptimizerKind::kSgd, .momentum = 0});
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
    sgd.Apply(program->parameters(), args.lr);
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
void PrintProfile(const graph::Graph& g, const Profile& prof, const StepTimes& times) {
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
               g.name(), prof.steps);
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
  TS_ASSIGN_OR_RETURN(graph::Graph g, spec->build(args.batch));
  const StepData data = spec->data(args.batch, static_cast<uint64_t>(args.seed));
  TS_ASSIGN_OR_RETURN(StepTimes times, TimeSteps(g, data, args));
  absl::PrintF("%s: loss %.4f after %d steps; step %.2f ms (median), RunStep %.2f ms, update "
               "%.2f ms\n",
               args.model, times.loss, args.warmup + args.steps, Median(times.step) * 1e3,
               Median(times.run) * 1e3, Median(times.update) * 1e3);
  if (args.profile) {
    TS_ASSIGN_OR_RETURN(Profile prof, ProfileKernels(g, data, args));
    PrintProfile(g, prof, times);
  }
  absl::PrintF(
      "{\"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"warmup\": %d, \"steps\": %d, "
      "\"step_s\": %.6g, \"step_min_s\": %.6g, \"loss\": %.6g, \"params\": %d}\n",
      args.model, args.batch, args.threads, args.warmup, args.steps, Median(times.step),
      *std::min_element(times.step.begin(), times.step.end()), times.loss, times.params);
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
  p.AddChoice("--model", {"crnn_small", "seq2seq_small"}, "model to time", &args.model);
  p.AddInt("--batch", "B", "batch size", &args.batch, 1);
  p.AddInt("--threads", "N", "intra-op threads (kernels and OpenBLAS)", &args.threads, 1);
  p.AddInt("--steps", "N", "timed steps (the median is reported)", &args.steps, 1);
  p.AddInt("--warmup", "N", "untimed steps first", &args.warmup, 0);
  p.AddInt("--seed", "S", "parameters and data", &args.seed, 0);
  p.AddPositiveNumber("--lr", "LR", "SGD learning rate", &args.lr);
  p.AddFlag("--profile", "also time every node's kernels and print a table per op kind",
            &args.profile);
  const std::vector<std::string> argv_list(argv + 1, argv + argc);
  if (std::optional<int> code = p.ParseOrExitCode(argv_list, std::cout, std::cerr)) return *code;
  const absl::Status status = tessera::bench::Run(args);
  if (!status.ok()) {
    std::fprintf(stderr, "tessera-step-time: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
