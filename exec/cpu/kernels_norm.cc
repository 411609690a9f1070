// CPU kernels of the Norm family (see kernels.h for the conventions): BatchNormalization and
// LayerNormalization.
//
// BatchNormalization(X[N, C, ...], scale, bias, running_mean, running_var), per channel c:
//   Y = scale * (X - mean) / sqrt(var + epsilon) + bias
// - training (ctx.training): mean and biased variance over N and the spatial axes (the batch
//   statistics); running_mean/var are not read and get a zero gradient. Updating the running
//   statistics is NOT an output of this kernel: Forward leaves the batch mean in
//   state.reals[0], the inverse std in reals[1] and the unbiased batch variance in reals[2];
//   whoever owns the running tensors applies ONNX's
//     running = momentum * running + (1 - momentum) * batch   (BatchNormAttrs::momentum)
// - inference: mean = running_mean, var = running_var; their gradients are computed too.
// LayerNormalization(X, scale, bias?): the same over the trailing axes [axis, rank) of each row.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {
namespace {

template <typename T>
void Fill(const Tensor<T>& t, T value) {
  if (t.present()) std::fill(t.data, t.data + t.size(), value);
}

// ----- BatchNormalization --------------------------------------------------------------------

struct ChannelLayout {
  int64_t n, c, inner;  // X is [n, c, inner] in memory
  int64_t count() const { return n * inner; }
};

template <typename T>
ChannelLayout Channels(const Tensor<T>& x) {
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t inner = n * c == 0 ? 0 : x.size() / (n * c);
  return {n, c, inner};
}

// Calls f(channel, pointer to a run of `inner` values) over the whole tensor.
template <typename T, typename F>
void ForEachRun(const ChannelLayout& l, T* data, F&& f) {
  for (int64_t n = 0; n < l.n; ++n)
    for (int64_t c = 0; c < l.c; ++c) f(c, data + (n * l.c + c) * l.inner);
}

// Batch statistics: mean, inverse std and unbiased variance per channel.
template <typename T>
void BatchStatistics(const ChannelLayout& l, const T* x, double epsilon, OpState& state) {
  std::vector<double> mean(l.c, 0.0), sq(l.c, 0.0);
  ForEachRun(l, x, [&](int64_t c, const T* run) {
    double s = 0;
    for (int64_t i = 0; i < l.inner; ++i) s += run[i];
    mean[c] += s;
  });
  const double m = static_cast<double>(std::max<int64_t>(l.count(), 1));
  for (double& v : mean) v /= m;
  ForEachRun(l, x, [&](int64_t c, const T* run) {
    double s = 0;
    for (int64_t i = 0; i < l.inner; ++i) s += (run[i] - mean[c]) * (run[i] - mean[c]);
    sq[c] += s;
  });
  std::vector<double> invstd(l.c), unbiased(l.c);
  for (int64_t c = 0; c < l.c; ++c) {
    invstd[c] = 1.0 / std::sqrt(sq[c] / m + epsilon);
    unbiased[c] = l.count() > 1 ? sq[c] / static_cast<double>(l.count() - 1) : 0.0;
  }
  state.reals = {std::move(mean), std::move(invstd), std::move(unbiased)};
}

template <typename T>
absl::Status BatchNormForward(const ForwardArgs<T>& a) {
  const auto& attrs = std::get<graph::BatchNormAttrs>(a.node.attrs);
  const Tensor<T>& x = a.inputs[0];
  const ChannelLayout l = Channels(x);
  if (a.ctx.training) {
    BatchStatistics(l, x.data, attrs.epsilon, a.state);
  } else {
    std::vector<double> mean(l.c), invstd(l.c);
    for (int64_t c = 0; c < l.c; ++c) {
      const double var = static_cast<double>(a.inputs[4].data[c]) + attrs.epsilon;
      if (!(var > 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", a.node.name, "' (BatchNormalization): running_var[", c,
                         "] + epsilon is ", var,
                         "; the running variance must be non-negative (check the loaded "
                         "statistics)"));
      }
      mean[c] = a.inputs[3].data[c];
      invstd[c] = 1.0 / std::sqrt(var);
    }
    a.state.reals = {std::move(mean), std::move(invstd)};
  }
  a.state.ints = {std::vector<int64_t>{a.ctx.training ? 1 : 0}};
  const std::vector<double>& mean = a.state.reals[0];
  const std::vector<double>& invstd = a.state.reals[1];
  const T* scale = a.inputs[1].data;
  const T* bias = a.inputs[2].data;
  T* y = a.outputs[0].data;
  ForEachRun(l, x.data, [&](int64_t c, const T* run) {
    const T k = static_cast<T>(scale[c] * invstd[c]);
    const T shift = static_cast<T>(bias[c] - scale[c] * invstd[c] * mean[c]);
    T* out = y + (run - x.data);
    for (int64_t i = 0; i < l.inner; ++i) out[i] = run[i] * k + shift;
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status BatchNormBackward(const BackwardArgs<T>& a) {
  for (const Tensor<T>& g : a.grad_inputs) Fill(g, T(0));
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) return absl::OkStatus();
  const Tensor<T>& x = a.inputs[0];
  const ChannelLayout l = Channels(x);
  const bool training = a.state.ints.at(0).at(0) != 0;
  const std::vector<double>& mean = a.state.reals.at(0);
  const std::vector<double>& invstd = a.state.reals.at(1);
  // Per channel: sum dY and sum dY * xhat.
  std::vector<double> sum_dy(l.c, 0.0), sum_dy_xhat(l.c, 0.0);
  ForEachRun(l, x.data, [&](int64_t c, const T* run) {
    const T* g = dy + (run - x.data);
    double s = 0, sx = 0;
    for (int64_t i = 0; i < l.inner; ++i) {
      s += g[i];
      sx += g[i] * (run[i] - mean[c]);
    }
    sum_dy[c] += s;
    sum_dy_xhat[c] += sx * invstd[c];
  });
  const T* scale = a.inputs[1].data;
  const Tensor<T>& dx = a.grad_inputs[0];
  if (dx.present()) {
    // training: dX = scale * invstd / m * (m dY - sum dY - xhat sum(dY xhat)); else scale invstd
    // dY.
    const double m = static_cast<double>(std::max<int64_t>(l.count(), 1));
    ForEachRun(l, x.data, [&](int64_t c, const T* run) {
      const int64_t off = run - x.data;
      const double k = scale[c] * invstd[c];
      const double a1 = training ? sum_dy[c] / m : 0.0;
      const double a2 = training ? sum_dy_xhat[c] / m * invstd[c] : 0.0;
      for (int64_t i = 0; i < l.inner; ++i)
        dx.data[off + i] = static_cast<T>(k * (dy[off + i] - a1 - (run[i] - mean[c]) * a2));
    });
  }
  for (int64_t c = 0; c < l.c; ++c) {
    if (a.grad_inputs[1].present()) a.grad_inputs[1].data[c] = static_cast<T>(sum_dy_xhat[c]);
    if (a.grad_inputs[2].present()) a.grad_inputs[2].data[c] = static_cast<T>(sum_dy[c]);
    if (training) continue;  // the batch statistics do not depend on the running ones
    const double k = scale[c] * invstd[c];
    if (a.grad_inputs[3].present()) a.grad_inputs[3].data[c] = static_cast<T>(-k * sum_dy[c]);
    if (a.grad_inputs[4].present())
      a.grad_inputs[4].data[c] = static_cast<T>(-0.5 * k * invstd[c] * sum_dy_xhat[c]);
  }
  return absl::OkStatus();
}

// ----- LayerNormalization --------------------------------------------------------------------

struct RowLayout {
  int64_t rows, cols;
};

template <typename T>
RowLayout Rows(const graph::Node& node, const Tensor<T>& x) {
  const auto& attrs = std::get<graph::LayerNormAttrs>(node.attrs);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = *graph::NormalizeAxis(attrs.axis, rank);  // shape inference checked it
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= x.shape[d];
  return {rows, rows == 0 ? 0 : x.size() / rows};
}

// Row statistics kept for backward: state.reals[0] mean, state.reals[1] inverse std.
template <typename T>
absl::Status LayerNormForward(const ForwardArgs<T>& a) {
  const auto& attrs = std::get<graph::LayerNormAttrs>(a.node.attrs);
  const Tensor<T>& x = a.inputs[0];
  const RowLayout l = Rows(a.node, x);
  const T* scale = a.inputs[1].data;
  const T* bias = a.inputs.size() > 2 && a.inputs[2].present() ? a.inputs[2].data : nullptr;
  std::vector<double> mean(l.rows), invstd(l.rows);
  T* y = a.outputs[0].data;
  for (int64_t r = 0; r < l.rows; ++r) {
    const T* xr = x.data + r * l.cols;
    double s = 0, sq = 0;
    for (int64_t j = 0; j < l.cols; ++j) s += xr[j];
    const double mu = l.cols == 0 ? 0.0 : s / static_cast<double>(l.cols);
    for (int64_t j = 0; j < l.cols; ++j) sq += (xr[j] - mu) * (xr[j] - mu);
    const double inv =
        1.0 / std::sqrt((l.cols == 0 ? 0.0 : sq / static_cast<double>(l.cols)) + attrs.epsilon);
    mean[r] = mu;
    invstd[r] = inv;
    T* yr = y + r * l.cols;
    const T tmu = static_cast<T>(mu), tinv = static_cast<T>(inv);
    for (int64_t j = 0; j < l.cols; ++j)
      yr[j] = (xr[j] - tmu) * tinv * scale[j] + (bias != nullptr ? bias[j] : T(0));
  }
  a.state.reals = {std::move(mean), std::move(invstd)};
  return absl::OkStatus();
}

template <typename T>
absl::Status LayerNormBackward(const BackwardArgs<T>& a) {
  for (const Tensor<T>& g : a.grad_inputs) Fill(g, T(0));
  const T* dy = a.grad_outputs[0].data;
  if (dy == nullptr) return absl::OkStatus();
  const Tensor<T>& x = a.inputs[0];
  const RowLayout l = Rows(a.node, x);
  const T* scale = a.inputs[1].data;
  const std::vector<double>& mean = a.state.reals.at(0);
  const std::vector<double>& invstd = a.state.reals.at(1);
  const Tensor<T>& dx = a.grad_inputs[0];
  const Tensor<T>& dscale = a.grad_inputs[1];
  const Tensor<T> dbias = a.grad_inputs.size() > 2 ? a.grad_inputs[2] : Tensor<T>{};
  for (int64_t r = 0; r < l.rows; ++r) {
    const T* xr = x.data + r * l.cols;
    const T* gr = dy + r * l.cols;
    const T mu = static_cast<T>(mean[r]), inv = static_cast<T>(invstd[r]);
    // dxhat = dY * scale; dX = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
    double m1 = 0, m2 = 0;
    for (int64_t j = 0; j < l.cols; ++j) {
      const T xhat = (xr[j] - mu) * inv;
      const T dxhat = gr[j] * scale[j];
      m1 += dxhat;
      m2 += dxhat * xhat;
      if (dscale.present()) dscale.data[j] += gr[j] * xhat;
      if (dbias.present()) dbias.data[j] += gr[j];
    }
    if (!dx.present()) continue;
    const T tm1 = static_cast<T>(m1 / static_cast<double>(l.cols));
    const T tm2 = static_cast<T>(m2 / static_cast<double>(l.cols));
    T* dxr = dx.data + r * l.cols;
    for (int64_t j = 0; j < l.cols; ++j) {
      const T xhat = (xr[j] - mu) * inv;
      dxr[j] = inv * (gr[j] * scale[j] - tm1 - xhat * tm2);
    }
  }
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void RegisterNormKernels(KernelTable<T>& table) {
  Slot(table, graph::OpKind::kBatchNorm) = {&BatchNormForward<T>, &BatchNormBackward<T>};
  Slot(table, graph::OpKind::kLayerNorm) = {&LayerNormForward<T>, &LayerNormBackward<T>};
}

template void RegisterNormKernels<float>(KernelTable<float>&);
template void RegisterNormKernels<double>(KernelTable<double>&);

}  // namespace tessera::exec::cpu
