"""Exports real models with torch.onnx (the TorchScript exporter, opset 17)
into ONNX test-folder layout, for the ONNX comparison and the conformance
runner (FUSESCOPE_ONNX_TEST_DIR=OUT): OUT/<name>/model.onnx and
OUT/<name>/test_data_set_0/{input_0.pb, output_0.pb} holding PyTorch's output.
Benchmark only: needs torch, torchvision and onnx in the Python environment.

usage: python onnx_export.py OUT [--model NAME]... [--opset 17]
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = ["mlp", "encoder", "gpt_block", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
          "shufflenet_v2_x1_0", "squeezenet1_1", "densenet121", "regnet_x_400mf"]


def heads(z, b, t, h):
    return z.view(b, t, h, -1).transpose(1, 2)


class EncoderLayer(nn.Module):
    """nn.TransformerEncoderLayer(256, 4, 1024, activation='gelu', batch_first=True) in eval, written out:
    torch's own layer does not export with the TorchScript exporter of this torch version."""

    def __init__(self, d=256, h=4, ffn=1024):
        super().__init__()
        self.h = h
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.linear1, self.linear2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (heads(z, b, t, self.h) for z in self.qkv(x).split(d, dim=-1))
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // self.h) ** 0.5, dim=-1) @ v
        x = self.norm1(x + self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return self.norm2(x + self.linear2(F.gelu(self.linear1(x))))


class GptBlock(nn.Module):
    """Pre-norm GPT block: causal self-attention and a GELU MLP (d=512, 8 heads)."""

    def __init__(self, d=512, heads=8):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (heads(z, b, t, self.heads) for z in self.qkv(self.ln1(x)).split(d, dim=-1))
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        s = (q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5).masked_fill(~mask, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def build(name):
    torch.manual_seed(0)
    if name == "mlp":
        m = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 512))
        return m, torch.randn(256, 512)
    if name == "encoder":
        return EncoderLayer(), torch.randn(8, 128, 256)
    if name == "gpt_block":
        return GptBlock(), torch.randn(2, 256, 512)
    import torchvision
    return getattr(torchvision.models, name)(weights=None), torch.randn(1, 3, 224, 224)


def write_tensor(path, array):
    import onnx.numpy_helper
    with open(path, "wb") as f:
        f.write(onnx.numpy_helper.from_array(array).SerializeToString())


def export(name, out, opset):
    model, x = build(name)
    model.eval()
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), opset_version=opset, dynamo=False,
                          input_names=["input"], output_names=["output"])
    write_tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"), x.numpy())
    write_tensor(os.path.join(folder, "test_data_set_0", "output_0.pb"), y.numpy())
    print(f"{name}: {folder}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--model", action="append")
    ap.add_argument("--opset", type=int, default=17)
    args = ap.parse_args()
    for name in args.model or MODELS:
        export(name, args.out, args.opset)


if __name__ == "__main__":
    sys.exit(main())
