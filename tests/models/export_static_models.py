#!/usr/bin/python3
"""Exports the static-batch ONNX test models (no dynamic axes) and their manifest.

Usage: /usr/bin/python3 tests/models/export_static_models.py [--out DIR]   (default: this folder)

These are the files behind Tessera's `OnnxImportOptions::batch` on static exports
(docs/onnx-import.md, "Static exports"): PyTorch's default export, without
dynamic_axes, bakes the tracing batch into constants (Reshape targets, the zero
initial states of an LSTM, Expand shapes). Each model is traced at batch 4 and
written with export_params=False, in eval mode, after the same seeded
re-initialisation as export_models.py; re-running gives byte-identical files.
Needs Debian's python3 with torch 1.13 and onnx 1.12; no network.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep tests/models free of __pycache__

import onnx  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from export_models import randomize_state, to_json  # noqa: E402

TRACE_BATCH = 4


# ------------------------------------------------------------------ the models
class StaticSeq2SeqLSTM(nn.Module):
    """Batch-first LSTM encoder-decoder whose encoder starts from zero states built as
    torch.zeros(layers, x.size(0), hidden): a static export folds them into constants
    with the tracing batch in their shape."""

    def __init__(self, vocab=500, embed=32, hidden=48, layers=2):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.src_embed = nn.Embedding(vocab, embed)
        self.encoder = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.tgt_embed = nn.Embedding(vocab, embed)
        self.decoder = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.generator = nn.Linear(hidden, vocab)

    def forward(self, src, tgt):
        h0 = torch.zeros(self.layers, src.size(0), self.hidden)
        c0 = torch.zeros(self.layers, src.size(0), self.hidden)
        _, state = self.encoder(self.src_embed(src), (h0, c0))
        dec, _ = self.decoder(self.tgt_embed(tgt), state)
        return torch.log_softmax(self.generator(dec), dim=-1)


class StaticTransformerEncoder(nn.Module):
    """nn.TransformerEncoder (batch_first) with 4-head attention. The exported attention
    reshapes to [T, B*heads, d/heads] and back with baked targets; heads == tracing batch
    (both 4), so only the position of the batch tells the two apart."""

    def __init__(self, d_model=32, heads=4, ff=64, layers=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class AmbiguousExpand(nn.Module):
    """x [B, 8] -> [B, B, 8]: x.unsqueeze(1).expand(B, x.size(0), 8). Traced at batch 4 the
    Expand shape is the constant [4, 4, 8]; the second 4 also equals the tracing batch."""

    def forward(self, x):
        return x.unsqueeze(1).expand(x.size(0), x.size(0), 8) * 2.0


@dataclass
class Spec:
    file: str
    make: Callable[[], nn.Module]
    args: Callable[[int], tuple]
    input_names: list
    output_names: list
    notes: str
    opset: int = 14


SPECS = [
    Spec("static_seq2seq_lstm.onnx", StaticSeq2SeqLSTM,
         lambda b: (torch.randint(0, 500, (b, 7)), torch.randint(0, 500, (b, 5))),
         ["src", "tgt"], ["log_probs"],
         "src (B, 7), tgt (B, 5) int64; vocab 500, embed 32, 2-layer LSTM(48) encoder from "
         "torch.zeros(2, B, 48) states (exported as constants [1, 4, 48] expanded to "
         "[1, B, 48]), 2-layer LSTM decoder from the encoder state, Linear(48, 500), "
         "log_softmax. Output (B, 5, 500)."),
    Spec("static_transformer_encoder.onnx", StaticTransformerEncoder,
         lambda b: (torch.randn(b, 10, 32),), ["x"], ["y"],
         "x (B, 10, 32); nn.TransformerEncoder of 2 post-LN layers, d 32, 4 heads, FF 64, "
         "batch_first. Baked Reshape targets [10, 16, 8] (T, B*heads, d/heads), [40, 32] "
         "(T*B, d) and [10, 4, 32] (T, B, d). Output (B, 10, 32)."),
    Spec("static_ambiguous_expand.onnx", AmbiguousExpand, lambda b: (torch.randn(b, 8),),
         ["x"], ["y"],
         "x (B, 8) -> (B, B, 8) with a baked Expand shape [4, 4, 8]: the second 4 cannot be "
         "attributed (it expands a size-1 axis and equals the tracing batch). Tessera refuses "
         "to re-derive it at another batch."),
]


# ------------------------------------------------------------------ export
def export(spec):
    torch.manual_seed(0)
    model = spec.make().eval()
    randomize_state(model)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, spec.args(TRACE_BATCH), f, export_params=False,
                          opset_version=spec.opset, input_names=spec.input_names,
                          output_names=spec.output_names, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
    return model, f.getvalue()


def describe(spec, model, data):
    m = onnx.load_from_string(data)
    onnx.checker.check_model(m, full_check=True)
    dims = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    outs = {o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output}
    return {
        "file": spec.file,
        "opset": spec.opset,
        "batch": TRACE_BATCH,
        "dynamic_batch": False,
        "data_inputs": spec.input_names,
        "input_shapes": {n: dims[n] for n in spec.input_names},
        "output_shapes": outs,
        "params": sum(p.numel() for p in model.parameters()),
        "node_count": len(m.graph.node),
        "op_types": sorted({n.op_type for n in m.graph.node}),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "notes": spec.notes,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--out", default=HERE, help="output folder (default: this script's folder)")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    torch.set_num_threads(2)
    entries = []
    for spec in SPECS:
        model, data = export(spec)
        entries.append(describe(spec, model, data))
        with open(os.path.join(opts.out, spec.file), "wb") as f:
            f.write(data)
        print(f"{spec.file:34s} {len(data):7d} B  nodes {entries[-1]['node_count']:4d}  "
              f"params {entries[-1]['params']}")
    manifest = {"format": 1, "generator": "tests/models/export_static_models.py",
                "torch": torch.__version__.split("a")[0], "onnx": onnx.__version__,
                "trace_batch": TRACE_BATCH, "models": entries}
    with open(os.path.join(opts.out, "manifest_static.json"), "w") as f:
        f.write(to_json(manifest) + "\n")


if __name__ == "__main__":
    main()
