// Internal to the CPU kernels of the element-wise, layout and reduction families: error
// messages that name the node, dtype checks, Eigen views of raw buffers, a parallel loop on a
// shared thread pool, and the registration hooks of the family files split over several .cc.
//
//   TS_RETURN_IF_ERROR(RequireFloating(a.node, a.inputs[0], "X"));
//   ParallelFor(a.ctx.threads, n, kMinParallelElements, [&](int64_t b, int64_t e) {
//     ArrayMap<T>(y + b, e - b) = ConstArrayMap<T>(x + b, e - b).tanh();
//   });
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include <Eigen/Dense>
#include <unsupported/Eigen/CXX11/ThreadPool>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tessera/exec/cpu/kernel_registry_impl.h"

namespace tessera::exec::cpu {

// "node 'name' (Op)".
inline std::string KernelNodeLabel(const graph::Node& node) {
  return absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ")");
}

inline absl::Status KernelUnimplemented(const graph::Node& node, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(KernelNodeLabel(node), ": ", what));
}

inline absl::Status KernelInvalid(const graph::Node& node, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(KernelNodeLabel(node), ": ", what));
}

// An attribute axis in [0, rank). Shape inference has checked it; a node that reaches a kernel
// without it gets an error instead of an out-of-range read.
inline absl::StatusOr<int64_t> KernelAxis(const graph::Node& node, int64_t axis, int64_t rank) {
  if (auto n = graph::NormalizeAxis(axis, rank)) return *n;
  return KernelInvalid(node, absl::StrCat("axis ", axis, " is out of range for rank ", rank,
                                          " (run shape inference on the graph first)"));
}

// Arithmetic kernels compute in T; integer tensors reach them only through a graph that asks for
// integer arithmetic, which importers fold away. Say so instead of reading integers as T.
template <typename T>
absl::Status RequireFloating(const graph::Node& node, const Tensor<T>& t, absl::string_view slot) {
  if (graph::IsFloating(t.dtype)) return absl::OkStatus();
  return KernelUnimplemented(
      node, absl::StrCat(slot, " is ", graph::DTypeName(t.dtype),
                         "; the CPU kernel computes in floating point only (cast it first)"));
}

// Bytes of one stored element of `t`: integers as their dtype says, everything else as T
// (floating tensors, and bool tensors, which Tensor::index() reads as T).
template <typename T>
int64_t StoredElementBytes(const Tensor<T>& t) {
  if (t.dtype == graph::DType::kI32) return 4;
  if (t.dtype == graph::DType::kI64) return 8;
  return static_cast<int64_t>(sizeof(T));
}

// Writes integer value v as element i of `t` in its stored type.
template <typename T>
void StoreIndex(const Tensor<T>& t, int64_t i, int64_t v) {
  void* p = t.data;
  if (t.dtype == graph::DType::kI32) {
    static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  } else if (t.dtype == graph::DType::kI64) {
    static_cast<int64_t*>(p)[i] = v;
  } else {
    t.data[i] = static_cast<T>(v);
  }
}

// Calls fn(U{}) with U the stored element type of `t`: int32_t, int64_t, or T (floating and
// bool tensors). Layout kernels move any dtype through it.
template <typename T, typename Fn>
void WithStoredType(const Tensor<T>& t, Fn&& fn) {
  if (t.dtype == graph::DType::kI32) {
    fn(int32_t{});
  } else if (t.dtype == graph::DType::kI64) {
    fn(int64_t{});
  } else {
    fn(T{});
  }
}

// Layout kernels copy elements between tensors that must store them alike.
template <typename T>
absl::Status RequireSameStorage(const graph::Node& node, const Tensor<T>& in,
                                const Tensor<T>& out) {
  if (StoredElementBytes(in) == StoredElementBytes(out)) return absl::OkStatus();
  return KernelInvalid(node, absl::StrCat("input is ", graph::DTypeName(in.dtype),
                                          " but output is ", graph::DTypeName(out.dtype),
                                          "; a layout op keeps the dtype (insert a Cast)"));
}

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Below this many elements per thread a loop stays on the calling thread.
inline constexpr int64_t kMinParallelElements = int64_t{1} << 15;

// The pool the kernels split large loops over (one thread per core; process-wide).
inline Eigen::ThreadPool& KernelThreadPool() {
  static Eigen::ThreadPool* pool =
      new Eigen::ThreadPool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return *pool;
}

// Calls fn(begin, end) on disjoint ranges covering [0, n), on up to `threads` threads, with at
// least `min_per_part` indices per range; returns when all are done.
template <typename Fn>
void ParallelFor(int threads, int64_t n, int64_t min_per_part, Fn&& fn) {
  const int64_t parts =
      std::min<int64_t>(std::max(threads, 1), n / std::max<int64_t>(min_per_part, 1));
  if (parts <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + parts - 1) / parts;
  Eigen::Barrier barrier(static_cast<unsigned>(parts - 1));
  for (int64_t p = 1; p < parts; ++p) {
    const int64_t begin = p * chunk, end = std::min(n, begin + chunk);
    KernelThreadPool().Schedule([&fn, &barrier, begin, end] {
      if (begin < end) fn(begin, end);
      barrier.Notify();
    });
  }
  fn(int64_t{0}, std::min(n, chunk));
  barrier.Wait();
}

// The grad output j of a backward call, or nullptr when it is a zero gradient.
template <typename T>
const T* GradOutput(const BackwardArgs<T>& a, size_t j) {
  return j < a.grad_outputs.size() ? a.grad_outputs[j].data : nullptr;
}

// A node's attributes are of its kind's alternative (graph::Graph::AddNode checks it); a node
// built by hand with another alternative gets an error instead of std::bad_variant_access.
inline absl::Status CheckAttrs(const graph::Node& node) {
  if (graph::AttrsMatchKind(node.kind, node.attrs)) return absl::OkStatus();
  return KernelInvalid(node,
                       "carries the attributes of another op kind (give it the alternative "
                       "graph::DefaultAttrs returns for its kind)");
}

// The kernel table entry of forward F and backward B, both behind CheckAttrs.
template <typename T, absl::Status (*F)(const ForwardArgs<T>&),
          absl::Status (*B)(const BackwardArgs<T>&)>
KernelFns<T> Checked() {
  return {[](const ForwardArgs<T>& a) {
            if (absl::Status s = CheckAttrs(a.node); !s.ok()) return s;
            return F(a);
          },
          [](const BackwardArgs<T>& a) {
            if (absl::Status s = CheckAttrs(a.node); !s.ok()) return s;
            return B(a);
          }};
}

// Sub-families of RegisterElementwiseKernels, each in its own file.
template <typename T>
void RegisterUnaryMathKernels(KernelTable<T>& table);  // elementwise_unary.cc
template <typename T>
void RegisterBinaryKernels(KernelTable<T>& table);  // elementwise_binary.cc
template <typename T>
void RegisterSpecialKernels(KernelTable<T>& table);  // elementwise_special.cc
// Sub-families of RegisterLayoutKernels.
template <typename T>
void RegisterSliceKernels(KernelTable<T>& table);  // layout_slice.cc
template <typename T>
void RegisterConcatGatherKernels(KernelTable<T>& table);  // layout_concat.cc

}  // namespace tessera::exec::cpu
