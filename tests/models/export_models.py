#!/usr/bin/python3
"""Exports Tessera's structure-only ONNX test models and their manifest.

Usage: /usr/bin/python3 tests/models/export_models.py [--out DIR]   (default: this folder)

Needs Debian's python3 with torch 1.13, torchvision 0.14 and onnx 1.12; no network.
Every model is exported in eval mode with export_params=False (parameters become
graph inputs without data), torch.manual_seed(0), and is re-initialised from a
seeded normal distribution first (see README.md, "Export settings"). Re-running
gives byte-identical files.
"""
import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep tests/models free of __pycache__

import onnx  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import flops  # noqa: E402
import model_defs as md  # noqa: E402
import onnx_inspect as oi  # noqa: E402

EXPORT_BATCH = 2
OTHER_BATCH = 8


@dataclass
class Spec:
    file: str
    make: Callable[[], torch.nn.Module]
    args: Callable[[int], tuple]  # batch -> example inputs
    opset: int
    input_names: list
    output_names: list
    dynamic_axes: Optional[dict] = None
    fold: bool = True  # torch's default do_constant_folding=True
    keep_bn: bool = True  # disable torch's eval-mode Conv+BatchNorm fusion
    randomize: bool = True  # distinct values, so equal-valued tensors are not merged
    extra_flops: Optional[Callable] = None
    notes: str = ""


# ------------------------------------------------------------------ inputs
def image(c, h, w):
    return lambda b: (torch.randn(b, c, h, w),)


def tokens(vocab, t):
    return lambda b: (torch.randint(0, vocab, (b, t)),)


def seq2seq_args(b):
    return (torch.randint(0, 32000, (16, b)), torch.randint(0, 32000, (12, b)))


def lstm_state_args(b):
    return (torch.randn(10, b, 16), torch.randn(4, b, 32), torch.randn(4, b, 32))


def gemm_args(b):
    return (torch.randn(b, 32), torch.randn(32, b), torch.randn(b, 5, 32),
            torch.randn(b, 4, 6, 8), torch.randn(b, 4, 6, 8))


def unsupported_args(b):
    return (torch.randn(b, 3, 8, 8), torch.rand(b, 8, 8, 2) * 2 - 1)


def batch_axes(names, axis=0):
    return {n: {axis: "batch"} for n in names}


# ------------------------------------------------------------------ the models
TORCHVISION_NOTE = ("torchvision {name}(weights=None), eval. Residual additions and ReLUs are "
                    "counted; Flatten and Dropout cost 0.")

