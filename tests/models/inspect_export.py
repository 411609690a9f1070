#!/usr/bin/python3
"""Reproduces the export findings written up in README.md (torch 1.13 behaviour of
torch.onnx.export around parameters). Prints Markdown to stdout; writes no files.

Usage: /usr/bin/python3 tests/models/inspect_export.py [--dir DIR]
  DIR: folder holding the exported models (default: this folder), for the
  input-order and dynamic-axes checks.
"""
import argparse
import io
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import onnx  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import export_models as em  # noqa: E402
import model_defs as md  # noqa: E402
import onnx_inspect as oi  # noqa: E402


def export(model, args, **kw):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, f, **kw)
    return onnx.load_from_string(f.getvalue())


def block(title, model):
    print(f"**{title}**\n```\n{oi.summarize(model)}\n```\n")


class TwoLayerNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.LayerNorm(8), nn.LayerNorm(8)

    def forward(self, x):
        return self.b(self.a(x))


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, bias=False)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def tied_section():
    print("### Tied embedding (`out.weight = emb.weight`), opset 13\n")
    tokens = torch.randint(0, 1000, (2, 8))
    for params in (False, True):
        for fold in (True, False):
            torch.manual_seed(0)
            m = md.TiedEmbeddingLM().eval()
            em.randomize_state(m)
            g = export(m, (tokens,), export_params=params, do_constant_folding=fold,
                       opset_version=13, input_names=["tokens"], output_names=["log_probs"])
            block(f"export_params={params}, do_constant_folding={fold}", g)


def shared_section():
    print("### One nn.Linear applied twice (rank-2 fc2d, rank-3 fc3d), opset 13\n")
    args = (torch.randn(2, 32), torch.randn(2, 6, 32))
    for fold in (True, False):
        torch.manual_seed(0)
        m = md.SharedLinear().eval()
        em.randomize_state(m)
        block(f"export_params=False, do_constant_folding={fold}",
              export(m, args, export_params=False, do_constant_folding=fold, opset_version=13,
                     input_names=["x", "seq"], output_names=["y", "y_seq"]))


def dedup_section():
    print("### Equal-valued parameters are merged (default init, eval mode), opset 17\n")
    x = torch.randn(2, 8)
    for label, training, randomize in (("eval, default init", None, False),
                                       ("eval, randomized values", None, True),
                                       ("training=TrainingMode.TRAINING, default init",
                                        torch.onnx.TrainingMode.TRAINING, False)):
        torch.manual_seed(0)
        m = TwoLayerNorms().eval()
        if randomize:
            em.randomize_state(m)
        kw = {"training": training} if training else {}
        block(label, export(m, (x,), export_params=False, opset_version=17, **kw))


def bn_section():
    print("### BatchNorm after Conv, opset 13, export_params=False\n")
    x = torch.randn(2, 3, 8, 8)
    for label, fusion, randomize, training in (
            ("eval, default init (torch default)", True, False, None),
            ("eval, randomized values", True, True, None),
            ("eval, randomized, Conv+BN fusion disabled (what export_models.py does)", False, True, None),
            ("training=TrainingMode.TRAINING", True, True, torch.onnx.TrainingMode.TRAINING)):
        torch.manual_seed(0)
        m = ConvBN().eval()
        if randomize:
            em.randomize_state(m)
        kw = {"training": training} if training else {}
        with em.conv_bn_fusion(fusion):
            block(label, export(m, (x,), export_params=False, opset_version=13, **kw))


def lstm_section():
    print("### nn.LSTM(16, 32, num_layers=2, bidirectional=True) with (h0, c0), opset 14\n")
    args = em.lstm_state_args(2)
    for fold in (True, False):
        torch.manual_seed(0)
        m = md.LSTMStates().eval()
        em.randomize_state(m)
        g = export(m, args, export_params=False, do_constant_folding=fold, opset_version=14,
                   input_names=["x", "h0", "c0"], output_names=["out", "hn", "cn"])
        text = oi.summarize(g).split("\n")
        if not fold:  # only the first layer's forward-direction weight reordering
            keep = [l for l in text if "weight_ih_l0'" in l or "weight_ih_l0," in l
                    or "weight_ih_l0)" in l]
            print("**do_constant_folding=False: the Slice/Concat nodes on lstm.weight_ih_l0**\n```")
            print("\n".join(keep[:5]))
            print(f"... {sum(1 for l in text if l.startswith('  Slice('))} Slice, "
                  f"{sum(1 for l in text if l.startswith('  Concat('))} Concat, "
                  f"{sum(1 for l in text if l.startswith('  Unsqueeze('))} Unsqueeze nodes in all\n```\n")
        else:
            block("do_constant_folding=True (lstm_states.onnx)", g)


def order_section(folder):
    """Checks the input-order rule on every exported file, prints dynamic inputs."""
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    print("### Input order and symbolic dims in the exported files\n")
    print("| file | order rule holds | inputs with symbolic dims | outputs with symbolic dims |")
    print("|---|---|---|---|")
    specs = {s.file: s for s in em.SPECS}
    for e in manifest["models"]:
        g = onnx.load(os.path.join(folder, e["file"])).graph
        names = [i.name for i in g.input]
        model = em.build(specs[e["file"]])
        sd = list(model.state_dict().keys())
        data = names[:len(e["data_inputs"])] == e["data_inputs"]
        named = [n for n in names[len(e["data_inputs"]):] if n in sd]
        anon = [n for n in names[len(e["data_inputs"]):] if n not in sd]
        first_anon = min((names.index(a) for a in anon), default=len(names))
        ok = data and named == sorted(named, key=sd.index) and \
            all(names.index(n) < first_anon for n in named)
        sym_in = [f"{i.name} {oi.dims_of(i)}" for i in g.input
                  if any(isinstance(d, str) for d in oi.dims_of(i))]
        sym_out = [f"{o.name} {oi.dims_of(o)}" for o in g.output
                   if any(isinstance(d, str) for d in (oi.dims_of(o) or []))]
        print(f"| {e['file']} | {ok} | {'; '.join(sym_in) or '-'} | {'; '.join(sym_out) or '-'} |")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=HERE)
    opts = ap.parse_args()
    tied_section()
    shared_section()
    dedup_section()
    bn_section()
    lstm_section()
    order_section(opts.dir)


if __name__ == "__main__":
    main()
