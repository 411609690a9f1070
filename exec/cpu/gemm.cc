#include "tessera/exec/cpu/gemm.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tessera::exec::cpu {
namespace {

CBLAS_TRANSPOSE Trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

// The OpenBLAS core type this CPU's vector units call for, and the core types (lower case) that
// already use them; null when the CPU has neither AVX-512 nor AVX2 + FMA.
struct CoreFit {
  const char* core;
  std::array<std::string_view, 6> enough;
};
const CoreFit* CoreForThisCpu() {
  static constexpr CoreFit kAvx512{"SkylakeX", {"skylakex", "cooperlake", "sapphirerapids"}};
  static constexpr CoreFit kAvx2{
      "Haswell", {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids", "excavator"}};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return &kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &kAvx2;
  return nullptr;
}

BlasKernels FitBlasKernels() {
  BlasKernels k;
  k.detected = k.running = openblas_get_corename();
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set != nullptr) {
    k.why = absl::StrCat("OPENBLAS_CORETYPE=", set, " in the environment");
    return k;
  }
  const CoreFit* fit = CoreForThisCpu();
  const std::string detected = absl::AsciiStrToLower(k.detected);
  if (fit == nullptr ||
      std::find(fit->enough.begin(), fit->enough.end(), detected) != fit->enough.end()) {
    k.why = "picked by OpenBLAS for this CPU";
    return k;
  }
  // A DYNAMIC_ARCH build (Debian's) re-runs its choice, reading OPENBLAS_CORETYPE, after quit.
  using Hook = void (*)();
  const auto quit = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  const auto init = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (quit == nullptr || init == nullptr) {
    k.why = absl::StrCat("picked by OpenBLAS (a build with one kernel set; this CPU could run ",
                         fit->core, ")");
    return k;
  }
  setenv("OPENBLAS_CORETYPE", fit->core, 1);
  quit();
  init();
  unsetenv("OPENBLAS_CORETYPE");
  k.running = openblas_get_corename();
  k.why = absl::StrCat("switched from ", k.detected, ", which this OpenBLAS picked for a CPU it ",
                       "does not know, to ", fit->core,
                       ", the kernels its vector units run; OPENBLAS_CORETYPE chooses others");
  return k;
}

}  // namespace

const BlasKernels& BlasKernelsInUse() {
  static const BlasKernels* const kernels = new BlasKernels(FitBlasKernels());
  return *kernels;
}

template <>
void Gemm<float>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t ldc) {
  if (m == 0 || n == 0) return;
  BlasKernelsInUse();
  cblas_sgemm(CblasRowMajor, Trans(trans_a), Trans(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

template <>
void Gemm<double>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                  double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  BlasKernelsInUse();
  cblas_dgemm(CblasRowMajor, Trans(trans_a), Trans(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

void SetBlasThreads(int threads) {
  BlasKernelsInUse();
  openblas_set_num_threads(threads);
}

}  // namespace tessera::exec::cpu
