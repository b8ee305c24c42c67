"""The standard workloads of DESIGN.md in PyTorch: the peer that Fusescope's
eager and compiled modes are measured against (benchmarks only; never a build
or test dependency). Prints one JSON document: median milliseconds per workload.

usage: python3 torch_workloads.py [--mode eager|compiled|both] [--repeat N] [--workload NAME]...
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Pointwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1024))
        self.b = nn.Parameter(torch.randn(1024))

    def forward(self, x):
        return F.gelu(x * self.w + self.b) * torch.sigmoid(x) + x


class SoftmaxLn(nn.Module):
    def forward(self, x):
        return F.layer_norm(torch.softmax(x, -1), (x.shape[-1],))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d=512, heads=8, hidden=1376, seq=256):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        b, s, d = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def workloads():
    import torchvision_free_resnet as resnet  # local module, see below
    return {
        "pointwise": (Pointwise(), [torch.randn(4096, 1024)]),
        "softmax_ln": (SoftmaxLn(), [torch.randn(8192, 512)]),
        "mlp": (nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                              nn.Linear(2048, 512)), [torch.randn(256, 512)]),
        "encoder": (nn.TransformerEncoderLayer(256, 4, 1024, activation="gelu", batch_first=True),
                    [torch.randn(8, 128, 256)]),
        "resnet18": (resnet.resnet18(), [torch.randn(4, 3, 224, 224)]),
        "llama_block": (LlamaBlock(), [torch.randn(2, 256, 512)]),
    }


def median_ms(fn, repeat):
    # Warm-up calls for at least 0.2 s, as Fusescope's medianMilliseconds.
    start = time.perf_counter()
    for _ in range(100):
        fn()
        if time.perf_counter() - start >= 0.2:
            break
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="eager", choices=["eager", "compiled", "both"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workload", action="append")
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    results = []
    for name, (model, inputs) in workloads().items():
        if args.workload and name not in args.workload:
            continue
        model.eval()
        row = {"name": name}
        with torch.no_grad():
            if args.mode in ("eager", "both"):
                row["eager_ms"] = median_ms(lambda: model(*inputs), args.repeat)
            if args.mode in ("compiled", "both"):
                compiled = torch.compile(model)
                t0 = time.perf_counter()
                compiled(*inputs)
                row["compile_s"] = time.perf_counter() - t0
                row["compiled_ms"] = median_ms(lambda: compiled(*inputs), args.repeat)
        results.append(row)
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "workloads": results},
                     indent=1))


if __name__ == "__main__":
    main()
