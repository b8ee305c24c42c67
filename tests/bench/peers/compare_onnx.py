"""Side-by-side ONNX comparison on exported models (onnx_export.py's folders):
per model and round, `fusescope run model.onnx --input-dir … --json` eager and
compiled, ONNX Runtime (CPU, 2 intra-op threads, all graph optimizations) and
PyTorch eager, alternating; then the medians and the ratios the ONNX issue asks
for, and whether our outputs match PyTorch's (rtol 1e-3). Benchmark only.

usage: python compare_onnx.py FUSESCOPE_BINARY MODELS_DIR [--rounds R] [--repeat N] [--model NAME]...
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx.numpy_helper
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_eager import run_json  # noqa: E402
from torch_workloads import median_ms  # noqa: E402


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(t)


def ort_ms(folder, x, repeat):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(os.path.join(folder, "model.onnx"), so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    return median_ms(lambda: s.run(None, {name: x}), repeat)


def torch_ms(name, x, repeat):
    import torch
    from onnx_export import build
    torch.set_num_threads(2)
    model, _ = build(name)
    model.eval()
    xt = torch.from_numpy(x)
    with torch.no_grad():
        return median_ms(lambda: model(xt), repeat)


def ours(args, folder, compiled, env):
    data = os.path.join(folder, "test_data_set_0")
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.fusescope, "run", os.path.join(folder, "model.onnx"), "--input-dir", data, "--output-dir", out,
               "--repeat", str(args.repeat), "--json"] + (["--compile"] if compiled else [])
        r = run_json(cmd, env)
        got = read_tensor(os.path.join(out, "output_0.pb"))
    want = read_tensor(os.path.join(data, "output_0.pb"))
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-4)
    return r["median_ms"], ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fusescope")
    ap.add_argument("models")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--model", action="append")
    args = ap.parse_args()
    names = args.model or sorted(os.listdir(args.models))
    env = dict(os.environ, FUSESCOPE_NUM_THREADS="2")
    rows = {n: {"eager": [], "compiled": [], "ort": [], "torch": [], "ok": True} for n in names}
    for _ in range(args.rounds):
        for n in names:
            folder = os.path.join(args.models, n)
            x = read_tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"))
            for mode in ("eager", "compiled"):
                ms, ok = ours(args, folder, mode == "compiled", env)
                rows[n][mode].append(ms)
                rows[n]["ok"] = rows[n]["ok"] and ok
            rows[n]["ort"].append(ort_ms(folder, x, args.repeat))
            rows[n]["torch"].append(torch_ms(n, x, args.repeat))
    print(f"{'model':20s} {'torch':>9s} {'ORT':>9s} {'eager':>9s} {'compiled':>9s} {'c/ORT':>7s} {'c/torch':>8s}  match")
    for n in names:
        m = {k: statistics.median(v) for k, v in rows[n].items() if k != "ok"}
        print(f"{n:20s} {m['torch']:9.2f} {m['ort']:9.2f} {m['eager']:9.2f} {m['compiled']:9.2f} "
              f"{m['compiled'] / m['ort']:7.2f} {m['compiled'] / m['torch']:8.2f}  {'yes' if rows[n]['ok'] else 'NO'}")


if __name__ == "__main__":
    sys.exit(main())
