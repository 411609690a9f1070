// Test helper for the CUDA op kernels: runs the CPU kernel (exec/cpu) and the CUDA kernel
// (exec/cuda/op_kernels.h) of one node on the same random inputs, forward and backward, and
// compares outputs and input gradients within a tolerance. Where no GPU is present the caller
// skips with SKIP_WITHOUT_GPU() ("no GPU present: compiled, not run").
//
//   TEST(CudaOps, Relu) {
//     SKIP_WITHOUT_GPU();
//     EXPECT_TRUE(MatchesCpu({.kind = OpKind::kRelu, .inputs = {{.shape = {3, 4}}}}));
//   }
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tessera/base/cuda/cuda_status.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/cuda/op_kernels.h"
#include "tessera/memory/cuda/cuda_memory.h"
#include "tessera/tests/exec/op_test_util.h"

namespace tessera::exec::cuda::testing {

#define SKIP_WITHOUT_GPU()                                              \
  if (::tessera::base::CudaDeviceCount() == 0) {                        \
    GTEST_SKIP() << "no GPU present: compiled, not run";                \
  }

using cpu::testing::OpCase;

inline ::testing::AssertionResult Close(const char* what, size_t index,
                                        const std::vector<float>& got,
                                        const std::vector<float>& want, float tol) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << what << " " << index << ": size " << got.size()
                                         << " vs " << want.size();
  }
  for (size_t k = 0; k < got.size(); ++k) {
    if (!(std::abs(got[k] - want[k]) <= tol * std::max(1.f, std::abs(want[k])))) {
      return ::testing::AssertionFailure() << what << " " << index << "[" << k << "]: CUDA "
                                           << got[k] << ", CPU " << want[k];
    }
  }
  return ::testing::AssertionSuccess();
}

// Uploads `host` into a new allocation of `gpu` (at least one float).
inline absl::StatusOr<memory::DeviceAllocation> Upload(memory::DeviceMemory& gpu,
                                                       const std::vector<float>& host) {
  const int64_t bytes = sizeof(float) * std::max<size_t>(1, host.size());
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation b,
                      memory::DeviceAllocation::Create(gpu, bytes, /*alignment=*/256));
  TS_RETURN_IF_ERROR(memory::CopyToDevice(host.data(), sizeof(float) * host.size(), b));
  return b;
}

// The first `n` floats of device memory at `device`, on the host.
inline absl::StatusOr<std::vector<float>> Download(const float* device, size_t n) {
  std::vector<float> host(n);
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

// The CPU float kernel and the CUDA kernel agree on Y and on every floating input's gradient.
inline ::testing::AssertionResult MatchesCpu(const OpCase& c, float tol = 1e-4f) {
  auto g = cpu::testing::BuildOpGraph(c);
  if (!g.ok()) return ::testing::AssertionFailure() << "graph: " << g.status();
  const graph::Node& node = g->node(0);
  const std::vector<cpu::testing::Storage> inputs = cpu::testing::MakeInputs(c);
  std::mt19937 rng(c.seed + 7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> r(node.outputs.size());
  for (size_t j = 0; j < r.size(); ++j) {
    r[j].resize(cpu::testing::NumElements(g->tensor(node.outputs[j]).shape));
    for (double& v : r[j]) v = dist(rng);
  }
  auto want = cpu::testing::RunOp<float>(*g, inputs, &r);
  if (!want.ok()) return ::testing::AssertionFailure() << "CPU: " << want.status();

  auto gpu = memory::CudaMemory::Create(0);
  if (!gpu.ok()) return ::testing::AssertionFailure() << "CUDA memory: " << gpu.status();
  std::vector<memory::DeviceAllocation> keep;
  std::vector<Tensor> in, out, dout, din;
  const auto add = [&](const std::vector<float>& host) -> float* {
    auto b = Upload(**gpu, host);
    if (!b.ok()) return nullptr;
    keep.push_back(std::move(*b));
    return static_cast<float*>(keep.back().data());
  };
  keep.reserve(4 * (inputs.size() + node.outputs.size()) + 4);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (node.inputs[i] == graph::kNoTensor) {
      in.push_back({});
      din.push_back({});
      continue;
    }
    const graph::Tensor& t = g->tensor(node.inputs[i]);
    if (cpu::testing::IsIntegral(t.dtype)) {  // as int64: two floats' bytes per value
      std::vector<float> raw(2 * inputs[i].ints.size());
      std::memcpy(raw.data(), inputs[i].ints.data(), raw.size() * sizeof(float));
      in.push_back({.shape = t.shape, .data = add(raw), .dtype = graph::DType::kI64});
      din.push_back({.shape = t.shape, .dtype = t.dtype});
    } else {
      in.push_back({.shape = t.shape,
                    .data = add(std::vector<float>(inputs[i].reals.begin(),
                                                   inputs[i].reals.end())),
                    .dtype = t.dtype});
      din.push_back({.shape = t.shape, .data = add(std::vector<float>(t.shape.empty() ? 1 : cpu::testing::NumElements(t.shape))), .dtype = t.dtype});
    }
  }
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    const graph::Tensor& t = g->tensor(node.outputs[j]);
    out.push_back({.shape = t.shape,
                   .data = add(std::vector<float>(cpu::testing::NumElements(t.shape))),
                   .dtype = t.dtype});
    dout.push_back({.shape = t.shape,
                    .data = add(std::vector<float>(r[j].begin(), r[j].end())),
                    .dtype = t.dtype});
  }
  auto blas = CublasHandle::Create();
  auto dnn = CudnnHandle::Create();
  if (!blas.ok() || !dnn.ok()) return ::testing::AssertionFailure() << "cuBLAS/cuDNN handles";
  const KernelContext ctx{.blas = blas->get(), .dnn = dnn->get(), .memory = gpu->get()};
  OpState state;
  if (absl::Status s = Forward(node, in, out, ctx, state); !s.ok()) {
    return ::testing::AssertionFailure() << "CUDA forward: " << s;
  }
  if (absl::Status s = Backward(node, in, out, dout, din, ctx, state); !s.ok()) {
    return ::testing::AssertionFailure() << "CUDA backward: " << s;
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return ::testing::AssertionFailure() << "sync";
  for (size_t j = 0; j < out.size(); ++j) {
    auto host = Download(out[j].data, want->outputs[j].size());
    if (!host.ok()) return ::testing::AssertionFailure() << "copy Y" << j << ": " << host.status();
    if (auto ok = Close("Y", j, *host, want->outputs[j], tol); !ok) return ok;
  }
  for (size_t i = 0; i < din.size(); ++i) {
    if (!din[i].present() || want->grad_inputs[i].empty()) continue;
    auto host = Download(din[i].data, want->grad_inputs[i].size());
    if (!host.ok()) return ::testing::AssertionFailure() << "copy dX" << i << ": " << host.status();
    if (auto ok = Close("dX", i, *host, want->grad_inputs[i], tol); !ok) return ok;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::exec::cuda::testing
