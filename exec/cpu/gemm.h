// Dense matrix products for the CPU kernels: OpenBLAS (cblas) for float and double, row-major.
//
//   // C[m,n] = alpha * op(A) op(B) + beta * C, op(A) is [m,k], op(B) is [k,n].
//   cpu::Gemm<float>(/*trans_a=*/false, /*trans_b=*/true, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
//   cpu::SetBlasThreads(2);
#pragma once

#include <cstdint>

namespace tessera::exec::cpu {

template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Threads OpenBLAS may use for one product (process-wide).
void SetBlasThreads(int threads);

}  // namespace tessera::exec::cpu
