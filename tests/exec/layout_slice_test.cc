// CPU kernels of Slice (ONNX semantics) and Pad (constant, reflect, edge).
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "op_test_util.h"

namespace tessera::exec::cpu {
namespace {

using graph::OpKind;
using graph::PadMode;
using graph::Shape;
using testing::GradientCheck;
using testing::OpCase;

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

// The indices of one axis a slice selects, by the ONNX spec's own loop.
std::vector<int64_t> SliceIndices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

// A 2-D input [rows, cols] holding 0..n-1, sliced on both axes.
void ExpectSlice2D(int64_t rows, int64_t cols, const graph::SliceAttrs& attrs) {
  OpCase c{.kind = OpKind::kSlice,
           .attrs = attrs,
           .inputs = {{.shape = {rows, cols}, .values = Iota(rows * cols)}}};
  std::vector<std::vector<int64_t>> picks = {SliceIndices(rows, 0, rows, 1),
                                             SliceIndices(cols, 0, cols, 1)};
  for (size_t i = 0; i < attrs.starts.size(); ++i) {
    int64_t axis = attrs.axes.empty() ? static_cast<int64_t>(i) : attrs.axes[i];
    if (axis < 0) axis += 2;
    picks[axis] = SliceIndices(axis == 0 ? rows : cols, attrs.starts[i], attrs.ends[i],
                               attrs.steps.empty() ? 1 : attrs.steps[i]);
  }
  std::vector<double> expect;
  for (int64_t r : picks[0])
    for (int64_t k : picks[1]) expect.push_back(static_cast<double>(r * cols + k));
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], expect);
  EXPECT_TRUE(GradientCheck(c));
}

TEST(SliceTest, MatchesTheOnnxLoopForEveryVariant) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ExpectSlice2D(5, 6, {.starts = {1, -4}, .ends = {4, 100}});  // plain, clamped end
  ExpectSlice2D(5, 6,
                {.starts = {-1}, .ends = {kMin}, .axes = {1}, .steps = {-2}});  // negative step
  ExpectSlice2D(5, 6, {.starts = {0, 4}, .ends = {5, 0}, .axes = {0, 1}, .steps = {2, -1}});
  ExpectSlice2D(5, 6, {.starts = {1}, .ends = {-1}, .axes = {-1}, .steps = {3}});  // negative axis
  ExpectSlice2D(5, 6, {.starts = {3}, .ends = {1}, .axes = {0}});                  // empty result
  ExpectSlice2D(5, 6,
                {.starts = {10, -10}, .ends = {-10, 10}, .steps = {-1, 1}});  // clamped both ways
}

TEST(SliceTest, BackwardPutsTheGradientWhereTheElementsCameFrom) {
  OpCase c{.kind = OpKind::kSlice,
           .attrs = graph::SliceAttrs{.starts = {3}, .ends = {0}, .steps = {-2}},
           .inputs = {{.shape = {5}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<std::vector<double>> dy = {{10, 20}};  // elements 3 and 1
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{0, 20, 0, 10, 0}));
}

TEST(SliceTest, GradientCheckIn3D) {
  EXPECT_TRUE(GradientCheck(
      {.kind = OpKind::kSlice,
       .attrs =
           graph::SliceAttrs{.starts = {2, 0}, .ends = {-5, 3}, .axes = {2, 0}, .steps = {-1, 2}},
       .inputs = {{.shape = {4, 3, 5}}}}));
}

// numpy's definitions: reflect bounces off the end elements without repeating them; edge repeats.
int64_t PadSource(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge || n == 1) return i < 0 ? 0 : n - 1;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

void ExpectPad2D(int64_t rows, int64_t cols, std::vector<int64_t> pads, PadMode mode,
                 double value = 0) {
  OpCase c{.kind = OpKind::kPad,
           .attrs = graph::PadAttrs{.pads = pads, .mode = mode, .value = value},
           .inputs = {{.shape = {rows, cols}, .values = Iota(rows * cols)}}};
  const int64_t out_rows = rows + pads[0] + pads[2], out_cols = cols + pads[1] + pads[3];
  std::vector<double> expect;
  for (int64_t r = 0; r < out_rows; ++r)
    for (int64_t k = 0; k < out_cols; ++k) {
      const int64_t sr = PadSource(r - pads[0], rows, mode),
                    sk = PadSource(k - pads[1], cols, mode);
      expect.push_back(sr < 0 || sk < 0 ? value : static_cast<double>(sr * cols + sk));
    }
  auto y = testing::RunForwardF64(c);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], expect) << "mode " << static_cast<int>(mode);
  EXPECT_TRUE(GradientCheck(c)) << "mode " << static_cast<int>(mode);
}

TEST(PadTest, MatchesNumpyForEveryMode) {
  ExpectPad2D(3, 4, {1, 2, 2, 1}, PadMode::kConstant, 1.5);
  ExpectPad2D(3, 4, {-1, 1, 0, -2}, PadMode::kConstant);  // negative pads crop
  ExpectPad2D(3, 4, {1, 2, 2, 3}, PadMode::kReflect);
  ExpectPad2D(3, 4, {4, 0, 5, 7}, PadMode::kReflect);  // wider than the axis: bounces again
  ExpectPad2D(3, 4, {2, 1, 1, 3}, PadMode::kEdge);
  ExpectPad2D(1, 4, {2, 0, 1, 0}, PadMode::kReflect);  // a single row reflects onto itself
}

TEST(PadTest, ReflectGradientAccumulatesIntoTheMirroredElements) {
  OpCase c{.kind = OpKind::kPad,
           .attrs = graph::PadAttrs{.pads = {2, 1}, .mode = PadMode::kReflect},
           .inputs = {{.shape = {3}}}};
  auto g = testing::BuildOpGraph(c);
  ASSERT_TRUE(g.ok()) << g.status();
  // Y = [x2 x1 x0 x1 x2 x1]
  const std::vector<std::vector<double>> dy = {{1, 2, 4, 8, 16, 32}};
  auto run = testing::RunOp<double>(*g, testing::MakeInputs(c), &dy);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->grad_inputs[0], (std::vector<double>{4, 2 + 8 + 32, 1 + 16}));
}

TEST(PadTest, GradientCheckIn3D) {
  for (PadMode mode : {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge}) {
    EXPECT_TRUE(GradientCheck(
        {.kind = OpKind::kPad,
         .attrs = graph::PadAttrs{.pads = {0, 1, 2, 1, 0, 2}, .mode = mode, .value = -1},
         .inputs = {{.shape = {2, 3, 4}}}}))
        << static_cast<int>(mode);
  }
}

TEST(PadTest, ReflectingAnEmptyAxisIsInvalidNamingTheNode) {
  auto y = testing::RunForwardF64(
      {.kind = OpKind::kPad,
       .attrs = graph::PadAttrs{.pads = {1, 0, 0, 0}, .mode = PadMode::kReflect},
       .inputs = {{.shape = {0, 3}}}});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("test_Pad"), std::string::npos) << y.status();
  EXPECT_NE(y.status().message().find("axis 0"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace tessera::exec::cpu
