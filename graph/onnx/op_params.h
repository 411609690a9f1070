// Internal to ONNX import: reading an ONNX node's parameters into Tessera's
// typed attributes, shared by folding and by the IR translations. Parameters
// that ONNX passes as inputs (Reshape's shape, Slice's starts/ends, axes from
// opset 13, split sizes, pads, Clip bounds) must be known at import time.
//
//   TS_ASSIGN_OR_RETURN(SliceAttrs slice, ReadSlice(ctx));
//   TS_ASSIGN_OR_RETURN(Shape out, InferOne(ctx, OpKind::kSlice, ctx.shape(0), slice));
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

// Axes of Squeeze/Unsqueeze/Reduce*: the `axes` attribute, or input `input` when
// the op takes axes as an input at this opset (Squeeze/Unsqueeze/ReduceSum from 13).
absl::StatusOr<std::vector<int64_t>> ReadAxes(const NodeCtx& c, int input);
absl::StatusOr<ReshapeAttrs> ReadReshape(const NodeCtx& c);
absl::StatusOr<SliceAttrs> ReadSlice(const NodeCtx& c);
// Split sizes from the attribute (< 13), input 1 (>= 13) or an equal split over
// the outputs; `dims` is the input's shape.
absl::StatusOr<SplitAttrs> ReadSplit(const NodeCtx& c, const Shape& dims);
absl::StatusOr<AxesAttrs> ReadReduce(const NodeCtx& c, bool* noop);

// Output shape of a one-input layout op applied to `in` with `attrs`, computed
// by the graph's own shape inference (so folding and IR agree).
absl::StatusOr<Shape> InferOne(const NodeCtx& c, OpKind kind, const Shape& in, DType dtype,
                               OpAttrs attrs);

// Per-axis start and step of a Slice on `in` (clamped as ONNX specifies), for folding.
void SliceStartsSteps(const Shape& in, const SliceAttrs& a, std::vector<int64_t>* starts,
                      std::vector<int64_t>* steps);

}  // namespace tessera::graph::onnx_import
