// The CPU MaxPool and AveragePool kernels (separable windows, the rank-2 loop that rank 1 shares,
// the odometer of other ranks, planes split across threads, int32 arg-max offsets) against naive
// pooling written here from the definitions, on random shapes: forward, and the backward as the
// naive adjoint (MaxPool: dY to the first maximum of the window in row-major order; AveragePool:
// dY / divisor to every point inside X).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using graph::PoolAttrs;
using graph::Shape;

struct PoolCase {
  OpKind kind;
  Shape x;
  PoolAttrs attrs;
};

std::string Describe(const PoolCase& c) {
  return absl::StrCat(graph::OpName(c.kind), " x=[", absl::StrJoin(c.x, ","), "] kernel=[",
                      absl::StrJoin(c.attrs.kernel_shape, ","), "] strides=[",
                      absl::StrJoin(c.attrs.strides, ","), "] pads=[",
                      absl::StrJoin(c.attrs.pads, ","), "] ceil=", c.attrs.ceil_mode,
                      " include_pad=", c.attrs.count_include_pad);
}

// Y and dX of the naive pool for inputs x and output gradient dy.
struct Naive {
  std::vector<double> y, dx;
};

Naive NaivePool(const PoolCase& c, const Shape& ys, const std::vector<double>& x,
                const std::vector<double>& dy) {
  const size_t s = c.x.size() - 2;
  const auto strides = c.attrs.strides.empty() ? std::vector<int64_t>(s, 1) : c.attrs.strides;
  const auto pads = c.attrs.pads.empty() ? std::vector<int64_t>(2 * s, 0) : c.attrs.pads;
  const int64_t out_size = testing::NumElements(Shape(ys.begin() + 2, ys.end()));
  const int64_t in_size = testing::NumElements(Shape(c.x.begin() + 2, c.x.end()));
  const int64_t nk = testing::NumElements(c.attrs.kernel_shape);
  Naive r{.y = std::vector<double>(testing::NumElements(ys)),
          .dx = std::vector<double>(x.size(), 0.0)};
  std::vector<int64_t> o(s), k(s);
  for (size_t yi = 0; yi < r.y.size(); ++yi) {
    const int64_t plane = static_cast<int64_t>(yi) / out_size;
    for (int64_t rem = yi % out_size, d = s; d-- > 0; rem /= ys[2 + d]) o[d] = rem % ys[2 + d];
    int64_t padded = 1;
    for (size_t d = 0; d < s; ++d) {
      const int64_t start = o[d] * strides[d] - pads[d];
      padded *= std::min(start + c.attrs.kernel_shape[d], c.x[2 + d] + pads[s + d]) - start;
    }
    std::vector<int64_t> points;  // offsets inside X, row-major window order
    for (int64_t ki = 0; ki < nk; ++ki) {
      for (int64_t rem = ki, d = s; d-- > 0; rem /= c.attrs.kernel_shape[d])
        k[d] = rem % c.attrs.kernel_shape[d];
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < s; ++d) {
        const int64_t p = o[d] * strides[d] - pads[d] + k[d];
        inside = inside && p >= 0 && p < c.x[2 + d];
        off = off * c.x[2 + d] + p;
      }
      if (inside) points.push_back(plane * in_size + off);
    }
    if (c.kind == OpKind::kMaxPool) {
      int64_t best = -1;
      for (int64_t p : points)
        if (best < 0 || x[p] > x[best]) best = p;
      r.y[yi] = best < 0 ? 0.0 : x[best];
      if (best >= 0) r.dx[best] += dy[yi];
    } else {
      const double divisor = static_cast<double>(std::max<int64_t>(
          c.attrs.count_include_pad ? padded : static_cast<int64_t>(points.size()), 1));
      double sum = 0;
      for (int64_t p : points) sum += x[p];
      r.y[yi] = sum / divisor;
      for (int64_t p : points) r.dx[p] += dy[yi] / divisor;
    }
  }
  return r;
}

