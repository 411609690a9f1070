// The C++ graph-building API: a typed, fluent builder that writes a Graph the
// way a PyTorch user writes a model.
//
//   GraphBuilder b("mlp");
//   Value x = b.Input("x", {32, 784});                    // f32 data input
//   Value labels = b.Input("labels", {32}, DType::kI64);
//   Value h = b.Linear(x, 512, "fc1").Relu();             // fc1.weight [512,784], fc1.bias [512]
//   Value logits = b.Linear(h, 10, "fc2");
//   b.Output(b.SoftmaxCrossEntropy(logits, labels, "loss"));
//   absl::StatusOr<Graph> g = std::move(b).Build();      // the first error, if any
//
// Every op is shape-inferred as it is added. The first error (a message naming
// the node and its input shapes) is kept; every later call is a no-op returning
// an invalid Value, and Build() returns that error.
//
// Names: a layer's name (or an automatic "relu_3") is its node name and the
// name of its output tensor; parameters are named like PyTorch state_dict
// entries ("fc1.weight"); `auto s = b.Scope("encoder");` prefixes "encoder.".
// Names must be unique: reusing one is an error.
//
// Representation choices (see docs/builder.md):
// - Linear keeps W as [out, in] (PyTorch layout): Gemm(x, W, b, trans_b) on 2-D
//   input; higher-rank input is reshaped to 2-D ("<name>.flatten"), multiplied
//   by the Gemm node "<name>" and reshaped back ("<name>.unflatten").
// - Lstm is seq-first [T, B, I] -> [T, B, dirs * H]; one ONNX LSTM node per
//   layer with <layer>.weight_ih [dirs,4H,I], .weight_hh [dirs,4H,H] and
//   .bias [dirs,8H] (both PyTorch biases), so counts equal nn.LSTM's.
// - MultiHeadAttention is batch-first [B, T, D], decomposed into Linear
//   q_proj/k_proj/v_proj, head split, MatMul, scale, optional additive causal
//   mask constant, Softmax, MatMul, head merge and Linear out_proj.
// Values point into their builder: use them only while it lives and before Build().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

class GraphBuilder;

// A handle to a tensor being built: the builder plus the tensor's id.
class Value {
 public:
  Value() = default;

  bool valid() const { return builder_ != nullptr && id_ != kNoTensor; }
  TensorId id() const { return id_; }
  GraphBuilder* builder() const { return builder_; }
  // Empty / kF32 / "" for an invalid Value.
  Shape shape() const;
  DType dtype() const;
  std::string name() const;
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  // Dimension `axis` (negative counts from the end); 0 when out of range.
  int64_t dim(int64_t axis) const;

  // Fluent unary and layout ops; `name` empty gives an automatic name.
  Value Relu(absl::string_view name = "") const;
  Value Tanh(absl::string_view name = "") const;
  Value Sigmoid(absl::string_view name = "") const;
  Value Gelu(absl::string_view name = "") const;
  Value Exp(absl::string_view name = "") const;
  Value Log(absl::string_view name = "") const;
  Value Sqrt(absl::string_view name = "") const;
  Value Neg(absl::string_view name = "") const;
  Value Reshape(Shape shape, absl::string_view name = "") const;
  Value Transpose(std::vector<int64_t> perm, absl::string_view name = "") const;
  Value Flatten(int64_t axis = 1, absl::string_view name = "") const;
  Value Squeeze(std::vector<int64_t> axes, absl::string_view name = "") const;
  Value Unsqueeze(std::vector<int64_t> axes, absl::string_view name = "") const;
  Value Softmax(int64_t axis = -1, absl::string_view name = "") const;
  Value LogSoftmax(int64_t axis = -1, absl::string_view name = "") const;
  // p == 0 returns this Value unchanged (no node).
  Value Dropout(double p, absl::string_view name = "") const;
  Value Cast(DType to, absl::string_view name = "") const;

