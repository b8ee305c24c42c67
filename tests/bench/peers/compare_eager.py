"""Side-by-side eager comparison with PyTorch: alternates `fusescope bench`
and the PyTorch peer per workload, several rounds, and reports the median of
each and their ratio. Benchmark only.

usage: python3 compare_eager.py FUSESCOPE_BINARY [--rounds R] [--repeat N] [--workload NAME]...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fusescope")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workload", action="append")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    names = args.workload or ["pointwise", "softmax_ln", "mlp", "encoder", "resnet18", "llama_block"]
    ours = {n: [] for n in names}
    peer = {n: [] for n in names}
    env = dict(os.environ, FUSESCOPE_NUM_THREADS="2")
    for _ in range(args.rounds):
        for n in names:
            r = run_json([args.fusescope, "bench", "--workload", n, "--repeat", str(args.repeat), "--json"], env)
            ours[n].append(r["workloads"][0]["eager_ms"])
            t = run_json([args.python, os.path.join(HERE, "torch_workloads.py"), "--workload", n,
                          "--repeat", str(args.repeat)], env)
            peer[n].append(t["workloads"][0]["eager_ms"])
    print(f"{'workload':12} {'fusescope ms':>13} {'torch ms':>10} {'ratio':>7}")
    for n in names:
        a, b = statistics.median(ours[n]), statistics.median(peer[n])
        print(f"{n:12} {a:13.2f} {b:10.2f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
