// GraphBuilder layers: multi-layer (bi)directional LSTM as ONNX LSTM nodes.
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"

namespace tessera::graph {

Value GraphBuilder::Lstm(Value x, int64_t hidden_size, absl::string_view name,
                         LstmOptions options) {
  if (!CheckInputs(Describe("Lstm", name), {x})) return Value();
  if (options.sequence_lens.valid() &&
      !CheckInputs(Describe("Lstm", name), {options.sequence_lens})) {
    return Value();
  }
  const std::string full = LayerName(name, "lstm");
  if (full.empty()) return Value();
  if (x.rank() != 3) {
    LayerError("Lstm", full, {x}, "expects a seq-first 3-D input [T, B, input_size]");
    return Value();
  }
  if (hidden_size < 1 || options.num_layers < 1) {
    LayerError("Lstm", full, {x},
               absl::StrCat("hidden_size and num_layers must be >= 1 (got ", hidden_size, ", ",
                            options.num_layers, ")"));
    return Value();
  }
  // One layer keeps the layer's own name; several are "<name>.0", "<name>.1", ...
  if (options.num_layers == 1) {
    return LstmLayer(x, hidden_size, options.bidirectional, full, options.sequence_lens);
  }
  Value h = x;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    const std::string layer = SubName(full, absl::StrCat(l));
    if (layer.empty()) return Value();
    h = LstmLayer(h, hidden_size, options.bidirectional, layer, options.sequence_lens);
    if (l + 1 < options.num_layers && options.dropout > 0.0) {
      const std::string drop = SubName(layer, "dropout");
      if (drop.empty()) return Value();
      h = EmitOne(OpKind::kDropout, {h.id()}, ScalarAttrs{.alpha = options.dropout}, drop);
    }
    if (!h.valid()) return Value();
  }
  return h;
}

Value GraphBuilder::LstmLayer(Value x, int64_t hidden_size, bool bidirectional,
                              const std::string& full, Value sequence_lens) {
  const int64_t dirs = bidirectional ? 2 : 1;
  const int64_t h = hidden_size;
  const DType dt = x.dtype();
  // PyTorch's weight_ih/weight_hh per direction, stacked on axis 0 (ONNX W, R);
  // bias holds b_ih and b_hh (ONNX B = [Wb, Rb]).
  Value w = NewTensor(SubName(full, "weight_ih"), {dirs, 4 * h, x.dim(2)}, dt,
                      TensorRole::kParameter);
  Value r = NewTensor(SubName(full, "weight_hh"), {dirs, 4 * h, h}, dt, TensorRole::kParameter);
  Value b = NewTensor(SubName(full, "bias"), {dirs, 8 * h}, dt, TensorRole::kParameter);
  const std::string h_n = SubName(full, "h_n");
  const std::string c_n = SubName(full, "c_n");
  if (!status_.ok()) return Value();
  LstmAttrs attrs{.hidden_size = h,
                  .direction = bidirectional ? LstmDirection::kBidirectional
                                             : LstmDirection::kForward,
                  .layout = 0};
  std::vector<TensorId> inputs = {x.id(), w.id(), r.id(), b.id()};
  if (sequence_lens.valid()) inputs.push_back(sequence_lens.id());
  std::vector<Value> outs = Emit(OpKind::kLstm, inputs, attrs, full, {full, h_n, c_n});
  if (outs.empty()) return Value();
  // Y [T, dirs, B, H] -> [T, B, dirs * H] (directions concatenated on features).
  if (!bidirectional) {
    return EmitOne(OpKind::kSqueeze, {outs[0].id()}, AxesAttrs{.axes = {1}},
                   SubName(full, "squeeze"));
  }
  Value t = EmitOne(OpKind::kTranspose, {outs[0].id()}, PermAttrs{.perm = {0, 2, 1, 3}},
                    SubName(full, "transpose"));
  if (!t.valid()) return Value();
  return EmitOne(OpKind::kReshape, {t.id()}, ReshapeAttrs{.shape = {0, 0, dirs * h}},
                 SubName(full, "merge_directions"));
}

}  // namespace tessera::graph
