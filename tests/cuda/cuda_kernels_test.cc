// CUDA kernels against the CPU reference. Compiled whenever nvcc is found; each
// test is skipped, saying so, where no GPU is present (as on CI machines).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tessera/exec/cuda/kernels.h"

namespace tessera::exec::cuda {
namespace {

#define SKIP_WITHOUT_GPU()                                                            \
  if (CudaDeviceCount() == 0) {                                                       \
    GTEST_SKIP() << "no GPU present: the CUDA kernels are compiled here but not run"; \
  }

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(CudaKernelsTest, ReluForwardAndBackwardMatchCpu) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kN = 100003;  // not a multiple of the block size
  const std::vector<float> x = Random(kN, 1), dy = Random(kN, 2);
  auto dx_dev = DeviceBuffer::Allocate(kN), x_dev = DeviceBuffer::Allocate(kN),
       y_dev = DeviceBuffer::Allocate(kN), dy_dev = DeviceBuffer::Allocate(kN);
  ASSERT_TRUE(x_dev.ok() && y_dev.ok() && dy_dev.ok() && dx_dev.ok());
  ASSERT_TRUE(x_dev->CopyFromHost(x.data(), kN).ok());
  ASSERT_TRUE(dy_dev->CopyFromHost(dy.data(), kN).ok());
  ASSERT_TRUE(ReluForward(x_dev->data(), y_dev->data(), kN, nullptr).ok());
  ASSERT_TRUE(ReluBackward(y_dev->data(), dy_dev->data(), dx_dev->data(), kN, nullptr).ok());
  std::vector<float> y(kN), dx(kN);
  ASSERT_TRUE(y_dev->CopyToHost(y.data(), kN).ok());
  ASSERT_TRUE(dx_dev->CopyToHost(dx.data(), kN).ok());
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
  auto a_dev = DeviceBuffer::Allocate(kM * kK), b_dev = DeviceBuffer::Allocate(kK * kN),
       c_dev = DeviceBuffer::Allocate(kM * kN);
  ASSERT_TRUE(blas.ok() && a_dev.ok() && b_dev.ok() && c_dev.ok());
  ASSERT_TRUE(a_dev->CopyFromHost(a.data(), kM * kK).ok());
  ASSERT_TRUE(b_dev->CopyFromHost(b.data(), kK * kN).ok());
  ASSERT_TRUE(Sgemm(*blas, a_dev->data(), b_dev->data(), c_dev->data(), kM, kN, kK).ok());
  std::vector<float> c(kM * kN);
  ASSERT_TRUE(c_dev->CopyToHost(c.data(), kM * kN).ok());
  for (int64_t i = 0; i < kM * kN; ++i) ASSERT_NEAR(c[i], expected[i], 1e-4f) << i;
}

}  // namespace
}  // namespace tessera::exec::cuda
