"""Analytic forward-FLOP hand counts (Tessera's convention, see DESIGN.md).

Forward hooks only supply tensor shapes; every count is a closed formula of the
module's configuration and those shapes. Nothing here reads an ONNX file.

  Conv      2*N*Cout*prod(out_spatial)*(Cin/groups)*prod(kernel) [+ N*Cout*prod(out_spatial) bias]
  Linear    2*rows*in*out [+ rows*out bias], rows = product of leading dims
  matmul    2*batch*M*K*N  (= 2 * numel(out) * K), also bmm and addmm (+ M*N for the bias)
  LSTM      per layer and direction: T*B*(2*4H*(I+H) + 2*4H + 9H)
  ReLU/ReLU6/GELU/Tanh/Sigmoid, residual Add, Scale, causal mask: 1 per output element
  BatchNorm 2, LayerNorm 5, Softmax/LogSoftmax 5 per output element
  MaxPool/AvgPool prod(kernel) per output element; adaptive/global avg pool 1 per input element
  Dropout (eval), Embedding, reshapes, transposes, concat: 0
"""
import math
from collections import OrderedDict

import torch
from torch import nn
from torchvision.models.mobilenetv2 import InvertedResidual
from torchvision.models.resnet import BasicBlock, Bottleneck

import model_defs as md

CATEGORIES = ("conv", "linear", "matmul", "recurrent", "elementwise", "norm", "pool", "softmax")


def _prod(xs):
    return int(math.prod(int(x) for x in xs))


def _kernel_prod(kernel, dims):
    return _prod(kernel) if isinstance(kernel, (tuple, list)) else int(kernel) ** dims


def conv_flops(m, out):
    n, cout, spatial = out.shape[0], out.shape[1], _prod(out.shape[2:])
    macs = n * cout * spatial * (m.in_channels // m.groups) * _prod(m.kernel_size)
    return 2 * macs + (n * cout * spatial if m.bias is not None else 0)


def linear_flops(m, out):
    rows = out.numel() // m.out_features
    return 2 * rows * m.in_features * m.out_features + (rows * m.out_features if m.bias is not None else 0)


def matmul_flops(a, out):
    return 2 * out.numel() * a.shape[-1]


def addmm_flops(m, a, out):
    k = a.shape[0] if m.trans_a else a.shape[1]
    return 2 * out.numel() * k + out.numel()


def lstm_flops(m, x):
    t, b = (x.shape[1], x.shape[0]) if m.batch_first else (x.shape[0], x.shape[1])
    h, dirs = m.hidden_size, 2 if m.bidirectional else 1
    total = 0
    for layer in range(m.num_layers):
        i = m.input_size if layer == 0 else h * dirs
        per_step = 2 * 4 * h * (i + h) + 2 * 4 * h + 9 * h
        total += dirs * t * b * per_step
    return total


def _first(x):
    return x[0] if isinstance(x, (tuple, list)) else x


_ELEMENTWISE = (nn.ReLU, nn.ReLU6, nn.GELU, nn.Tanh, nn.Sigmoid, md.Add, md.Scale, md.CausalMask)
_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.AvgPool1d, nn.AvgPool2d)


def module_flops(m, inputs, out):
    """(category, flops) for one call of module m, or None if m itself costs nothing
    (containers are counted through their children)."""
    out = _first(out)
    if isinstance(m, (nn.Conv1d, nn.Conv2d)):
        return "conv", conv_flops(m, out)
    if isinstance(m, nn.Linear):
        return "linear", linear_flops(m, out)
    if isinstance(m, (md.MatMul, md.BMM)):
        return "matmul", matmul_flops(inputs[0], out)
    if isinstance(m, md.AddMM):
        return "linear", addmm_flops(m, inputs[0], out)
    if isinstance(m, nn.LSTM):
        return "recurrent", lstm_flops(m, inputs[0])
    if isinstance(m, _ELEMENTWISE):
        return "elementwise", out.numel()
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        return "norm", 2 * out.numel()
    if isinstance(m, nn.LayerNorm):
        return "norm", 5 * out.numel()
    if isinstance(m, _POOLS):
        return "pool", _kernel_prod(m.kernel_size, out.dim() - 2) * out.numel()
    if isinstance(m, (nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d)):
        return "pool", inputs[0].numel()
    if isinstance(m, (nn.Softmax, nn.LogSoftmax)):
        return "softmax", 5 * out.numel()
    # torchvision blocks: only the residual addition they do functionally
    if isinstance(m, (Bottleneck, BasicBlock)):
        return "elementwise", out.numel()
    if isinstance(m, InvertedResidual) and m.use_res_connect:
        return "elementwise", out.numel()
    return None


def count_forward(model, args, extra=None):
    """Runs model(*args) under no_grad with hooks; returns OrderedDict category -> FLOPs
    plus 'total'. extra(model) may return a list of (module, fn(inputs, out) -> (cat, n))
    hooks for functional ops a model performs outside any module."""
    totals = OrderedDict((c, 0) for c in CATEGORIES)
    handles = []

    def hook(m, inputs, out):
        res = module_flops(m, inputs, out)
        if res is not None:
            totals[res[0]] += int(res[1])

    for m in model.modules():
        handles.append(m.register_forward_hook(hook))
    def extra_hook(fn):
        def run(m, inputs, out):
            cat, n = fn(inputs, out)
            totals[cat] += int(n)
        return run

    for mod, fn in (extra(model) if extra else []):
        handles.append(mod.register_forward_hook(extra_hook(fn)))
    try:
        with torch.no_grad():
            model(*args)
    finally:
        for h in handles:
            h.remove()
    totals["total"] = sum(totals[c] for c in CATEGORIES)
    return totals


def mobilenet_v2_extra(model):
    """MobileNetV2 pools with F.adaptive_avg_pool2d(x, (1, 1)) after model.features:
    1 FLOP per input element of that pool = numel(features output)."""
    return [(model.features, lambda i, o: ("pool", o.numel()))]