 private:
  friend class GraphBuilder;
  Value(GraphBuilder* builder, TensorId id) : builder_(builder), id_(id) {}
  GraphBuilder* builder_ = nullptr;
  TensorId id_ = kNoTensor;
};

// Element-wise arithmetic with broadcasting (automatic node names).
Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator/(const Value& a, const Value& b);

// Height/width pair for 2-D layers: `3` means {3, 3}; `{2, 1}` is non-square.
struct Size2 {
  Size2(int64_t v) : h(v), w(v) {}  // NOLINT: implicit by design
  Size2(int64_t h_, int64_t w_) : h(h_), w(w_) {}
  int64_t h;
  int64_t w;
};

struct Conv2dOptions {
  Size2 stride = 1;
  Size2 padding = 0;  // symmetric, per axis, as nn.Conv2d
  Size2 dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

struct Conv1dOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

struct Pool2dOptions {
  Size2 stride = 0;  // 0: the kernel size, as nn.MaxPool2d
  Size2 padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;  // AvgPool2d only (PyTorch's default)
};

struct BatchNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;  // PyTorch convention; stored as ONNX 1 - momentum
};

struct LinearOptions {
  bool bias = true;
  Value weight = Value();  // valid: reuse this [out, in] parameter (weight tying)
};

struct EmbeddingOptions {
  Value weight = Value();  // valid: reuse this [num, dim] parameter
};

struct LayerNormOptions {
  int64_t axis = -1;  // normalize over dimensions [axis, rank)
  double eps = 1e-5;
  bool bias = true;
};

struct LstmOptions {
  int64_t num_layers = 1;
  bool bidirectional = false;
  double dropout = 0.0;  // on the outputs of every layer but the last
  // Valid: each row's length, integers [B] (ONNX sequence_lens; rows padded on the right): a
  // row's outputs past its length are 0 and its h_n, c_n are those of its last real step, so
  // the padding changes nothing (the reverse direction starts at the row's last real step).
  Value sequence_lens = Value();
};

struct AttentionOptions {
  Value memory = Value();  // valid: keys/values come from here (cross-attention)
  bool causal = false;  // builds a "<name>.causal_mask" constant [Tq, Tk]
  Value mask = Value();  // valid: additive [Tq, Tk] mask to use instead (share one across layers)
  double dropout = 0.0;  // on the attention probabilities
  bool bias = true;
};

struct CtcOptions {
  int64_t blank = 0;
  Reduction reduction = Reduction::kMean;
};

// RAII name scope; see GraphBuilder::Scope.
class [[nodiscard]] NameScope {
 public:
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
  ~NameScope();