template <typename T>
void ExpectMatchesNaive(const PoolCase& c, const graph::Graph& g, const std::vector<double>& x,
                        const std::vector<double>& dy, const Naive& expect, double tol) {
  const std::string what = absl::StrCat(Describe(c), " T=", sizeof(T) * 8);
  const graph::Node& node = g.node(0);
  const Shape ys = g.tensor(node.outputs[0]).shape;
  std::vector<T> xt(x.begin(), x.end()), dyt(dy.begin(), dy.end());
  std::vector<T> y(expect.y.size(), T(-5)), dx(x.size(), T(99));
  const std::vector<Tensor<T>> in = {{.shape = c.x, .data = xt.data()}};
  const std::vector<Tensor<T>> out = {{.shape = ys, .data = y.data()}};
  const std::vector<Tensor<T>> dout = {{.shape = ys, .data = dyt.data()}};
  const std::vector<Tensor<T>> din = {{.shape = c.x, .data = dx.data()}};
  KernelContext ctx;
  OpState state;
  ASSERT_TRUE(Forward<T>(node, in, out, ctx, state).ok()) << what;
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], expect.y[i], tol) << what << " Y[" << i << "]";
  ASSERT_TRUE(Backward<T>(node, in, out, dout, din, ctx, state).ok()) << what;
  for (size_t i = 0; i < dx.size(); ++i)
    ASSERT_NEAR(dx[i], expect.dx[i], tol) << what << " dX[" << i << "]";
}

// Integer-valued inputs in a small range, so that windows often hold ties (MaxPool must route
// dY to the first maximum in row-major order).
void ExpectCase(const PoolCase& c, uint32_t seed) {
  auto g = testing::BuildOpGraph({.kind = c.kind, .attrs = c.attrs, .inputs = {{.shape = c.x}}});
  ASSERT_TRUE(g.ok()) << Describe(c) << ": " << g.status();
  const Shape ys = g->tensor(g->node(0).outputs[0]).shape;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(-3, 3);
  std::uniform_real_distribution<double> grad(-1, 1);
  std::vector<double> x(testing::NumElements(c.x)), dy(testing::NumElements(ys));
  for (double& v : x) v = level(rng);
  for (double& v : dy) v = grad(rng);
  const Naive expect = NaivePool(c, ys, x, dy);
  ExpectMatchesNaive<double>(c, *g, x, dy, expect, 1e-12);
  ExpectMatchesNaive<float>(c, *g, x, dy, expect, 1e-5);
}

PoolCase RandomCase(std::mt19937& rng) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int s = pick(1, 3);
  PoolCase c{.kind = pick(0, 1) == 0 ? OpKind::kMaxPool : OpKind::kAveragePool,
             .x = {pick(1, 3), pick(1, 4)}};
  c.attrs.ceil_mode = pick(0, 1) == 1;
  c.attrs.count_include_pad = c.kind == OpKind::kAveragePool && pick(0, 1) == 1;
  const int max_in = s == 1 ? 30 : s == 2 ? 14 : 6;
  for (int d = 0; d < s; ++d) {
    const int k = pick(1, 3);
    c.attrs.kernel_shape.push_back(k);
    c.attrs.strides.push_back(pick(1, 3));
    c.x.push_back(pick(k, max_in));
  }
  for (int d = 0; d < 2 * s; ++d) c.attrs.pads.push_back(pick(0, c.attrs.kernel_shape[d % s] - 1));
  return c;
}

TEST(PoolReferenceTest, RandomShapesMatchNaivePooling) {
  std::mt19937 rng(31337);
  for (int i = 0; i < 150; ++i) {
    const PoolCase c = RandomCase(rng);
    SCOPED_TRACE(Describe(c));
    ExpectCase(c, 1000 + i);
    if (HasFatalFailure()) return;
  }
}

TEST(PoolReferenceTest, CrnnShapesSplitAcrossThreadsMatchNaivePooling) {
  // The CRNN's pools (2x2 / 2 and 2x1 / (2, 1)) on enough planes to use both threads.
  const std::vector<PoolCase> cases = {
      {OpKind::kMaxPool, {3, 8, 32, 64}, PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}}},
      {OpKind::kMaxPool, {2, 16, 8, 32}, PoolAttrs{.kernel_shape = {2, 1}, .strides = {2, 1}}},
      {OpKind::kAveragePool, {3, 8, 32, 64}, PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    ExpectCase(cases[i], 7 + static_cast<uint32_t>(i));
    if (HasFatalFailure()) return;
  }
}

TEST(PoolReferenceTest, MaxPoolTiesGoToTheFirstPointInRowMajorOrder) {
  // Every window of X is all 4s: dY must land on each window's top-left point only.
  const testing::OpCase c{
      .kind = OpKind::kMaxPool,
      .attrs = PoolAttrs{.kernel_shape = {2, 2}, .strides = {2, 2}},
      .inputs = {{.shape = {1, 1, 4, 4}, .values = std::vector<double>(16, 4)}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{1, 2, 3, 4}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->outputs[0], (std::vector<double>{4, 4, 4, 4}));
  EXPECT_EQ(run->grad_inputs[0],
            (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace tessera::exec::cpu
