// CPU kernels of the Loss family (see kernels.h for the conventions): SoftmaxCrossEntropy and
// CtcLoss. SoftmaxCrossEntropy computes in T (below); CtcLoss in float64 whatever T is.
//
// SoftmaxCrossEntropy(logits[N, C, d...], labels[N, d...]): per position
//   loss = logsumexp_c(logits) - logits[label]
// Positions whose label equals ignore_index (when >= 0) give 0 and are not counted; reduction
// none keeps [N, d...], sum adds, mean divides the sum by the number of counted positions (ONNX;
// 0 when every position is ignored). dlogits = (softmax - onehot(label)) * (upstream scale).
//
// CtcLoss(log_probs[T, N, C], targets[N, S], input_lengths[N], target_lengths[N]): per sample
//   loss_n = -log sum_{alignments a} prod_t exp(log_probs[t, n, a_t])
// over the alignments of the first input_lengths[n] frames that collapse (merge repeats, drop
// blanks) to targets[n, :target_lengths[n]], by the log-space alpha recursion over the
// 2L+1-state lattice (blank, l1, blank, ..., lL, blank). Backward runs the beta recursion and
// gives, for t < input_lengths[n] (alpha and beta both include the emission at t),
//   d loss_n / d log_probs[t, n, c] = -sum_{u: l'_u = c} exp(alpha_t(u) + beta_t(u) - lp - logP)
// the exact gradient w.r.t. log_probs as free inputs. (PyTorch returns this plus
// exp(log_probs), which agrees only after a LogSoftmax's backward.)
// Reduction mean follows PyTorch: each loss_n is divided by max(target_lengths[n], 1), then the
// mean is taken over N. A sample no alignment can produce (input too short) has loss 0 and
// gradient 0 (PyTorch's zero_infinity=True), so one bad sample cannot poison a training step.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/cpu/elementwise_impl.h"
#include "tessera/exec/cpu/kept_array_impl.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::string Label(const graph::Node& node) {
  return absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ")");
}

template <typename T>
void Fill(const Tensor<T>& t, T value) {
  if (t.present()) std::fill(t.data, t.data + t.size(), value);
}

double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

// ----- SoftmaxCrossEntropy -------------------------------------------------------------------
// Computed in T (float when training) with Eigen's packet exp, the samples split over the
// context's threads; only the loss total is summed in float64. state.reals[0] keeps the softmax
// probabilities in logits' layout, as T (kept_array_impl.h); state.reals[1] is {count of counted
// positions}.

struct SceView {
  int64_t n, c, inner;  // logits [n, c, inner]: class j of position (b, s) at (b*c + j)*inner + s
};

SceView MakeSceView(const graph::Shape& logits, int64_t size) {
  const int64_t n = logits[0], c = logits[1];
  return {n, c, n * c == 0 ? 0 : size / (n * c)};
}

bool Ignored(const graph::LossAttrs& attrs, int64_t label) {
  return attrs.ignore_index >= 0 && label == attrs.ignore_index;
}

// Checks every label that is not ignored; returns the number of counted positions.
template <typename T>
absl::StatusOr<int64_t> CountLabels(const graph::Node& node, const Tensor<T>& labels,
                                    const SceView& v) {
  const auto& attrs = std::get<graph::LossAttrs>(node.attrs);
  int64_t count = 0;
  for (int64_t pos = 0; pos < v.n * v.inner; ++pos) {
    const int64_t label = labels.index(pos);
    if (Ignored(attrs, label)) continue;
    if (label < 0 || label >= v.c) {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(node), ": label ", label, " at position ", pos, " is not a class in [0, ", v.c,
          "); check the labels against the number of classes"));
    }
    ++count;
  }
  return count;
}

// Eigen's exp and sum over a dynamic-size map peel the elements before the first 64-byte
// boundary off to scalar code (std::exp, rounded differently) and sum in an order that follows
// the address, so results would change with the buffers' alignment (from run to run, or with the
// thread count). These run every element through the packet exp, one 512-bit block at a time,
// and sum in a fixed order.
template <typename T>
using Block = Eigen::Array<T, 64 / sizeof(T), 1>;

