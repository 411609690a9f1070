"""Hand-written PyTorch modules exported as Tessera's ONNX test models.

Every functional op that costs FLOPs (matmul, residual add, scaling, masking)
is wrapped in a tiny nn.Module so that flops.py can count it from a forward
hook; the wrappers export to exactly the same ONNX ops as the bare functions.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F
import torchvision


# ---------------------------------------------------------------- wrappers
class MatMul(nn.Module):
    """torch.matmul(a, b); counted as 2 * prod(out) * K."""

    def forward(self, a, b):
        return torch.matmul(a, b)


class BMM(nn.Module):
    """torch.bmm(a, b); counted as 2 * batch * M * K * N."""

    def forward(self, a, b):
        return torch.bmm(a, b)


class Add(nn.Module):
    """Element-wise a + b (residual / position add); 1 FLOP per output element."""

    def forward(self, a, b):
        return a + b


class Scale(nn.Module):
    """x * constant; 1 FLOP per output element."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


class CausalMask(nn.Module):
    """Fills the upper triangle of (..., T, T) scores with -inf (Range/Greater/Where
    in ONNX, works with a dynamic T); 1 FLOP per output element."""

    def forward(self, scores):
        t = scores.size(-1)
        idx = torch.arange(t, device=scores.device)
        mask = idx.unsqueeze(0) > idx.unsqueeze(1)
        return scores.masked_fill(mask, float("-inf"))


class AddMM(nn.Module):
    """torch.addmm(bias, A, B) with optional transposes of either operand.

    trans_a: the data input arrives feature-major (K, M) and is transposed;
    trans_b: the weight is stored (N, K) and is transposed. The exporter folds
    both transposes into Gemm's transA / transB attributes.
    """

    def __init__(self, k, n, trans_a=False, trans_b=False):
        super().__init__()
        self.trans_a, self.trans_b = trans_a, trans_b
        self.weight = nn.Parameter(torch.randn(n, k) if trans_b else torch.randn(k, n))
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, a):
        a = a.t() if self.trans_a else a
        w = self.weight.t() if self.trans_b else self.weight
        return torch.addmm(self.bias, a, w)


# ---------------------------------------------------------------- torchvision, legacy flatten
class AlexNetViewFlatten(torchvision.models.AlexNet):
    """torchvision AlexNet (same modules and parameter names) flattening with
    x.view(x.size(0), -1) as torchvision <= 0.2 did, instead of torch.flatten(x, 1).
    With a dynamic batch this exports as Shape/Gather/Unsqueeze/Concat/Reshape
    rather than a single Flatten node."""

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.view(x.size(0), -1))


class ResNet50ViewFlatten(torchvision.models.ResNet):
    """torchvision resnet50(weights=None) with the same legacy view-flatten."""

    def __init__(self):
        super().__init__(torchvision.models.resnet.Bottleneck, [3, 4, 6, 3])

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        return self.fc(x.view(x.size(0), -1))


# ---------------------------------------------------------------- seq2seq (GNMT-like)
class Seq2SeqLSTM(nn.Module):
    """GNMT-like encoder-decoder, seq-first (batch_first=False): tokens are (T, B)."""

    def __init__(self, src_vocab=32000, tgt_vocab=32000, embed=256, hidden=256):
        super().__init__()
        self.src_embed = nn.Embedding(src_vocab, embed)
        self.encoder = nn.LSTM(embed, hidden, num_layers=2, bidirectional=True)
        self.enc_proj = nn.Linear(2 * hidden, hidden)  # bidirectional memory -> keys/values
        self.tgt_embed = nn.Embedding(tgt_vocab, embed)
        self.decoder = nn.LSTM(embed, hidden, num_layers=2)
        self.score = BMM()  # Luong dot attention: (B,T,H) x (B,H,S)
        self.softmax = nn.Softmax(dim=-1)
        self.context = BMM()  # (B,T,S) x (B,S,H)
        self.attn_out = nn.Linear(2 * hidden, hidden)
        self.attn_act = nn.Tanh()
        self.generator = nn.Linear(hidden, tgt_vocab)
        self.log_softmax = nn.LogSoftmax(dim=-1)

    def forward(self, src, tgt):
        enc, _ = self.encoder(self.src_embed(src))  # (S, B, 2H)
        memory = self.enc_proj(enc).transpose(0, 1)  # (B, S, H)
        dec, _ = self.decoder(self.tgt_embed(tgt))  # (T, B, H)
        dec = dec.transpose(0, 1)  # (B, T, H)
        attn = self.softmax(self.score(dec, memory.transpose(1, 2)))  # (B, T, S)
        ctx = self.context(attn, memory)  # (B, T, H)
        h = self.attn_act(self.attn_out(torch.cat([ctx, dec], dim=-1)))
        return self.log_softmax(self.generator(h))  # (B, T, V)


