// The CPU Conv kernel's paths (one product per sample written into Y, chunks of samples side by
// side, blocks of several chunks, X as its own columns for 1x1 convs, the bias fused) against a
// naive convolution written here from the definition: forward, dX, dW and dB, on random shapes
// (ranks 1-3, groups and depthwise, strides, pads, dilations, 1x1, batch 1 and 3), in float64 and
// float32, with any subset of the gradients requested.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::ConvAttrs;
using graph::OpKind;
using graph::Shape;

struct ConvCase {
  std::string name;
  Shape x, w;  // w: [Cout, C/groups, k...]
  ConvAttrs attrs;
  bool bias = true;
};

std::string Describe(const ConvCase& c) {
  return absl::StrCat(c.name, " x=[", absl::StrJoin(c.x, ","), "] w=[", absl::StrJoin(c.w, ","),
                      "] strides=[", absl::StrJoin(c.attrs.strides, ","), "] pads=[",
                      absl::StrJoin(c.attrs.pads, ","), "] dilations=[",
                      absl::StrJoin(c.attrs.dilations, ","), "] groups=", c.attrs.groups,
                      " bias=", c.bias);
}

// Values of one conv: inputs, dY, and what the naive loops give.
struct Reference {
  Shape y;
  std::vector<double> x, w, b, dy;
  std::vector<double> out, dx, dw, db;
};

// The naive convolution and its gradients, one multiply-add at a time:
//   Y[n, co, o] = B[co] + sum_{ci, k} X[n, g*Cg + ci, o*s - p + k*d] W[co, ci, k]
// and dX, dW, dB as the adjoints of the same sum.
void NaiveConv(const ConvCase& c, Reference& r) {
  const size_t s = c.x.size() - 2;
  const auto fill = [](const std::vector<int64_t>& v, size_t n, int64_t f) {
    return v.empty() ? std::vector<int64_t>(n, f) : v;
  };
  const auto strides = fill(c.attrs.strides, s, 1), dil = fill(c.attrs.dilations, s, 1),
             pads = fill(c.attrs.pads, 2 * s, 0);
  const int64_t groups = c.attrs.groups, cg = c.x[1] / groups, coutg = c.w[0] / groups;
  const Shape kernel(c.w.begin() + 2, c.w.end());
  const int64_t ny = testing::NumElements(r.y), nk = testing::NumElements(kernel);
  const int64_t out_size = ny / (r.y[0] * r.y[1]);
  r.out.assign(ny, 0.0);
  r.dx.assign(r.x.size(), 0.0);
  r.dw.assign(r.w.size(), 0.0);
  r.db.assign(c.w[0], 0.0);
  std::vector<int64_t> o(s), k(s);
  for (int64_t yi = 0; yi < ny; ++yi) {
    const int64_t n = yi / (r.y[1] * out_size), co = (yi / out_size) % r.y[1], g = co / coutg;
    for (int64_t rem = yi % out_size, d = s; d-- > 0; rem /= r.y[2 + d]) o[d] = rem % r.y[2 + d];
    double sum = c.bias ? r.b[co] : 0.0;
    r.db[co] += r.dy[yi];
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < nk; ++ki) {
        for (int64_t rem = ki, d = s; d-- > 0; rem /= kernel[d]) k[d] = rem % kernel[d];
        int64_t xoff = n * c.x[1] + g * cg + ci;
        bool inside = true;
        for (size_t d = 0; d < s; ++d) {
          const int64_t p = o[d] * strides[d] - pads[d] + k[d] * dil[d];
          inside = inside && p >= 0 && p < c.x[2 + d];
          xoff = xoff * c.x[2 + d] + p;
        }
        if (!inside) continue;
        const int64_t woff = (co * cg + ci) * nk + ki;
        sum += r.x[xoff] * r.w[woff];
        r.dx[xoff] += r.dy[yi] * r.w[woff];
        r.dw[woff] += r.dy[yi] * r.x[xoff];
      }
    r.out[yi] = sum;
  }
}

Reference MakeReference(const ConvCase& c, const graph::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  const auto random = [&](int64_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng);
    return v;
  };
  Reference r{.y = g.tensor(g.node(0).outputs[0]).shape};
  r.x = random(testing::NumElements(c.x));
  r.w = random(testing::NumElements(c.w));
  r.b = random(c.w[0]);
  r.dy = random(testing::NumElements(r.y));
  NaiveConv(c, r);
  return r;
}

// Which gradients a backward call asks for.
struct Wanted {
  bool dx = true, dw = true, db = true, dy_present = true;
  std::string Name() const {
    return absl::StrCat("dx=", dx, " dw=", dw, " db=", db, " dy=", dy_present);
  }
};

