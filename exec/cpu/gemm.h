// Dense matrix products for the CPU kernels: OpenBLAS (cblas) for float and double, row-major.
//
//   // C[m,n] = alpha * op(A) op(B) + beta * C, op(A) is [m,k], op(B) is [k,n].
//   cpu::Gemm<float>(/*trans_a=*/false, /*trans_b=*/true, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
//   cpu::SetBlasThreads(2);
//
// OpenBLAS picks its kernels for the CPU when it loads, from the CPU's family and model; a
// version older than the CPU does not know the model and falls back to kernels far below what
// the CPU can do (Debian 12's 0.3.21 runs SSE3 "Prescott" kernels on Xeons of family 6, model
// 207, at a sixth of its AVX-512 kernels' speed). Before the first product, Tessera checks what
// OpenBLAS picked against the CPU's vector units and, when OpenBLAS fell short, switches it to
// its AVX-512 (SkylakeX) or AVX2 (Haswell) kernels through OpenBLAS's own OPENBLAS_CORETYPE
// path. An OPENBLAS_CORETYPE set in the environment is the user's choice and is left alone.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::exec::cpu {

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Threads OpenBLAS may use for one product (process-wide).
void SetBlasThreads(int threads);

// OpenBLAS's kernels in this process (settled on the first call of anything here).
struct BlasKernels {
  std::string running;   // the core type OpenBLAS runs, e.g. "SkylakeX"
  std::string detected;  // the one it picked itself; differs from `running` when Tessera switched
  std::string why;       // one line: why these kernels (for logs and the calibrate file)
};
const BlasKernels& BlasKernelsInUse();

}  // namespace tessera::exec::cpu