SPECS = [
    Spec("alexnet.onnx", md.AlexNetViewFlatten, image(3, 224, 224), 11,
         ["input"], ["output"], batch_axes(["input", "output"]),
         notes=TORCHVISION_NOTE.format(name="alexnet") + " forward() flattens with "
         "x.view(x.size(0), -1) (legacy torchvision) so the dynamic batch gives a "
         "Shape/Gather/Unsqueeze/Concat/Reshape subgraph. AdaptiveAvgPool2d(6,6) on a 6x6 map "
         "(exported as AveragePool k1) counted as 1 per input element."),
    Spec("vgg16.onnx", lambda: torchvision.models.vgg16(weights=None), image(3, 224, 224), 13,
         ["input"], ["output"], None,
         notes=TORCHVISION_NOTE.format(name="vgg16") + " Static batch 2 (no dynamic_axes)."),
    Spec("resnet50.onnx", md.ResNet50ViewFlatten, image(3, 224, 224), 17,
         ["input"], ["output"], batch_axes(["input", "output"]),
         notes=TORCHVISION_NOTE.format(name="resnet50") + " forward() flattens with "
         "x.view(x.size(0), -1) (legacy torchvision) so the dynamic batch gives a "
         "Shape/Gather/Unsqueeze/Concat/Reshape subgraph. BatchNormalization kept (fusion into "
         "Conv disabled); running_mean/var appear as graph inputs."),
    Spec("mobilenet_v2.onnx", lambda: torchvision.models.mobilenet_v2(weights=None),
         image(3, 224, 224), 14, ["input"], ["output"], batch_axes(["input", "output"]),
         extra_flops=flops.mobilenet_v2_extra,
         notes=TORCHVISION_NOTE.format(name="mobilenet_v2") + " Unmodified torchvision: "
         "torch.flatten exports as one Flatten node even with a dynamic batch. The functional "
         "adaptive_avg_pool2d(1,1) after features is counted (1 per input element). "
         "BatchNormalization kept."),
    Spec("seq2seq_lstm.onnx", md.Seq2SeqLSTM, seq2seq_args, 14, ["src", "tgt"], ["log_probs"],
         {"src": {1: "batch"}, "tgt": {1: "batch"}, "log_probs": {0: "batch"}},
         notes="GNMT-like, seq-first (batch_first=False): src (16, B), tgt (12, B) int64, "
         "vocab 32000/32000, embed 256, encoder 2-layer bidirectional LSTM(256), Linear 512->256 "
         "memory projection, decoder 2-layer LSTM(256) from zero state, Luong dot attention with "
         "bmm + softmax, concat + Linear(512,256) + tanh, generator Linear(256,32000) + "
         "log_softmax. Output (B, 12, 32000). Everything counted; nothing left out."),
    Spec("crnn.onnx", md.CRNN, image(1, 32, 100), 17, ["image"], ["log_probs"],
         {"image": {0: "batch"}, "log_probs": {1: "batch"}},
         notes="CRNN: 7 convs (BN after conv 3, 5, 7), MaxPool 2x2 twice and kernel (2,2) stride (2,1) pad (0,1) "
         "twice, squeeze(2) + permute to (26, B, 512), 2-layer bidirectional LSTM(256), "
         "Linear(512,37) per step, log_softmax. Output (26, B, 37). BatchNormalization kept."),
    Spec("transformer_lm.onnx", md.TransformerLM, tokens(10000, 32), 17, ["tokens"], ["logits"],
         {"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
         notes="GPT-like pre-LN LM: vocab 10000, d 256, 4 heads, 4 blocks, MLP 1024 with GELU "
         "(Erf pattern), learned positions (max 128), causal mask built from Range (dynamic seq), "
         "untied head without bias. Exported at T=32. LayerNormalization op (opset 17). Counted: "
         "residual and position adds, 1/sqrt(d) scaling, mask, softmax, GELU as 1 per element."),
    Spec("transformer_lm_op13.onnx", md.TransformerLM, tokens(10000, 32), 13, ["tokens"],
         ["logits"], {"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
         notes="Same model as transformer_lm.onnx at opset 13: LayerNorm decomposed into "
         "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add (still counted 5 per element)."),
    Spec("big_1000.onnx", lambda: md.TransformerLM(vocab=1000, d_model=64, heads=4, layers=12,
                                                   max_len=64),
         tokens(1000, 16), 13, ["tokens"], ["logits"],
         {"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
         notes="Timing-test model: 12-block TransformerLM (vocab 1000, d 64, 4 heads) at opset 13 "
         "with dynamic batch and seq, exported at T=16; many Shape/Gather/Unsqueeze/Concat "
         "subgraphs."),
    Spec("tied_embedding.onnx", md.TiedEmbeddingLM, tokens(1000, 8), 13, ["tokens"], ["log_probs"],
         notes="out.weight is emb.weight (one Parameter). With torch's default constant folding "
               "the Transpose of the tied weight is folded into a separate anonymous input "
               "(onnx::MatMul_*) holding emb.weight^T: the ONNX graph has TWO inputs for ONE "
               "parameter, and no initializer/alias links them (see param_map). params counts it "
               "once."),
    Spec("tied_embedding_nofold.onnx", md.TiedEmbeddingLM, tokens(1000, 8), 13, ["tokens"],
         ["log_probs"], fold=False,
         notes="tied_embedding exported with do_constant_folding=False: emb.weight is ONE graph "
               "input consumed by Gather and by a Transpose feeding the output MatMul."),
    Spec("shared_linear.onnx", md.SharedLinear,
         lambda b: (torch.randn(b, 32), torch.randn(b, 6, 32)), 13, ["x", "seq"],
         ["y", "y_seq"],
         notes="fc2d on a rank-2 input: two Gemm nodes read the same fc2d.weight/fc2d.bias "
               "inputs. fc3d on a rank-3 input: each call's Transpose(weight) is folded, the two "
               "equal folded tensors are deduplicated, and the second MatMul reads an Identity "
               "alias of the first folded input."),
    Spec("gemm_trans.onnx", md.GemmTrans, gemm_args, 13, ["x", "xt", "seq", "q", "k"],
         ["y1", "y2", "y3", "y4", "y5", "y6"],
         notes="Gemm transB=1 (nn.Linear and addmm(b, x, w.t())), transA=1 (addmm(b, xt.t(), w), "
               "xt is (32, B)), transA=transB=1; MatMul (B,5,32)@(32,24), (B,4,6,8)@(B,4,8,6) "
               "after a Transpose of k, and (B,4,6,8)@(1,4,8,5) with a broadcast batch dim."),
    Spec("conv_variants.onnx", md.ConvVariants,
         lambda b: (torch.randn(b, 8, 32, 32), torch.randn(b, 4, 50)), 11, ["img", "sig"],
         ["y_img", "y_sig"],
         notes="Conv2d 8->16 k3 p1 groups 4; depthwise 16->16 k3 p1 groups 16 no bias; "
               "16->32 k3 s2 p2 dilation 2; AvgPool2d k3 s2 p1 (count_include_pad) + MaxPool2d k3 "
               "s2 p1, added; Conv2d 32->8 k(1,3) p(0,1); Conv1d 4->8 k5 s2 p2 + MaxPool1d 2."),
    Spec("unsupported.onnx", md.Unsupported, unsupported_args, 16, ["img", "grid"],
         ["top_values", "top_index", "det", "nonzero"],
         notes="Conv + grid_sample (GridSample) + Linear, then topk (TopK), det (Det), "
               "nonzero (NonZero, data-dependent output shape). Only Conv and Linear are counted; "
               "GridSample/TopK/Det/NonZero/Greater are 0 in the hand count."),
    Spec("lstm_states.onnx", md.LSTMStates, lstm_state_args, 14, ["x", "h0", "c0"],
         ["out", "hn", "cn"],
         notes="nn.LSTM(16, 32, num_layers=2, bidirectional=True), seq-first; x (10, B, 16), "
               "h0/c0 (4, B, 32) are graph inputs, sliced per layer with Slice. Weights reach "
               "each ONNX LSTM as folded anonymous W/R/B inputs (gate order iofc)."),
    Spec("lstm_states_nofold.onnx", md.LSTMStates, lstm_state_args, 14, ["x", "h0", "c0"],
         ["out", "hn", "cn"], fold=False,
         notes="lstm_states with do_constant_folding=False: the 16 PyTorch weight/bias tensors "
               "are graph inputs under their state_dict names and are re-ordered into W/R/B by "
               "Slice/Concat/Unsqueeze subgraphs in front of each LSTM node."),
    Spec("default_quirks.onnx", md.DefaultQuirks, image(3, 16, 16), 13, ["img"], ["out"],
         keep_bn=False, randomize=False,
         notes="Torch defaults on a default-initialised model: both BatchNorms are fused into "
               "their Convs (anonymous onnx::Conv_* weight and bias inputs, no BatchNormalization "
               "node, no running stats), and parameters with equal values (ln2 = ln1 weights, "
               "zero biases, ...) are deduplicated into one input plus Identity aliases. "
               "forward_flops counts the PyTorch model (with BN, 2 per element); the ONNX graph "
               "instead has Conv with bias (1 per element)."),
]


# ------------------------------------------------------------------ export
@contextlib.contextmanager
def conv_bn_fusion(enabled):
    """torch 1.13 fuses Conv+BatchNorm in eval-mode exports (_jit_pass_onnx_eval_peephole,
    whose only job is that fusion). Replace it by a no-op to keep BatchNormalization."""
    original = torch._C._jit_pass_onnx_eval_peephole
    if not enabled:
        torch._C._jit_pass_onnx_eval_peephole = lambda graph, params: params
    try:
        yield
    finally:
        torch._C._jit_pass_onnx_eval_peephole = original


def randomize_state(model, seed=0):
    """Seeded distinct values for every float parameter and buffer (variances positive)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.state_dict(keep_vars=True).items():
            if not t.dtype.is_floating_point:
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.05)


def build(spec):
    torch.manual_seed(0)
    model = spec.make().eval()
    if spec.randomize:
        randomize_state(model)
    return model


def export(spec, model, args, export_params):
    f = io.BytesIO()
    with conv_bn_fusion(not spec.keep_bn), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, f, export_params=export_params, opset_version=spec.opset,
                          input_names=spec.input_names, output_names=spec.output_names,
                          dynamic_axes=spec.dynamic_axes, do_constant_folding=spec.fold,
                          training=torch.onnx.TrainingMode.EVAL)
    return f.getvalue()


def describe(spec, model, data):
    """Manifest entry for one exported file (data = its bytes)."""
    m = onnx.load_from_string(data)
    onnx.checker.check_model(m, full_check=True)
    g = m.graph
    named = set.union(*oi.state_names(model))
    state_inputs = [i.name for i in g.input if i.name not in spec.input_names]
    valued = None
    if any(n not in named for n in state_inputs):
        valued = onnx.load_from_string(export(spec, model, spec.args(EXPORT_BATCH), True))
        # the valued export must name its initializers exactly like our parameter inputs
        assert sorted(t.name for t in valued.graph.initializer) == sorted(state_inputs), spec.file
    pmap = oi.map_state_inputs(model, m, valued, spec.input_names)
    shapes = {i.name: oi.dims_of(i) for i in g.input}
    torch.manual_seed(0)
    f_export = flops.count_forward(model, spec.args(EXPORT_BATCH), spec.extra_flops)
    torch.manual_seed(0)
    f_other = flops.count_forward(model, spec.args(OTHER_BATCH), spec.extra_flops)
    stats = oi.shape_stats(m)
    dyn = bool(spec.dynamic_axes)
    return {
        "file": spec.file,
        "opset": spec.opset,
        "batch": EXPORT_BATCH,
        "data_inputs": spec.input_names,
        "outputs": spec.output_names,
        "params": sum(p.numel() for p in model.parameters()),
        "param_names": [n for n, v in pmap.items() if v["kind"] == "param"],
        "buffer_names": [n for n, v in pmap.items() if v["kind"] == "buffer"],
        "param_input_elements": sum(
            int(torch.Size(shapes[n]).numel()) for n, v in pmap.items() if v["kind"] == "param"),
        "param_map": pmap,
        "identity_aliases": oi.identity_aliases(g),
        "forward_flops": f_export["total"],
        "forward_flops_batch": {str(OTHER_BATCH): f_other["total"]},
        "forward_flops_breakdown": {k: v for k, v in f_export.items() if k != "total"},
        "node_count": len(g.node),
        "op_types": sorted({n.op_type for n in g.node}),
        "dynamic_batch": dyn,
        "dynamic_axes": spec.dynamic_axes or {},
        "input_shapes": {n: shapes[n] for n in spec.input_names},
        "export": {"export_params": False, "do_constant_folding": spec.fold,
                   "conv_bn_fusion": not spec.keep_bn, "randomized_values": spec.randomize,
                   "training": "EVAL"},
        "shape_inference": stats,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "notes": spec.notes,
    }


def to_json(obj, indent=0, width=100):
    """json.dumps with nested values kept on one line when they fit in width."""
    flat = json.dumps(obj)
    if len(flat) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)}: {to_json(v, indent + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + to_json(v, indent + 1, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--out", default=HERE, help="output folder (default: this script's folder)")
    ap.add_argument("--only", nargs="*", help="export only these files (for debugging; the "
                    "manifest then lists only them)")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    torch.set_num_threads(2)
    entries = []
    for spec in SPECS:
        if opts.only and spec.file not in opts.only:
            continue
        model = build(spec)
        data = export(spec, model, spec.args(EXPORT_BATCH), export_params=False)
        entry = describe(spec, model, data)
        with open(os.path.join(opts.out, spec.file), "wb") as f:
            f.write(data)
        entries.append(entry)
        print(f"{spec.file:28s} {len(data):9d} B  nodes {entry['node_count']:5d}  "
              f"params {entry['params']:11d}  flops {entry['forward_flops']:.4e}  "
              f"unknown shapes {entry['shape_inference']['unknown']}"
              f"/{entry['shape_inference']['unknown_with_data_prop']}")
    manifest = {
        "format": 1,
        "generator": "tests/models/export_models.py",
        "torch": torch.__version__.split("a")[0], "torchvision": torchvision.__version__.split("a")[0],
        "onnx": onnx.__version__,
        "export_batch": EXPORT_BATCH,
        "flops_convention": flops.__doc__.strip(),
        "models": entries,
    }
    with open(os.path.join(opts.out, "manifest.json"), "w") as f:
        f.write(to_json(manifest) + "\n")
    total = sum(e["bytes"] for e in entries)
    print(f"total {total} bytes in {len(entries)} files")


if __name__ == "__main__":
    main()