# ---------------------------------------------------------------- CRNN (OCR)
def _conv_block(cin, cout, k=3, p=1, bn=False):
    layers = [nn.Conv2d(cin, cout, k, 1, p, bias=not bn)]
    if bn:
        layers.append(nn.BatchNorm2d(cout))
    layers.append(nn.ReLU(inplace=True))
    return layers


class CRNN(nn.Module):
    """Shi et al. CRNN: 1x32x100 image -> 26 time steps x 37 classes (log-probs), seq-first."""

    def __init__(self, num_classes=37, hidden=256):
        super().__init__()
        self.cnn = nn.Sequential(
            *_conv_block(1, 64), nn.MaxPool2d(2, 2),  # 64 x 16 x 50
            *_conv_block(64, 128), nn.MaxPool2d(2, 2),  # 128 x 8 x 25
            *_conv_block(128, 256, bn=True),
            *_conv_block(256, 256), nn.MaxPool2d((2, 2), (2, 1), (0, 1)),  # 256 x 4 x 26
            *_conv_block(256, 512, bn=True),
            *_conv_block(512, 512), nn.MaxPool2d((2, 2), (2, 1), (0, 1)),  # 512 x 2 x 27
            *_conv_block(512, 512, k=2, p=0, bn=True),  # 512 x 1 x 26
        )
        self.rnn = nn.LSTM(512, hidden, num_layers=2, bidirectional=True)
        self.classifier = nn.Linear(2 * hidden, num_classes)
        self.log_softmax = nn.LogSoftmax(dim=-1)

    def forward(self, image):
        feat = self.cnn(image).squeeze(2)  # (B, 512, 26)
        seq = feat.permute(2, 0, 1)  # (26, B, 512)
        out, _ = self.rnn(seq)
        return self.log_softmax(self.classifier(out))  # (26, B, 37)


# ---------------------------------------------------------------- GPT-like LM
class SelfAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.scores = MatMul()
        self.scale = Scale(1.0 / math.sqrt(self.d_head))
        self.mask = CausalMask()
        self.softmax = nn.Softmax(dim=-1)
        self.mix = MatMul()
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.reshape(b, t, self.heads, self.d_head).transpose(1, 2)  # (B, h, T, dh)
        k = k.reshape(b, t, self.heads, self.d_head).transpose(1, 2)
        v = v.reshape(b, t, self.heads, self.d_head).transpose(1, 2)
        att = self.softmax(self.mask(self.scale(self.scores(q, k.transpose(-2, -1)))))
        y = self.mix(att, v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads)
        self.add1 = Add()
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.add2 = Add()

    def forward(self, x):
        x = self.add1(x, self.attn(self.ln1(x)))
        return self.add2(x, self.mlp(self.ln2(x)))