// Runs Conv forward and backward in T on the reference's values and compares with it. Gradients
// that are not wanted must be left untouched (their buffers hold a sentinel).
template <typename T>
void ExpectMatchesReference(const ConvCase& c, const graph::Graph& g, const Reference& r,
                            Wanted want, int threads, double tol) {
  const std::string what =
      absl::StrCat(Describe(c), " ", want.Name(), " T=", sizeof(T) * 8, " threads=", threads);
  const graph::Node& node = g.node(0);
  const auto to_t = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
  std::vector<T> x = to_t(r.x), w = to_t(r.w), b = to_t(r.b), dy = to_t(r.dy);
  std::vector<T> y(r.out.size(), T(7));
  constexpr T kSentinel = T(123.5);
  std::vector<T> dx(r.x.size(), kSentinel), dw(r.w.size(), kSentinel), db(b.size(), kSentinel);
  std::vector<Tensor<T>> in = {{.shape = c.x, .data = x.data()}, {.shape = c.w, .data = w.data()}};
  std::vector<Tensor<T>> din = {{.shape = c.x, .data = want.dx ? dx.data() : nullptr},
                                {.shape = c.w, .data = want.dw ? dw.data() : nullptr}};
  if (c.bias) {
    in.push_back({.shape = {c.w[0]}, .data = b.data()});
    din.push_back({.shape = {c.w[0]}, .data = want.db ? db.data() : nullptr});
  }
  const std::vector<Tensor<T>> out = {{.shape = r.y, .data = y.data()}};
  const std::vector<Tensor<T>> dout = {
      {.shape = r.y, .data = want.dy_present ? dy.data() : nullptr}};
  KernelContext ctx;
  ctx.threads = threads;
  OpState state;
  ASSERT_TRUE(Forward<T>(node, in, out, ctx, state).ok()) << what;
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], r.out[i], tol * std::max(1.0, std::abs(r.out[i])))
        << what << " Y[" << i << "]";
  ASSERT_TRUE(Backward<T>(node, in, out, dout, din, ctx, state).ok()) << what;
  const auto check = [&](const char* name, bool wanted, const std::vector<T>& got,
                         const std::vector<double>& expect) {
    for (size_t i = 0; i < got.size(); ++i) {
      if (!wanted) {
        ASSERT_EQ(got[i], kSentinel) << what << ": " << name << " was not requested";
        continue;
      }
      const double e = want.dy_present ? expect[i] : 0.0;
      ASSERT_NEAR(got[i], e, tol * std::max(1.0, std::abs(e)))
          << what << " " << name << "[" << i << "]";
    }
  };
  check("dX", want.dx, dx, r.dx);
  check("dW", want.dw, dw, r.dw);
  if (c.bias) check("dB", want.db, db, r.db);
}

void ExpectCase(const ConvCase& c, uint32_t seed, std::vector<Wanted> wants = {Wanted{}}) {
  testing::OpCase op{.kind = OpKind::kConv, .attrs = c.attrs};
  op.inputs.push_back({.shape = c.x});
  op.inputs.push_back({.shape = c.w});
  if (c.bias) op.inputs.push_back({.shape = {c.w[0]}});
  auto g = testing::BuildOpGraph(op);
  ASSERT_TRUE(g.ok()) << Describe(c) << ": " << g.status();
  const Reference r = MakeReference(c, *g, seed);
  for (const Wanted& want : wants)
    for (int threads : {1, 2}) {
      ExpectMatchesReference<double>(c, *g, r, want, threads, 1e-10);
      ExpectMatchesReference<float>(c, *g, r, want, threads, 2e-4);
    }
}

// A random conv: rank 1-3, batch 1 or 3, groups 1, 2 or depthwise, strides 1-2, pads 0-2,
// dilations 1-2, kernels 1-3 (1x1 in a quarter of the cases), bias in most.
ConvCase RandomCase(std::mt19937& rng, int index) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int s = pick(1, 3);
  const int kind = pick(0, 3);  // 0: groups 2, 1: depthwise, else 1 group
  const int64_t groups_pick = kind == 0 ? 2 : 1;
  int64_t cin = kind == 1 ? pick(1, 4) : groups_pick * pick(1, 3);
  const int64_t groups = kind == 1 ? cin : groups_pick;
  const int64_t cout = groups * pick(1, 3);
  const bool pointwise = pick(0, 3) == 0;
  ConvCase c{.name = absl::StrCat("random", index),
             .x = {pick(0, 1) == 0 ? 1 : 3, cin},
             .w = {cout, cin / groups},
             .bias = pick(0, 4) != 0};
  c.attrs.groups = groups;
  const int64_t max_in = s == 1 ? 40 : s == 2 ? 12 : 6;
  for (int d = 0; d < s; ++d) {
    const int64_t k = pointwise ? 1 : pick(1, 3);
    c.w.push_back(k);
    c.attrs.strides.push_back(pointwise && pick(0, 1) == 0 ? 1 : pick(1, 2));
    c.attrs.dilations.push_back(pick(1, 2));
    const int64_t extent = (k - 1) * c.attrs.dilations.back() + 1;
    c.x.push_back(pick(static_cast<int>(extent), static_cast<int>(max_in)));
  }
  for (int d = 0; d < 2 * s; ++d) c.attrs.pads.push_back(pointwise ? 0 : pick(0, 2));
  return c;
}