 private:
  friend class GraphBuilder;
  NameScope(GraphBuilder* builder, std::string prefix);
  GraphBuilder* builder_;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name);
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // Tensors. Names get the current scope prefix.
  Value Input(absl::string_view name, Shape shape, DType dtype = DType::kF32);
  Value Parameter(absl::string_view name, Shape shape, DType dtype = DType::kF32);
  // `data` (row-major) is optional; when given it must have NumElements(shape) values.
  Value Constant(absl::string_view name, Shape shape, std::vector<double> data = {},
                 DType dtype = DType::kF32);
  // A scalar constant with an automatic name ("const_1").
  Value Scalar(double value, DType dtype = DType::kF32);
  // The tensor with this full (unscoped) name; invalid plus an error if none.
  Value Find(absl::string_view full_name);
  void Output(Value v);

  // `auto s = b.Scope("encoder");` prefixes names with "encoder." until s dies.
  NameScope Scope(absl::string_view name);

  // Element-wise.
  Value Unary(OpKind kind, Value x, absl::string_view name = "");
  Value Add(Value a, Value b, absl::string_view name = "");
  Value Sub(Value a, Value b, absl::string_view name = "");
  Value Mul(Value a, Value b, absl::string_view name = "");
  Value Div(Value a, Value b, absl::string_view name = "");
  Value Pow(Value a, Value b, absl::string_view name = "");
  Value Where(Value cond, Value x, Value y, absl::string_view name = "");
  Value Relu(Value x, absl::string_view name = "");
  Value LeakyRelu(Value x, double alpha = 0.01, absl::string_view name = "");
  Value Clip(Value x, double min, double max, absl::string_view name = "");
  Value Dropout(Value x, double p, absl::string_view name = "");
  Value Cast(Value x, DType to, absl::string_view name = "");
  Value MatMul(Value a, Value b, absl::string_view name = "");

  // Reductions and softmax.
  Value ReduceMean(Value x, std::vector<int64_t> axes, bool keepdims = true,
                   absl::string_view name = "");
  Value ReduceSum(Value x, std::vector<int64_t> axes, bool keepdims = true,
                  absl::string_view name = "");
  Value ReduceMax(Value x, std::vector<int64_t> axes, bool keepdims = true,
                  absl::string_view name = "");
  Value Softmax(Value x, int64_t axis = -1, absl::string_view name = "");
  Value LogSoftmax(Value x, int64_t axis = -1, absl::string_view name = "");

  // Layout.
  Value Reshape(Value x, Shape shape, absl::string_view name = "");
  Value Transpose(Value x, std::vector<int64_t> perm, absl::string_view name = "");
  Value Flatten(Value x, int64_t axis = 1, absl::string_view name = "");
  Value Squeeze(Value x, std::vector<int64_t> axes, absl::string_view name = "");
  Value Unsqueeze(Value x, std::vector<int64_t> axes, absl::string_view name = "");
  Value Concat(absl::Span<const Value> xs, int64_t axis, absl::string_view name = "");
  // One output per size; outputs are named "<name>.0", "<name>.1", ...
  std::vector<Value> Split(Value x, std::vector<int64_t> sizes, int64_t axis,
                           absl::string_view name = "");
  Value Slice(Value x, std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int64_t> axes = {}, std::vector<int64_t> steps = {},
              absl::string_view name = "");
  Value Gather(Value data, Value indices, int64_t axis = 0, absl::string_view name = "");
  Value Expand(Value x, Shape shape, absl::string_view name = "");
  // pads: all begins, then all ends (ONNX).
  Value Pad(Value x, std::vector<int64_t> pads, PadMode mode = PadMode::kConstant,
            double value = 0.0, absl::string_view name = "");

  // Layers (PyTorch semantics and parameter shapes).
  Value Conv2d(Value x, int64_t out_channels, Size2 kernel, absl::string_view name = "",
               Conv2dOptions options = {});
  Value Conv1d(Value x, int64_t out_channels, int64_t kernel, absl::string_view name = "",
               Conv1dOptions options = {});
  Value BatchNorm2d(Value x, absl::string_view name = "", BatchNormOptions options = {});
  Value MaxPool2d(Value x, Size2 kernel, absl::string_view name = "",
                  Pool2dOptions options = {});
  Value AvgPool2d(Value x, Size2 kernel, absl::string_view name = "",
                  Pool2dOptions options = {});
  Value GlobalAvgPool(Value x, absl::string_view name = "");
  Value Linear(Value x, int64_t out_features, absl::string_view name = "",
               LinearOptions options = {});
  // ids (i32/i64) -> ids.shape + [dim]; the table is "<name>.weight" [num, dim].
  Value Embedding(Value ids, int64_t num_embeddings, int64_t dim, absl::string_view name = "",
                  EmbeddingOptions options = {});
  Value LayerNorm(Value x, absl::string_view name = "", LayerNormOptions options = {});
  Value Lstm(Value x, int64_t hidden_size, absl::string_view name = "",
             LstmOptions options = {});
  Value MultiHeadAttention(Value x, int64_t num_heads, absl::string_view name = "",
                           AttentionOptions options = {});

  // Additive causal mask constant [tq, tk]: 0 where query i (the last tq of tk
  // positions) may see key j, a large negative value elsewhere.
  Value CausalMask(int64_t tq, int64_t tk, absl::string_view name = "",
                   DType dtype = DType::kF32);

  // Losses. logits [N, C, ...], labels [N, ...] (i32/i64) -> scalar mean.
  // Labels equal to `ignore_index` (when >= 0, e.g. padding) add nothing and are not counted.
  Value SoftmaxCrossEntropy(Value logits, Value labels, absl::string_view name = "",
                            Reduction reduction = Reduction::kMean, int64_t ignore_index = -1);
  // log_probs [T, N, C], targets [N, S], input_lengths [N], target_lengths [N].
  Value CtcLoss(Value log_probs, Value targets, Value input_lengths, Value target_lengths,
                absl::string_view name = "", CtcOptions options = {});

  // Any op of the catalogue (escape hatch): one output per `num_outputs`.
  std::vector<Value> AddOp(OpKind kind, absl::Span<const Value> inputs, OpAttrs attrs,
                           absl::string_view name = "", int num_outputs = 1);

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  const Graph& graph() const { return graph_; }
  // The graph, or the first error; also fails when no Output() was declared.
  absl::StatusOr<Graph> Build() &&;

 private:
  friend class Value;
  friend class NameScope;

  // Records `status` if it is the first error.
  void Fail(absl::Status status);
  // False (recording an error naming `what`) unless every value is a valid
  // Value of this builder and no error happened yet.
  bool CheckInputs(absl::string_view what, absl::Span<const Value> values);
  // Scoped, unique node name from `given` or "<auto_base>_<n>"; "" after an error.
  std::string LayerName(absl::string_view given, absl::string_view auto_base);
  // "<full>.<suffix>", reserved; "" (and an error) when already used.
  std::string SubName(absl::string_view full, absl::string_view suffix);
  bool Taken(absl::string_view full) const;
  // "Kind 'scope.name'", or "Kind (automatic name)" for error messages.
  std::string Describe(absl::string_view kind, absl::string_view name) const;
  Value NewTensor(std::string full_name, Shape shape, DType dtype, TensorRole role,
                  std::vector<double> data = {});
  // Adds a node named `node_name` (already reserved) after inferring its
  // outputs; output names default to the node name ("<node>.<i>" for several).
  std::vector<Value> Emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                          const std::string& node_name,
                          std::vector<std::string> output_names = {});
  Value EmitOne(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                const std::string& node_name);
  // Named single-output op with automatic naming: the common path.
  Value Simple(OpKind kind, std::initializer_list<Value> inputs, OpAttrs attrs,
               absl::string_view name, absl::string_view auto_base);
  // "layer 'n' (Kind) with input 'x' [..] f32: message".
  void LayerError(absl::string_view kind, absl::string_view full_name,
                  std::initializer_list<Value> inputs, absl::string_view message);
  Value Pool2d(OpKind kind, Value x, Size2 kernel, absl::string_view name,
               const Pool2dOptions& options);
  Value LinearFull(Value x, int64_t out_features, const std::string& full,
                   const LinearOptions& options);
  Value LstmLayer(Value x, int64_t hidden_size, bool bidirectional, const std::string& full,
                  Value sequence_lens);
  Value AttentionHeads(Value t, int64_t heads, bool keys_transposed, const std::string& full,
                       absl::string_view suffix);
  Value CausalMaskNamed(int64_t tq, int64_t tk, DType dtype, const std::string& full);
  std::string Prefix() const { return scopes_.empty() ? std::string() : scopes_.back(); }

  Graph graph_;
  absl::Status status_;
  bool built_ = false;
  std::vector<std::string> scopes_;  // full prefixes, innermost last
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_map<std::string, int64_t> auto_counters_;
};

}  // namespace tessera::graph
