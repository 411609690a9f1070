#include "tessera/exec/cpu/gemm.h"

#include <cblas.h>

namespace tessera::exec::cpu {
namespace {

CBLAS_TRANSPOSE Trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

}  // namespace

template <>
void Gemm<float>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, Trans(trans_a), Trans(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

template <>
void Gemm<double>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                  double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, Trans(trans_a), Trans(trans_b), m, n, k, alpha, a, lda, b, ldb, beta,
              c, ldc);
}

void SetBlasThreads(int threads) { openblas_set_num_threads(threads); }

}  // namespace tessera::exec::cpu
