// Internal to ONNX import: translations of ONNX nodes into IR nodes, one
// function per ONNX op (translate_dense.cc, translate_layout.cc,
// translate_elementwise.cc, translate_loss.cc).
//
//   if (TranslateFn fn = FindTranslation(node.op_type())) TS_RETURN_IF_ERROR(fn(ctx));
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

using TranslateFn = absl::Status (*)(NodeCtx&);

// nullptr when the op has no IR translation (it may still fold, see fold.h).
TranslateFn FindTranslation(absl::string_view op_type);
// Every op type the importer accepts (translated or folded), sorted.
std::vector<std::string> SupportedOpTypes();

// The translation tables of the translation files.
struct Translation {
  const char* op_type;
  TranslateFn fn;
};
std::vector<Translation> DenseTranslations();
std::vector<Translation> LayoutTranslations();
std::vector<Translation> ElementwiseTranslations();
std::vector<Translation> TileTranslations();  // translate_tile.cc
std::vector<Translation> LossTranslations();  // translate_loss.cc

}  // namespace tessera::graph::onnx_import