// p = exp(x - shift) for n values; returns their sum.
template <typename T>
T ExpShiftedSum(const T* x, T shift, int64_t n, T* p) {
  constexpr int64_t kLanes = Block<T>::SizeAtCompileTime;
  Block<T> acc = Block<T>::Zero();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Eigen::Map<Block<T>> out(p + j);
    out = (Eigen::Map<const Block<T>>(x + j) - shift).exp();
    acc += out;
  }
  if (j < n) {
    Block<T> tail = Block<T>::Constant(shift);
    std::copy(x + j, x + n, tail.data());
    tail = (tail - shift).exp();
    std::fill(tail.data() + (n - j), tail.data() + kLanes, T(0));
    std::copy(tail.data(), tail.data() + (n - j), p + j);
    acc += tail;
  }
  return acc.sum();
}

// p = exp(x - shift), element by element, for n values.
template <typename T>
void ExpShifted(const T* x, const T* shift, int64_t n, T* p) {
  constexpr int64_t kLanes = Block<T>::SizeAtCompileTime;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    Eigen::Map<Block<T>>(p + j) =
        (Eigen::Map<const Block<T>>(x + j) - Eigen::Map<const Block<T>>(shift + j)).exp();
  if (j < n) {
    Block<T> tx = Block<T>::Zero(), ts = Block<T>::Zero();
    std::copy(x + j, x + n, tx.data());
    std::copy(shift + j, shift + n, ts.data());
    tx = (tx - ts).exp();
    std::copy(tx.data(), tx.data() + (n - j), p + j);
  }
}

// Softmax of sample b's [C, inner] block into p, and per position logsumexp - logit[label]
// into loss (0 where the label is ignored). m and s are `inner` values of scratch.
template <typename T>
void SoftmaxLossBlock(const SceView& v, const graph::LossAttrs& attrs, const Tensor<T>& labels,
                      int64_t b, const T* x, T* p, T* loss, T* m, T* s) {
  const auto label_at = [&](int64_t at) {
    const int64_t label = labels.index(b * v.inner + at);
    return Ignored(attrs, label) ? int64_t{-1} : label;
  };
  if (v.inner == 1) {
    const T mx = ConstArrayMap<T>(x, v.c).maxCoeff();
    const T sum = ExpShiftedSum(x, mx, v.c, p);
    ArrayMap<T>(p, v.c) *= T(1) / sum;
    const int64_t label = label_at(0);
    loss[0] = label < 0 ? T(0) : mx + std::log(sum) - x[label];
    return;
  }
  const auto row = [&](const T* base, int64_t j) {
    return ConstArrayMap<T>(base + j * v.inner, v.inner);
  };
  ArrayMap<T> mm(m, v.inner), ss(s, v.inner);
  mm = row(x, 0);
  for (int64_t j = 1; j < v.c; ++j) mm = mm.max(row(x, j));
  ss.setZero();
  for (int64_t j = 0; j < v.c; ++j) {
    ExpShifted(x + j * v.inner, m, v.inner, p + j * v.inner);
    ss += row(p, j);
  }
  for (int64_t j = 0; j < v.c; ++j) ArrayMap<T>(p + j * v.inner, v.inner) /= ss;
  for (int64_t at = 0; at < v.inner; ++at) {
    const int64_t label = label_at(at);
    loss[at] = label < 0 ? T(0) : m[at] + std::log(s[at]) - x[label * v.inner + at];
  }
}

// Samples per part of a parallel loop over [C, inner] blocks.
int64_t MinSamplesPerThread(const SceView& v) {
  return std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(v.c * v.inner, 1));
}

