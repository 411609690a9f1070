#!/usr/bin/python3
"""Exports Tessera's training-mode ONNX test models: PyTorch models exported together with
their loss (torch.onnx.export(..., training=TrainingMode.TRAINING), the targets an input),
and two exports that end in logits for `tessera train --loss`.

Usage: /usr/bin/python3 tests/models/export_training_models.py [--out DIR]   (default: here)

Needs Debian's python3 with torch 1.13 and onnx 1.12; no network. As export_models.py:
export_params=False (parameters become graph inputs without data), torch.manual_seed(0),
dynamic batch axis 'batch'; and do_constant_folding=False, so that the parameters keep
PyTorch's names and layouts (folding would store the LSTM's gate-reordered weights and the
Linear's transposed weight as new, renamed inputs). Re-running gives byte-identical files. The C++ tests
(tests/onnx/onnx_loss_test.cc, tests/tools/train_onnx_loss_test.cc) rebuild each model with
Tessera's GraphBuilder and check that both train alike; tests/models/README.md lists the files.
"""
import argparse
import contextlib
import io
import os
import sys
import warnings

sys.dont_write_bytecode = True

import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 2


class MlpCrossEntropy(nn.Module):
    """x [B, 8] -> Linear 16 -> ReLU -> Linear 4 -> F.cross_entropy."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def logits(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

    def forward(self, x, target):
        return F.cross_entropy(self.logits(x), target)


class MlpLogits(MlpCrossEntropy):
    """The same MLP ending in its logits (for `tessera train --loss cross-entropy`)."""

    def forward(self, x):
        return self.logits(x)


class CnnBatchNormNll(nn.Module):
    """x [B, 1, 8, 8] -> Conv 4x3x3 (pad 1) -> BatchNorm -> ReLU -> MaxPool 2 -> Flatten ->
    Linear 3 -> log_softmax -> nll_loss (torch 1.13 fuses the pair into SoftmaxCrossEntropyLoss)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(64, 3)

    def forward(self, x, target):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return F.nll_loss(F.log_softmax(self.fc(h.flatten(1)), dim=1), target)


class LstmLanguageModel(nn.Module):
    """tokens [B, 6] -> Embedding 12x8 -> LSTM 16 (batch_first) -> Linear 12 -> cross_entropy
    over the logits reshaped to [B*6, 12] and the targets to [B*6]."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.out = nn.Linear(16, 12)

    def forward(self, tokens, target):
        h, _ = self.lstm(self.emb(tokens))
        return F.cross_entropy(self.out(h).reshape(-1, 12), target.reshape(-1))


class NllOfLogSoftmaxBySum(nn.Module):
    """log(softmax(.)) + nll_loss(reduction='sum'): Softmax -> Log -> NegativeLogLikelihoodLoss."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, target):
        return F.nll_loss(torch.log(torch.softmax(self.fc(x), dim=1)), target, reduction="sum")


class NllOfScores(nn.Module):
    """nll_loss straight on a Linear's output (not log-probabilities): -mean(score[target])."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, target):
        return F.nll_loss(self.fc(x), target)


class WeightedCrossEntropy(nn.Module):
    """cross_entropy with class weights: refused by the importer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.register_buffer("class_weight", torch.tensor([1.0, 2.0, 3.0, 4.0]))

    def forward(self, x, target):
        return F.cross_entropy(self.fc(x), target, weight=self.class_weight)


class CtcLogits(nn.Module):
    """x [T=8, B, 6] -> Linear 5 per frame: time-major logits for `tessera train --loss ctc`."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        return self.fc(x)


def vec(b):
    return (torch.randn(b, 8), torch.randint(0, 4, (b,)))


# file, module, example inputs, input names, opset, training export, batch axes
SPECS = [
    ("mlp_xent.onnx", MlpCrossEntropy, vec, ["x", "target"], 13, True, {"x": 0, "target": 0}),
    ("cnn_bn_nll.onnx", CnnBatchNormNll,
     lambda b: (torch.randn(b, 1, 8, 8), torch.randint(0, 3, (b,))), ["x", "target"], 14, True,
     {"x": 0, "target": 0}),
    ("lstm_lm_xent.onnx", LstmLanguageModel,
     lambda b: (torch.randint(0, 12, (b, 6)), torch.randint(0, 12, (b, 6))),
     ["tokens", "target"], 13, True, {"tokens": 0, "target": 0}),
    ("nll_log_softmax_sum.onnx", NllOfLogSoftmaxBySum, vec, ["x", "target"], 13, True,
     {"x": 0, "target": 0}),
    ("nll_scores.onnx", NllOfScores, vec, ["x", "target"], 13, True, {"x": 0, "target": 0}),
    ("xent_weighted.onnx", WeightedCrossEntropy, vec, ["x", "target"], 13, True,
     {"x": 0, "target": 0}),
    ("mlp_logits.onnx", MlpLogits, lambda b: (torch.randn(b, 8),), ["x"], 13, False, {"x": 0}),
    ("ctc_logits.onnx", CtcLogits, lambda b: (torch.randn(8, b, 6),), ["x"], 13, False, {"x": 1}),
]


def export(spec, out_dir):
    file, make, args, names, opset, training, batch_axes = spec
    torch.manual_seed(0)
    model = make()
    model.train(training)
    output = "loss" if training else "logits"
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    buf = io.BytesIO()
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args(BATCH), buf, export_params=False, opset_version=opset,
                          training=mode, do_constant_folding=False, input_names=names, output_names=[output],
                          dynamic_axes={n: {a: "batch"} for n, a in batch_axes.items()})
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    with open(os.path.join(out_dir, file), "wb") as f:
        f.write(buf.getvalue())
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{file}: opset {opset}, {len(proto.graph.node)} nodes, {len(buf.getvalue())} bytes, "
          f"ops {', '.join(ops)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=HERE)
    out_dir = parser.parse_args().out
    os.makedirs(out_dir, exist_ok=True)
    for spec in SPECS:
        export(spec, out_dir)


if __name__ == "__main__":
    main()
