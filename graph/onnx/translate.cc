#include "tessera/graph/onnx/translate.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "tessera/graph/onnx/fold.h"

namespace tessera::graph::onnx_import {
namespace {

const absl::flat_hash_map<std::string, TranslateFn>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, TranslateFn>();
    for (auto list : {DenseTranslations(), LayoutTranslations(), ElementwiseTranslations(),
                      TileTranslations(), LossTranslations()}) {
      for (const Translation& tr : list) (*t)[tr.op_type] = tr.fn;
    }
    return t;
  }();
  return *table;
}

}  // namespace

TranslateFn FindTranslation(absl::string_view op_type) {
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : it->second;
}

std::vector<std::string> SupportedOpTypes() {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : Table()) ops.push_back(name);
  for (const char* fold_only : {"Constant", "Shape", "Size", "Range", "Equal", "Less", "Greater",
                                "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Min",
                                "Max", "Sum", "Mod", "Floor", "Ceil", "ReduceProd",
                                "ReduceMin"}) {
    ops.push_back(fold_only);
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

}  // namespace tessera::graph::onnx_import
