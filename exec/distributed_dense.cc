// Model-parallel and late-multiply Gemm/MatMul (distributed_dense.h): the back-end's kernel on
// the gathered or exchanged operands, between the collectives. The collectives stage the
// operands in host vectors, so these layers need a back-end with host memory (the CPU's).
#include "tessera/exec/distributed_dense.h"

#include <algorithm>

#include "tessera/base/status_macros.h"
#include "tessera/exec/axis_collectives.h"
#include "tessera/graph/dtype.h"

namespace tessera::exec {
namespace {

using Tensor = TensorView;

Tensor With(const Tensor& t, graph::Shape shape, float* data) {
  return {.shape = std::move(shape), .data = data, .dtype = t.dtype};
}

}  // namespace

graph::Shape DistributedDense::Whole(graph::Shape shape) const {
  shape[axis_] *= comm_.size();
  return shape;
}


absl::Status ModelParallelDense::Forward(const graph::Node& node, Tensors in, Tensors out,
                                         Backend& backend, const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  const int p = comm_.size();
  x_shape_ = Whole(in[0].shape);
  // An Embedding's ids keep their dtype (int32 or int64), and x_ holds them as 4-byte words.
  x_.resize(graph::NumElements(x_shape_) * StoredBytes(in[0].dtype) / sizeof(float));
  TS_RETURN_IF_ERROR(Counted([&] {
    return AllGatherAxis(comm_, in[0].data, in[0].dtype, in[0].shape, axis_, x_.data(),
                         &scratch_);
  }));
  y_shape_ = Whole(out[0].shape);
  y_shape_.back() /= p;
  y_.resize(graph::NumElements(y_shape_));
  std::vector<Tensor> args(in.begin(), in.end());
  args[0] = With(in[0], x_shape_, x_.data());
  const Tensor y = With(out[0], y_shape_, y_.data());
  TS_RETURN_IF_ERROR(backend.Forward(node, args, {y}, ctx, *state));
  const int last = static_cast<int>(y_shape_.size()) - 1;
  return Counted([&] {
    return AllToAllAxis(comm_, y_.data(), y_shape_, axis_, last, out[0].floats(), &scratch_);
  });
}

absl::Status ModelParallelDense::Backward(const graph::Node& node, Tensors in, Tensors out,
                                          Tensors dout, Tensors din, Backend& backend,
                                          const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  const int last = static_cast<int>(y_shape_.size()) - 1;
  if (dout[0].present()) {
    dy_.resize(y_.size());  // every element written by the exchange
    TS_RETURN_IF_ERROR(Counted([&] {
      return AllToAllAxis(comm_, dout[0].floats(), dout[0].shape, last, axis_, dy_.data(),
                          &scratch_);
    }));
  }
  std::vector<Tensor> args(in.begin(), in.end()), grads(din.begin(), din.end());
  args[0] = With(in[0], x_shape_, x_.data());
  if (din[0].present()) {
    dx_.resize(x_.size());
    grads[0] = With(din[0], x_shape_, dx_.data());
  }
  const Tensor y = With(out[0], y_shape_, y_.data());
  const Tensor dyt = With(out[0], y_shape_, dout[0].present() ? dy_.data() : nullptr);
  TS_RETURN_IF_ERROR(backend.Backward(node, args, {y}, {dyt}, grads, ctx, *state));
  if (!din[0].present()) return absl::OkStatus();
  return Counted([&] {
    return ReduceScatterAxis(comm_, dx_.data(), x_shape_, axis_, din[0].floats(), &scratch_);
  });
}

absl::Status LateMultiplyDense::Forward(const graph::Node& node, Tensors in, Tensors out,
                                        Backend& backend, const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  return backend.Forward(node, in, out, ctx, *state);
}

absl::Status LateMultiplyDense::Backward(const graph::Node& node, Tensors in, Tensors out,
                                         Tensors dout, Tensors din, Backend& backend,
                                         const StepContext& ctx) {
  TS_ASSIGN_OR_RETURN(NodeState* state, HostState(node, backend));
  // dX from this rank's rows, as data parallelism would.
  if (din[0].present()) {
    std::vector<Tensor> only_dx(din.size());
    for (size_t i = 0; i < din.size(); ++i) only_dx[i].shape = din[i].shape;
    only_dx[0] = din[0];
    TS_RETURN_IF_ERROR(backend.Backward(node, in, out, dout, only_dx, ctx, *state));
  }
  // dW and db from the whole batch's X and dY.
  const graph::Shape x_shape = Whole(in[0].shape), y_shape = Whole(out[0].shape);
  x_.resize(graph::NumElements(x_shape));
  dy_.resize(graph::NumElements(y_shape));  // every element written by the all-gather
  std::vector<float> zero;
  const float* dy_local = dout[0].floats();
  if (dy_local == nullptr) {
    zero.assign(graph::NumElements(out[0].shape), 0.f);
    dy_local = zero.data();
  }
  TS_RETURN_IF_ERROR(Counted([&] {
    return AllGatherAxis(comm_, in[0].floats(), in[0].shape, axis_, x_.data(), &scratch_);
  }));
  TS_RETURN_IF_ERROR(Counted([&] {
    return AllGatherAxis(comm_, dy_local, out[0].shape, axis_, dy_.data(), &scratch_);
  }));
  std::vector<Tensor> args(in.begin(), in.end()), grads(din.begin(), din.end());
  args[0] = With(in[0], x_shape, x_.data());
  grads[0] = Tensor{.shape = x_shape};  // dX done above
  const Tensor y = With(out[0], y_shape, nullptr), dy = With(out[0], y_shape, dy_.data());
  return backend.Backward(node, args, {y}, {dy}, grads, ctx, *state);
}

}  // namespace tessera::exec