template <typename T>
absl::Status SoftmaxCrossEntropyForward(const ForwardArgs<T>& a) {
  const auto& attrs = std::get<graph::LossAttrs>(a.node.attrs);
  const Tensor<T>& logits = a.inputs[0];
  const SceView v = MakeSceView(logits.shape, logits.size());
  TS_ASSIGN_OR_RETURN(const int64_t count, CountLabels(a.node, a.inputs[1], v));
  a.state.reals.resize(2);
  T* prob = KeepArray<T>(a.state.reals[0], logits.size());
  a.state.reals[1] = {static_cast<double>(count)};
  thread_local ScratchVector<T> loss_scratch;
  T* loss = GrowScratch(loss_scratch, v.n * v.inner);
  const int64_t block = v.c * v.inner;
  ParallelFor(a.ctx.threads, v.n, MinSamplesPerThread(v), [&](int64_t b0, int64_t b1) {
    std::vector<T> m(v.inner > 1 ? v.inner : 0), s(m.size());
    for (int64_t b = b0; b < b1; ++b)
      SoftmaxLossBlock(v, attrs, a.inputs[1], b, logits.data + b * block, prob + b * block,
                       loss + b * v.inner, m.data(), s.data());
  });
  T* y = a.outputs[0].data;
  if (attrs.reduction == graph::Reduction::kNone) {
    std::copy(loss, loss + v.n * v.inner, y);
    return absl::OkStatus();
  }
  double total = 0;
  for (int64_t pos = 0; pos < v.n * v.inner; ++pos) total += loss[pos];
  if (attrs.reduction == graph::Reduction::kMean) total = count > 0 ? total / count : 0.0;
  y[0] = static_cast<T>(total);
  return absl::OkStatus();
}

// dlogits of sample b's block: (p - onehot(label)) * scale, 0 at ignored positions.
template <typename T>
void SoftmaxLossGradBlock(const SceView& v, const graph::LossAttrs& attrs,
                          const Tensor<T>& labels, int64_t b, const T* p, const T* dy,
                          double mean_scale, T* dl, T* scale) {
  for (int64_t at = 0; at < v.inner; ++at) {
    const int64_t pos = b * v.inner + at;
    const int64_t label = labels.index(pos);
    T g = attrs.reduction == graph::Reduction::kNone ? dy[pos] : dy[0];
    if (attrs.reduction == graph::Reduction::kMean) g = static_cast<T>(dy[0] * mean_scale);
    scale[at] = Ignored(attrs, label) ? T(0) : g;
  }
  if (v.inner == 1) {
    ArrayMap<T>(dl, v.c) = ConstArrayMap<T>(p, v.c) * scale[0];
  } else {
    for (int64_t j = 0; j < v.c; ++j)
      ArrayMap<T>(dl + j * v.inner, v.inner) =
          ConstArrayMap<T>(p + j * v.inner, v.inner) * ConstArrayMap<T>(scale, v.inner);
  }
  for (int64_t at = 0; at < v.inner; ++at) {
    const int64_t label = labels.index(b * v.inner + at);
    if (!Ignored(attrs, label)) dl[label * v.inner + at] -= scale[at];
  }
}

template <typename T>
absl::Status SoftmaxCrossEntropyBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dl = a.grad_inputs[0];
  if (!dl.present()) return absl::OkStatus();
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) {
    std::fill(dl.data, dl.data + dl.size(), T(0));
    return absl::OkStatus();
  }
  const auto& attrs = std::get<graph::LossAttrs>(a.node.attrs);
  const SceView v = MakeSceView(dl.shape, dl.size());
  const T* prob = KeptArray<T>(a.state.reals.at(0));
  const double count = a.state.reals.at(1).at(0);
  const double mean_scale = count > 0 ? 1.0 / count : 0.0;
  const int64_t block = v.c * v.inner;
  ParallelFor(a.ctx.threads, v.n, MinSamplesPerThread(v), [&](int64_t b0, int64_t b1) {
    std::vector<T> scale(v.inner);
    for (int64_t b = b0; b < b1; ++b)
      SoftmaxLossGradBlock(v, attrs, a.inputs[1], b, prob + b * block, dy, mean_scale,
                           dl.data + b * block, scale.data());
  });
  return absl::OkStatus();
}

// ----- CtcLoss -------------------------------------------------------------------------------

struct CtcSample {
  int64_t frames = 0;        // input_lengths[n]
  std::vector<int64_t> ext;  // extended labels l': blank, l1, blank, ..., lL, blank
};

struct CtcProblem {
  int64_t t_max, n, c, s_max, u_max, blank;
  std::vector<CtcSample> samples;
};