class TransformerLM(nn.Module):
    """Pre-LN GPT: tokens (B, T) int64 -> logits (B, T, vocab)."""

    def __init__(self, vocab=10000, d_model=256, heads=4, layers=4, max_len=128):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.add_pos = Add()
        self.blocks = nn.Sequential(*[Block(d_model, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        pos = torch.arange(tokens.size(1), device=tokens.device)
        x = self.add_pos(self.tok_emb(tokens), self.pos_emb(pos))
        return self.head(self.ln_f(self.blocks(x)))


# ---------------------------------------------------------------- unit-test models
class TiedEmbeddingLM(nn.Module):
    """Output projection weight IS the input embedding (one nn.Parameter, used twice)."""

    def __init__(self, vocab=1000, d=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.hidden = nn.Linear(d, d)
        self.act = nn.Tanh()
        self.out = nn.Linear(d, vocab)
        self.out.weight = self.emb.weight  # tie
        self.log_softmax = nn.LogSoftmax(dim=-1)

    def forward(self, tokens):  # (B, T) -> (B, T, vocab)
        return self.log_softmax(self.out(self.act(self.hidden(self.emb(tokens)))))


class SharedLinear(nn.Module):
    """fc2d applied twice to a rank-2 input (exports as two Gemm on one weight input),
    fc3d applied twice to a rank-3 input (exports as MatMul on a folded transposed weight)."""

    def __init__(self, d=32):
        super().__init__()
        self.fc2d = nn.Linear(d, d)
        self.fc3d = nn.Linear(d, d)
        self.act = nn.ReLU()

    def forward(self, x, seq):  # x (B, d), seq (B, T, d)
        return self.fc2d(self.act(self.fc2d(x))), self.fc3d(self.act(self.fc3d(seq)))


class GemmTrans(nn.Module):
    """Gemm with transB (nn.Linear, addmm with w.t()), transA (addmm with x.t()),
    both, plus broadcasting MatMul: rank-3 @ rank-2, rank-4 @ rank-4 and
    rank-4 @ rank-4 with a broadcast batch dimension."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(32, 24)  # Gemm transB=1
        self.gemm_tb = AddMM(24, 16, trans_b=True)  # Gemm transB=1 from w.t()
        self.gemm_ta = AddMM(32, 16, trans_a=True)  # Gemm transA=1 from xt.t()
        self.gemm_tab = AddMM(32, 8, trans_a=True, trans_b=True)  # transA=1, transB=1
        self.w3 = nn.Parameter(torch.randn(32, 24))
        self.mm3 = MatMul()  # (B, T, 32) @ (32, 24)
        self.mm4 = MatMul()  # (B, 4, 6, 8) @ (B, 4, 8, 6)
        self.w4 = nn.Parameter(torch.randn(1, 4, 8, 5))
        self.mm4b = MatMul()  # (B, 4, 6, 8) @ (1, 4, 8, 5)

    def forward(self, x, xt, seq, q, k):
        y1 = self.gemm_tb(self.linear(x))
        y2 = self.gemm_ta(xt)
        y3 = self.gemm_tab(xt)
        y4 = self.mm3(seq, self.w3)
        y5 = self.mm4(q, k.transpose(-2, -1))
        y6 = self.mm4b(q, self.w4)
        return y1, y2, y3, y4, y5, y6


class ConvVariants(nn.Module):
    """Grouped, depthwise, dilated+strided+padded Conv2d, a (1,3) conv, padded
    AvgPool/MaxPool, and a strided Conv1d with a MaxPool1d."""

    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(8, 16, 3, padding=1, groups=4)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
        self.dilated = nn.Conv2d(16, 32, 3, stride=2, padding=2, dilation=2)
        self.avg = nn.AvgPool2d(3, stride=2, padding=1)  # count_include_pad=True
        self.max = nn.MaxPool2d(3, stride=2, padding=1)
        self.add = Add()
        self.rect = nn.Conv2d(32, 8, (1, 3), padding=(0, 1))
        self.conv1d = nn.Conv1d(4, 8, 5, stride=2, padding=2)
        self.pool1d = nn.MaxPool1d(2)
        self.act = nn.ReLU()

    def forward(self, img, sig):  # img (B, 8, 32, 32), sig (B, 4, 50)
        x = self.act(self.depthwise(self.act(self.grouped(img))))
        x = self.act(self.dilated(x))  # (B, 32, 16, 16)
        x = self.rect(self.add(self.avg(x), self.max(x)))  # (B, 8, 8, 8)
        return x, self.pool1d(self.act(self.conv1d(sig)))  # (B, 8, 12)


class Unsupported(nn.Module):
    """Ops a training-graph importer should reject: GridSample, TopK, Det, NonZero."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 9)

    def forward(self, img, grid):  # img (B, 3, 8, 8), grid (B, 8, 8, 2)
        x = F.grid_sample(self.conv(img), grid, align_corners=False)
        logits = self.fc(x.flatten(1))  # (B, 9)
        top_values, top_index = torch.topk(logits, 3, dim=-1)
        det = torch.det(logits.reshape(-1, 3, 3))  # (B,)
        nz = torch.nonzero(logits > 0)  # (n, 2), data-dependent n
        return top_values, top_index, det, nz


class LSTMStates(nn.Module):
    """2-layer bidirectional seq-first nn.LSTM with explicit (h0, c0) inputs."""

    def __init__(self, inp=16, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, num_layers=2, bidirectional=True)

    def forward(self, x, h0, c0):  # x (T, B, I), h0/c0 (4, B, H)
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return out, hn, cn


class DefaultQuirks(nn.Module):
    """Small CNN + LayerNorm MLP left at PyTorch's default initialisation and
    exported with torch's default settings: shows Conv+BN fusion and the
    value-based deduplication of equal parameters (Identity aliases)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.act = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.ln1 = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 8)
        self.ln2 = nn.LayerNorm(8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, img):  # (B, 3, 16, 16)
        x = self.act(self.bn1(self.conv1(img)))
        x = self.act(self.bn2(self.conv2(x)))
        x = self.pool(x).flatten(1)
        return self.fc2(self.ln2(self.act(self.fc1(self.ln1(x)))))
