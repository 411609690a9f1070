// Per-op estimates: element-wise ops. Forward: 1 FLOP per output element (Cast: 0).
#include "tessera/costmodel/op_estimate_impl.h"

namespace tessera::costmodel::estimate {
namespace {

using graph::OpKind;

enum class Saves { kNothing, kInput, kOutput, kMask };

struct UnaryRule {
  double backward_per_element;  // when the input needs a gradient
  Saves saves;
};

// Piecewise-linear ops multiply dY by a mask or sign: 1 per element. Smooth ops
// compute f'(.) from a saved tensor, then multiply by dY: 2 per element.
UnaryRule RuleFor(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: return {1, Saves::kOutput};
    case OpKind::kLeakyRelu:
    case OpKind::kClip:
    case OpKind::kAbs: return {1, Saves::kInput};
    case OpKind::kNeg: return {1, Saves::kNothing};
    case OpKind::kDropout: return {1, Saves::kMask};
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kExp:
    case OpKind::kSqrt:
    case OpKind::kReciprocal: return {2, Saves::kOutput};
    case OpKind::kGelu:
    case OpKind::kErf:
    case OpKind::kLog: return {2, Saves::kInput};
    default: return {0, Saves::kNothing};  // Cast: the gradient is cast back
  }
}

}  // namespace

NodeCost CostUnary(const NodeView& v) {
  NodeCost cost;
  const double out = v.out_elements();
  cost.flops_forward = v.kind() == OpKind::kCast ? 0 : out;
  if (!v.needs_grad(0)) return cost;
  const UnaryRule rule = RuleFor(v.kind());
  cost.flops_backward = rule.backward_per_element * out;
  switch (rule.saves) {
    case Saves::kInput: cost.keeps.push_back(v.input_id(0)); break;
    case Saves::kOutput: cost.keeps.push_back(v.output_id(0)); break;
    case Saves::kMask: cost.private_keep_bytes = BytesOf(out, 1); break;  // one bool each
    case Saves::kNothing: break;
  }
  return cost;
}

// Add/Sub: dA = dY, dB = +-dY (reduced over broadcast axes): 1 per output element per
// input that needs a gradient, nothing kept. Mul: dA = dY*B, dB = dY*A: 1 each, keeps the
// other operand. Div: dA = dY/B (1), dB = -dY*Y/B (2); keeps B, and Y when B needs one.
// Pow: dA = dY*B*A^(B-1), dB = dY*Y*ln(A): 3 each; keeps A, B and Y.
NodeCost CostBinary(const NodeView& v) {
  NodeCost cost;
  const double out = v.out_elements();
  cost.flops_forward = out;
  const bool ga = v.needs_grad(0), gb = v.needs_grad(1);
  const graph::TensorId a = v.input_id(0), b = v.input_id(1), y = v.output_id(0);
  switch (v.kind()) {
    case OpKind::kMul:
      cost.flops_backward = (ga + gb) * out;
      if (ga) cost.keeps.push_back(b);
      if (gb) cost.keeps.push_back(a);
      break;
    case OpKind::kDiv:
      cost.flops_backward = (ga ? out : 0) + (gb ? 2 * out : 0);
      if (ga || gb) cost.keeps.push_back(b);
      if (gb) cost.keeps.push_back(y);
      break;
    case OpKind::kPow:
      cost.flops_backward = 3 * (ga + gb) * out;
      if (ga || gb) cost.keeps.insert(cost.keeps.end(), {a, b, y});
      break;
    default:  // Add, Sub
      cost.flops_backward = (ga + gb) * out;
      break;
  }
  return cost;
}

// Where(cond, X, Y): 1 per output element; dX and dY select dY by cond (1 each), keep cond.
NodeCost CostWhere(const NodeView& v) {
  NodeCost cost;
  const double out = v.out_elements();
  cost.flops_forward = out;
  const int grads = v.needs_grad(1) + v.needs_grad(2);
  cost.flops_backward = grads * out;
  if (grads > 0) cost.keeps.push_back(v.input_id(0));
  return cost;
}

}  // namespace tessera::costmodel::estimate