template <typename T>
absl::StatusOr<CtcProblem> ReadCtc(const graph::Node& node, absl::Span<const Tensor<T>> in) {
  const auto& attrs = std::get<graph::LossAttrs>(node.attrs);
  CtcProblem p{.t_max = in[0].shape[0],
               .n = in[0].shape[1],
               .c = in[0].shape[2],
               .s_max = in[1].shape[1],
               .u_max = 2 * in[1].shape[1] + 1,
               .blank = attrs.blank};
  p.samples.resize(p.n);
  for (int64_t b = 0; b < p.n; ++b) {
    CtcSample& s = p.samples[b];
    s.frames = in[2].index(b);
    const int64_t len = in[3].index(b);
    if (s.frames < 0 || s.frames > p.t_max || len < 0 || len > p.s_max) {
      return absl::InvalidArgumentError(absl::StrCat(
          Label(node), ": sample ", b, " has input length ", s.frames, " and target length ", len,
          "; they must lie in [0, ", p.t_max, "] and [0, ", p.s_max, "]"));
    }
    s.ext.assign(2 * len + 1, p.blank);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t label = in[1].index(b * p.s_max + i);
      if (label < 0 || label >= p.c || label == p.blank) {
        return absl::InvalidArgumentError(
            absl::StrCat(Label(node), ": target ", label, " of sample ", b, " at position ", i,
                         " is not a non-blank class in [0, ", p.c, ") (blank is ", p.blank, ")"));
      }
      s.ext[2 * i + 1] = label;
    }
  }
  return p;
}

// May state u take the skip transition from u - 2 (a label differing from the previous one)?
bool CanSkip(const std::vector<int64_t>& ext, int64_t u, int64_t blank) {
  return u >= 2 && ext[u] != blank && ext[u] != ext[u - 2];
}

// alpha[t * U + u] for one sample (log space, emission at t included); returns log P.
template <typename T>
double CtcAlpha(const CtcProblem& p, int64_t b, const T* lp, double* alpha) {
  const CtcSample& s = p.samples[b];
  const int64_t U = static_cast<int64_t>(s.ext.size());
  std::fill(alpha, alpha + p.t_max * p.u_max, kNegInf);
  if (s.frames == 0) return U == 1 ? 0.0 : kNegInf;
  const auto emit = [&](int64_t t, int64_t u) -> double {
    return lp[(t * p.n + b) * p.c + s.ext[u]];
  };
  alpha[0] = emit(0, 0);
  if (U > 1) alpha[1] = emit(0, 1);
  for (int64_t t = 1; t < s.frames; ++t) {
    const double* prev = alpha + (t - 1) * p.u_max;
    double* cur = alpha + t * p.u_max;
    for (int64_t u = 0; u < U; ++u) {
      double v = prev[u];
      if (u >= 1) v = LogAdd(v, prev[u - 1]);
      if (CanSkip(s.ext, u, p.blank)) v = LogAdd(v, prev[u - 2]);
      cur[u] = v == kNegInf ? kNegInf : v + emit(t, u);
    }
  }
  const double* last = alpha + (s.frames - 1) * p.u_max;
  return U > 1 ? LogAdd(last[U - 1], last[U - 2]) : last[0];
}

// Per-sample weight of the upstream gradient under the reduction.
double CtcScale(graph::Reduction r, const CtcProblem& p, int64_t b, const double* dy) {
  if (r == graph::Reduction::kNone) return dy[b];
  if (r == graph::Reduction::kSum) return dy[0];
  const int64_t len = (static_cast<int64_t>(p.samples[b].ext.size()) - 1) / 2;
  return dy[0] / (static_cast<double>(std::max<int64_t>(len, 1)) * static_cast<double>(p.n));
}

// state.reals[0]: alpha, [N, T, 2S+1]; state.reals[1]: log P per sample.
template <typename T>
absl::Status CtcLossForward(const ForwardArgs<T>& a) {
  absl::StatusOr<CtcProblem> p = ReadCtc(a.node, a.inputs);
  if (!p.ok()) return p.status();
  const auto& attrs = std::get<graph::LossAttrs>(a.node.attrs);
  std::vector<double> alpha(p->n * p->t_max * p->u_max), log_p(p->n);
  std::vector<double> loss(p->n, 0.0);
  for (int64_t b = 0; b < p->n; ++b) {
    log_p[b] = CtcAlpha(*p, b, a.inputs[0].data, alpha.data() + b * p->t_max * p->u_max);
    if (log_p[b] != kNegInf) loss[b] = -log_p[b];  // infeasible: 0 (zero_infinity)
  }
  T* y = a.outputs[0].data;
  if (attrs.reduction == graph::Reduction::kNone) {
    for (int64_t b = 0; b < p->n; ++b) y[b] = static_cast<T>(loss[b]);
  } else {
    const double one = 1.0;
    double total = 0;
    for (int64_t b = 0; b < p->n; ++b) total += loss[b] * CtcScale(attrs.reduction, *p, b, &one);
    y[0] = static_cast<T>(total);
  }
  a.state.reals = {std::move(alpha), std::move(log_p)};
  return absl::OkStatus();
}

