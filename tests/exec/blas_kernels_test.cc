// cpu::BlasKernelsInUse: OpenBLAS multiplies with kernels that use this CPU's vector units (its own
// pick, or the SkylakeX/Haswell kernels Tessera switches it to when its version does not know
// the CPU), unless OPENBLAS_CORETYPE in the environment chose them; and products still come out
// right after the switch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "tessera/exec/cpu/gemm.h"

namespace tessera::exec::cpu {
namespace {

bool Has(const char* feature) {
  __builtin_cpu_init();
  if (std::string(feature) == "avx512") {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

TEST(BlasKernelsTest, RunsTheKernelsThisCpusVectorUnitsCallFor) {
  const BlasKernels& k = BlasKernelsInUse();
  const std::string running = absl::AsciiStrToLower(k.running);
  ASSERT_FALSE(k.why.empty());
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set != nullptr) {
    EXPECT_EQ(running, absl::AsciiStrToLower(set));
    EXPECT_NE(k.why.find("in the environment"), std::string::npos) << k.why;
    return;
  }
  std::vector<std::string> enough;
  if (Has("avx512")) {
    enough = {"skylakex", "cooperlake", "sapphirerapids"};
  } else if (Has("avx2")) {
    enough = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids", "excavator"};
  } else {
    GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2: OpenBLAS's pick stands ("
                 << k.running << ")";
  }
  EXPECT_NE(std::find(enough.begin(), enough.end(), running), enough.end())
      << "OpenBLAS runs " << k.running << " (picked " << k.detected << "): " << k.why;
  EXPECT_EQ(k.detected != k.running, k.why.find("switched from") != std::string::npos) << k.why;
}

TEST(BlasKernelsTest, ProductsAreRightWithTheKernelsInUse) {
  // [2x3] x [3x2] with exact small integers, and a larger product against a plain loop.
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  std::vector<float> c(4, -1);
  Gemm<float>(false, false, 2, 2, 3, 1.f, a.data(), 3, b.data(), 2, 0.f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
  constexpr int n = 96;
  std::vector<double> x(n * n), y(n * n), z(n * n), want(n * n, 0);
  for (int i = 0; i < n * n; ++i) {
    x[i] = (i % 7) - 3;
    y[i] = (i % 5) - 2;
  }
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < n; ++p)
      for (int j = 0; j < n; ++j) want[i * n + j] += x[i * n + p] * y[j * n + p];
  Gemm<double>(false, true, n, n, n, 1.0, x.data(), n, y.data(), n, 0.0, z.data(), n);
  EXPECT_EQ(z, want);  // integers well inside double's exact range
}

}  // namespace
}  // namespace tessera::exec::cpu
