// CUDA kernels against the CPU reference. Compiled whenever nvcc is found; each
// test is skipped, saying so, where no GPU is present (as on CI machines).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "tessera/base/cuda/cuda_status.h"
#include "tessera/exec/cuda/kernels.h"
#include "tessera/memory/cuda/cuda_memory.h"

namespace tessera::exec::cuda {
namespace {

using memory::DeviceAllocation;

#define SKIP_WITHOUT_GPU()                                                            \
  if (base::CudaDeviceCount() == 0) {                                                 \
    GTEST_SKIP() << "no GPU present: the CUDA kernels are compiled here but not run"; \
  }

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// `floats` floats of `gpu`, holding `host` when it is given.
DeviceAllocation Floats(memory::DeviceMemory& gpu, int64_t floats,
                        const std::vector<float>* host = nullptr) {
  auto a = DeviceAllocation::Create(gpu, floats * sizeof(float), /*alignment=*/256);
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return {};
  if (host != nullptr) {
    const absl::Status s = memory::CopyToDevice(host->data(), floats * sizeof(float), *a);
    EXPECT_TRUE(s.ok()) << s;
  }
  return *std::move(a);
}

float* F(const DeviceAllocation& a) { return static_cast<float*>(a.data()); }

std::vector<float> ToHost(const DeviceAllocation& a, int64_t floats) {
  std::vector<float> host(floats);
  const absl::Status s = memory::CopyToHost(a, floats * sizeof(float), host.data());
  EXPECT_TRUE(s.ok()) << s;
  return host;
}

TEST(CudaKernelsTest, ReluForwardAndBackwardMatchCpu) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kN = 100003;  // not a multiple of the block size
  const std::vector<float> x = Random(kN, 1), dy = Random(kN, 2);
  auto gpu = memory::CudaMemory::Create(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const DeviceAllocation x_dev = Floats(**gpu, kN, &x), y_dev = Floats(**gpu, kN),
                         dy_dev = Floats(**gpu, kN, &dy), dx_dev = Floats(**gpu, kN);
  ASSERT_TRUE(ReluForward(F(x_dev), F(y_dev), kN, nullptr).ok());
  ASSERT_TRUE(ReluBackward(F(y_dev), F(dy_dev), F(dx_dev), kN, nullptr).ok());
  const std::vector<float> y = ToHost(y_dev, kN), dx = ToHost(dx_dev, kN);
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(y[i], x[i] > 0 ? x[i] : 0.f) << i;
    ASSERT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.f) << i;
  }
}

TEST(CudaKernelsTest, SgemmMatchesCpu) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kM = 37, kN = 53, kK = 29;
  const std::vector<float> a = Random(kM * kK, 3), b = Random(kK * kN, 4);
  std::vector<float> expected(kM * kN, 0.f);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t p = 0; p < kK; ++p)
      for (int64_t j = 0; j < kN; ++j) expected[i * kN + j] += a[i * kK + p] * b[p * kN + j];
  auto blas = CublasHandle::Create();
  auto gpu = memory::CudaMemory::Create(0);
  ASSERT_TRUE(blas.ok() && gpu.ok());
  const DeviceAllocation a_dev = Floats(**gpu, kM * kK, &a), b_dev = Floats(**gpu, kK * kN, &b),
                         c_dev = Floats(**gpu, kM * kN);
  ASSERT_TRUE(Sgemm(*blas, F(a_dev), F(b_dev), F(c_dev), kM, kN, kK).ok());
  const std::vector<float> c = ToHost(c_dev, kM * kN);
  for (int64_t i = 0; i < kM * kN; ++i) ASSERT_NEAR(c[i], expected[i], 1e-4f) << i;
}

}  // namespace
}  // namespace tessera::exec::cuda
