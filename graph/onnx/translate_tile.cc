// ONNX Tile, folded or as IR. Tessera has no Tile op; Tile(x, r) over x[d0, d1, ...] is
// Expand on an interleaved view: Reshape x to [1, d0, 1, d1, ...], Expand to
// [r0, d0, r1, d1, ...], Reshape to [r0*d0, r1*d1, ...]. Row-major order makes that exactly
// Tile's "repeat the whole tensor r_i times along axis i". The same three steps fold it.
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/fold.h"
#include "tessera/graph/onnx/translate.h"

namespace tessera::graph::onnx_import {
namespace {

struct TileShapes {
  Shape interleaved;  // [1, d0, 1, d1, ...]
  Shape expanded;     // [r0, d0, r1, d1, ...]
  Shape out;          // [r0*d0, r1*d1, ...]
};

absl::StatusOr<TileShapes> ReadTile(const NodeCtx& c, const Shape& in) {
  if (c.num_inputs() != 2) return c.Error("needs inputs input and repeats");
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, c.ConstInts(1, "repeats"));
  if (repeats.size() != in.size()) {
    return c.Error(absl::StrCat("repeats has ", repeats.size(), " entries for an input of rank ",
                                in.size()));
  }
  if (2 * in.size() > static_cast<size_t>(kMaxRank)) return c.Error("input rank is too large");
  TileShapes s;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t out = 0;
    if (repeats[i] < 0 || __builtin_mul_overflow(repeats[i], in[i], &out)) {
      return c.Error(absl::StrCat("repeats ", repeats[i], " on axis ", i, " is invalid"));
    }
    s.interleaved.insert(s.interleaved.end(), {1, in[i]});
    s.expanded.insert(s.expanded.end(), {repeats[i], in[i]});
    s.out.push_back(out);
  }
  auto checked = CheckedDims(s.expanded.data(), static_cast<int>(s.expanded.size()));
  if (!checked.ok()) return c.Error(checked.status().message());
  return s;
}

absl::Status Tile(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TileShapes s, ReadTile(c, c.shape(0)));
  TS_ASSIGN_OR_RETURN(TensorId view, c.EmitTemp(OpKind::kReshape, {x},
                                                ReshapeAttrs{.shape = s.interleaved}, "view"));
  TS_ASSIGN_OR_RETURN(TensorId expanded, c.EmitTemp(OpKind::kExpand, {view},
                                                    ExpandAttrs{.shape = s.expanded}, "expand"));
  return c.Emit(OpKind::kReshape, {expanded}, ReshapeAttrs{.shape = s.out}, 1);
}

}  // namespace

absl::StatusOr<bool> FoldTileNode(NodeCtx& c) {
  const ConstTensor& in = *c.Const(0);
  TS_ASSIGN_OR_RETURN(TileShapes s, ReadTile(c, in.shape));
  std::optional<ConstTensor> expanded = FoldExpand(WithShape(in, s.interleaved), s.expanded);
  if (!expanded) return false;  // above the folding limit: an IR node
  TS_RETURN_IF_ERROR(c.SetConst(0, WithShape(std::move(*expanded), s.out)));
  return true;
}

std::vector<Translation> TileTranslations() { return {{"Tile", Tile}}; }

}  // namespace tessera::graph::onnx_import