TEST(ConvReferenceTest, RandomShapesMatchNaiveConvolution) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 60; ++i) {
    const ConvCase c = RandomCase(rng, i);
    SCOPED_TRACE(Describe(c));
    ExpectCase(c, 100 + i);
    if (HasFatalFailure()) return;
  }
}

// Shapes picked to take each path of the kernel (see exec/cpu/conv.cc; P = prod(out)), large
// enough (over 2^20 multiply-adds) for the samples to be split across threads when there are two.
std::vector<ConvCase> PathCases() {
  return {
      // P = 1024 >= 256: one product per sample straight into Y, bias added in place.
      {"per_sample_3x3", {3, 3, 32, 32}, {16, 3, 3, 3}, ConvAttrs{.pads = {1, 1, 1, 1}}, true},
      // 1x1, stride 1, no pads, P = 320: X is its own columns (no im2col, dX straight out).
      {"pointwise_x_as_columns", {3, 64, 16, 20}, {32, 64, 1, 1}, ConvAttrs{}, true},
      // 1x1 with P = 64: chunks of 4 samples (4, 4 and 1), X copied into columns.
      {"pointwise_small_chunked", {9, 64, 8, 8}, {64, 64, 1, 1}, ConvAttrs{}, true},
      // P = 32: chunks of 8 samples (8 and 3); grouped.
      {"chunked_groups",
       {11, 32, 2, 32},
       {64, 16, 2, 3},
       ConvAttrs{.pads = {0, 1, 0, 1}, .groups = 2},
       true},
      // K * P = 72 * 9216 values per sample.
      {"large_samples", {3, 8, 96, 96}, {2, 8, 3, 3}, ConvAttrs{.pads = {1, 1, 1, 1}}, true},
      // P = 100 -> chunks of 3 samples (3, 3 and 1) with K = 1800.
      {"chunked_wide_k", {7, 200, 10, 10}, {2, 200, 3, 3}, ConvAttrs{.pads = {1, 1, 1, 1}}, true},
      // Depthwise with a channel multiplier, strided, per-sample products (P = 256).
      {"depthwise_per_sample",
       {4, 64, 32, 32},
       {128, 1, 3, 3},
       ConvAttrs{.strides = {2, 2}, .pads = {1, 1, 1, 1}, .groups = 64},
       false},
      // Batch 1: one sample, im2col/col2im split by rows; strided, dilated, asymmetric pads.
      {"batch1_dilated",
       {1, 16, 40, 50},
       {8, 16, 3, 2},
       ConvAttrs{.strides = {1, 2}, .pads = {2, 0, 1, 3}, .dilations = {2, 3}},
       true},
  };
}

TEST(ConvReferenceTest, EveryPathMatchesNaiveConvolution) {
  const std::vector<Wanted> wants = {
      Wanted{},
      Wanted{.dx = false},
      Wanted{.dw = false},
      Wanted{.dx = false, .dw = false},
      Wanted{.dw = false, .db = false},
      Wanted{.dy_present = false},
  };
  uint32_t seed = 7;
  for (const ConvCase& c : PathCases()) {
    ExpectCase(c, ++seed, wants);
    if (HasFatalFailure()) return;
  }
}

TEST(ConvReferenceTest, RepeatedCallsReuseScratchWithoutStaleValues) {
  // A large conv leaves its columns in the per-thread scratch; a smaller one after it (and the
  // large one again) must not read any of them.
  const std::vector<ConvCase> cases = PathCases();
  ASSERT_EQ(cases[4].name, "large_samples");
  for (int round = 0; round < 2; ++round)
    for (const ConvCase& c : {cases[4], cases[2], cases[0]}) {
      ExpectCase(c, 50 + round);
      if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace tessera::exec::cpu