// beta[t * U + u] for one sample (log space, emission at t included).
template <typename T>
void CtcBeta(const CtcProblem& p, int64_t b, const T* lp, double* beta) {
  const CtcSample& s = p.samples[b];
  const int64_t U = static_cast<int64_t>(s.ext.size());
  std::fill(beta, beta + p.t_max * p.u_max, kNegInf);
  if (s.frames == 0) return;
  const auto emit = [&](int64_t t, int64_t u) -> double {
    return lp[(t * p.n + b) * p.c + s.ext[u]];
  };
  double* last = beta + (s.frames - 1) * p.u_max;
  last[U - 1] = emit(s.frames - 1, U - 1);
  if (U > 1) last[U - 2] = emit(s.frames - 1, U - 2);
  for (int64_t t = s.frames - 2; t >= 0; --t) {
    const double* next = beta + (t + 1) * p.u_max;
    double* cur = beta + t * p.u_max;
    for (int64_t u = 0; u < U; ++u) {
      double v = next[u];
      if (u + 1 < U) v = LogAdd(v, next[u + 1]);
      if (u + 2 < U && CanSkip(s.ext, u + 2, p.blank)) v = LogAdd(v, next[u + 2]);
      cur[u] = v == kNegInf ? kNegInf : v + emit(t, u);
    }
  }
}

template <typename T>
absl::Status CtcLossBackward(const BackwardArgs<T>& a) {
  const Tensor<T>& dlp = a.grad_inputs[0];
  if (!dlp.present()) return absl::OkStatus();
  Fill(dlp, T(0));
  if (a.grad_outputs[0].data == nullptr) return absl::OkStatus();
  absl::StatusOr<CtcProblem> p = ReadCtc(a.node, a.inputs);
  if (!p.ok()) return p.status();
  const auto& attrs = std::get<graph::LossAttrs>(a.node.attrs);
  const Tensor<T>& dyt = a.grad_outputs[0];
  std::vector<double> dy(dyt.data, dyt.data + dyt.size());
  const std::vector<double>& alpha = a.state.reals.at(0);
  const std::vector<double>& log_p = a.state.reals.at(1);
  const T* lp = a.inputs[0].data;
  std::vector<double> beta(p->t_max * p->u_max), lcab(p->c);
  for (int64_t b = 0; b < p->n; ++b) {
    if (log_p[b] == kNegInf) continue;  // infeasible sample: zero gradient
    const double g = CtcScale(attrs.reduction, *p, b, dy.data());
    CtcBeta(*p, b, lp, beta.data());
    const CtcSample& s = p->samples[b];
    const double* al = alpha.data() + b * p->t_max * p->u_max;
    for (int64_t t = 0; t < s.frames; ++t) {
      // alpha_t(u) + beta_t(u) counts the emission at t twice: subtract lp once more below.
      std::fill(lcab.begin(), lcab.end(), kNegInf);
      for (size_t u = 0; u < s.ext.size(); ++u)
        lcab[s.ext[u]] = LogAdd(lcab[s.ext[u]], al[t * p->u_max + u] + beta[t * p->u_max + u]);
      const int64_t row = (t * p->n + b) * p->c;
      for (int64_t c = 0; c < p->c; ++c) {
        if (lcab[c] == kNegInf) continue;
        dlp.data[row + c] = static_cast<T>(-g * std::exp(lcab[c] - lp[row + c] - log_p[b]));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterLossKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kSoftmaxCrossEntropy) = {&SoftmaxCrossEntropyForward<T>,
                                                      &SoftmaxCrossEntropyBackward<T>};
  Slot(table, graph::OpKind::kCtcLoss) = {&CtcLossForward<T>, &CtcLossBackward<T>};
}

template void RegisterLossKernels<float>(KernelTable<float>&);
template void RegisterLossKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
