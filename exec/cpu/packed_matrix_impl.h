// Internal to the CPU kernels: a matrix packed once for Eigen's GEBP kernel, then multiplied by
// many thin right-hand sides, e.g. an LSTM's recurrent weights R by each step's hidden state.
//
//   PackedMatrix<float, Eigen::RowMajor> r;
//   r.Pack(r_data, /*rows=*/4 * H, /*depth=*/H, /*lda=*/H, /*max_cols=*/B);   // A = R
//   r.Multiply(h, /*ldb=*/H, /*cols=*/B, rec, /*ldr=*/4 * H);                  // rec^T = R h^T
//
// Everything is column-major in the GEBP's terms: A is rows x depth (stored row- or
// column-major, `Order`), B is depth x cols and the result rows x cols, both column-major with
// leading dimensions ldb and ldr. A row-major [n, k] matrix is a column-major [k, n] one, so a
// row-major product C = X Y^T is C^T = Y X^T here.
//
// Why: a general product (Eigen's or OpenBLAS's) packs both operands on every call. For an
// [n, H] x [H, 4H] step with n <= 32 the packing of the [4H, H] weights is a third of the time;
// here it happens once per call of the kernel. The kernel is Eigen's own (its products give the
// same values), and a column's result does not depend on how many columns a call has. Multiply
// is const and may run on several threads at once (each packs its right-hand side into its own
// thread_local buffer).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera::exec::cpu {

template <typename T, int Order>
class PackedMatrix {
 public:
  using Index = Eigen::Index;

  // Packs A (rows x depth, element (i, k) at a[i * lda + k] for RowMajor, a[k * lda + i] for
  // ColMajor), blocked for right-hand sides of up to max_cols columns.
  void Pack(const T* a, Index rows, Index depth, Index lda, Index max_cols) {
    rows_ = rows;
    depth_ = depth;
    kc_ = depth;
    mc_ = rows;
    nc_ = std::max<Index>(max_cols, 1);
    Eigen::internal::computeProductBlockingSizes<T, T, 1>(kc_, mc_, nc_, Index(1));
    offsets_.clear();
    size_t size = 0;
    for (Index k2 = 0; k2 < depth_; k2 += kc_) {
      for (Index i2 = 0; i2 < rows_; i2 += mc_) {
        const Index kc = std::min(k2 + kc_, depth_) - k2, mc = std::min(i2 + mc_, rows_) - i2;
        offsets_.push_back(size);
        size += static_cast<size_t>(RoundUp(kc * mc));
      }
    }
    if (packed_.size() < size) packed_.resize(size);  // grow-only: no zeroing on later calls
    PackLhs pack;
    const LhsMapper lhs(a, lda);
    size_t panel = 0;
    for (Index k2 = 0; k2 < depth_; k2 += kc_) {
      for (Index i2 = 0; i2 < rows_; i2 += mc_, ++panel) {
        const Index kc = std::min(k2 + kc_, depth_) - k2, mc = std::min(i2 + mc_, rows_) - i2;
        pack(packed_.data() + offsets_[panel], lhs.getSubMapper(i2, k2), kc, mc);
      }
    }
  }

  // res (rows x cols) = A * B, overwriting res.
  void Multiply(const T* b, Index ldb, Index cols, T* res, Index ldr) const {
    thread_local std::vector<T, Eigen::aligned_allocator<T>> block_b;
    const RhsMapper rhs(b, ldb);
    const ResMapper out(res, ldr);
    for (Index j = 0; j < cols; ++j) std::fill(res + j * ldr, res + j * ldr + rows_, T(0));
    PackRhs pack_rhs;
    Gebp gebp;
    size_t first_panel = 0;  // the panels of A of this depth block
    for (Index k2 = 0; k2 < depth_; k2 += kc_) {
      const Index kc = std::min(k2 + kc_, depth_) - k2;
      for (Index j2 = 0; j2 < cols; j2 += nc_) {
        const Index nc = std::min(j2 + nc_, cols) - j2;
        if (static_cast<Index>(block_b.size()) < kc * nc) block_b.resize(kc * nc);
        pack_rhs(block_b.data(), rhs.getSubMapper(k2, j2), kc, nc);
        size_t panel = first_panel;
        for (Index i2 = 0; i2 < rows_; i2 += mc_, ++panel) {
          const Index mc = std::min(i2 + mc_, rows_) - i2;
          gebp(out.getSubMapper(i2, j2), packed_.data() + offsets_[panel], block_b.data(), mc, kc,
               nc, T(1));
        }
      }
      first_panel += static_cast<size_t>((rows_ + mc_ - 1) / mc_);
    }
  }

 private:
  using Traits = Eigen::internal::gebp_traits<T, T>;
  using LhsMapper = Eigen::internal::const_blas_data_mapper<T, Index, Order>;
  using RhsMapper = Eigen::internal::const_blas_data_mapper<T, Index, Eigen::ColMajor>;
  using ResMapper =
      Eigen::internal::blas_data_mapper<T, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
  using PackLhs = Eigen::internal::gemm_pack_lhs<T, Index, LhsMapper, Traits::mr,
                                                 Traits::LhsProgress,
                                                 typename Traits::LhsPacket4Packing, Order>;
  using PackRhs = Eigen::internal::gemm_pack_rhs<T, Index, RhsMapper, Traits::nr, Eigen::ColMajor>;
  using Gebp = Eigen::internal::gebp_kernel<T, T, Index, ResMapper, Traits::mr, Traits::nr,
                                            false, false>;

  // Panels start on 64-byte boundaries.
  static Index RoundUp(Index n) {
    constexpr Index kAlign = 64 / sizeof(T);
    return (n + kAlign - 1) / kAlign * kAlign;
  }

  Index rows_ = 0, depth_ = 0, kc_ = 1, mc_ = 1, nc_ = 1;
  std::vector<T, Eigen::aligned_allocator<T>> packed_;
  std::vector<size_t> offsets_;
};

}  // namespace tessera::exec::cpu
