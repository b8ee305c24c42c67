"""Side-by-side compiled comparison: per workload and round, `fusescope bench
--mode both` and the PyTorch peer in eager and torch.compile mode, alternating,
then the medians over rounds and the ratios the compiler issue asks for.
Benchmark only (PyTorch is never a build or test dependency).

usage: python3 compare_compiled.py FUSESCOPE_BINARY [--rounds R] [--repeat N] [--workload NAME]...
                                   [--python /opt/torchenv/bin/python] [--no-torch]
"""
import argparse
import os
import statistics
import sys

from compare_eager import run_json

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["pointwise", "softmax_ln", "mlp", "encoder", "resnet18", "llama_block"]


def measure(args, names, env):
    rows = {n: {"eager": [], "compiled": [], "compile_ms": [], "t_eager": [], "t_compiled": []} for n in names}
    machine = {}
    for _ in range(args.rounds):
        for n in names:
            doc = run_json([args.fusescope, "bench", "--workload", n, "--mode", "both", "--repeat", str(args.repeat),
                            "--json"], env)
            machine = doc.get("machine", machine)
            r = doc["workloads"][0]
            rows[n]["eager"].append(r["eager_ms"])
            rows[n]["compiled"].append(r["compiled_ms"])
            rows[n]["compile_ms"].append(r["compile_ms"])
            if args.no_torch:
                continue
            t = run_json([args.python, os.path.join(HERE, "torch_workloads.py"), "--workload", n, "--mode", "both",
                          "--repeat", str(args.repeat)], env)["workloads"][0]
            rows[n]["t_eager"].append(t["eager_ms"])
            rows[n]["t_compiled"].append(t["compiled_ms"])
    return rows, machine


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fusescope")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--workload", action="append")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    names = args.workload or NAMES
    env = dict(os.environ, FUSESCOPE_NUM_THREADS="2", OMP_NUM_THREADS="2")
    rows, machine = measure(args, names, env)
    # Compiled products by weights run on the AMX tiles where the CPU has them: say which ran.
    print(f"fusescope: {machine.get('cpu', '?')}, {machine.get('threads', '?')} threads, "
          f"AMX tiles {'yes' if machine.get('amx_tiles') else 'no'}; {machine.get('blas', '?')}")
    med = {n: {k: (statistics.median(v) if v else float("nan")) for k, v in r.items()} for n, r in rows.items()}
    print(f"{'workload':12} {'eager ms':>9} {'compiled ms':>12} {'speedup':>8} {'compile ms':>11}"
          f" {'torch eager':>12} {'torch.compile':>14} {'ours/torch eager':>17} {'ours/torch.compile':>19}")
    for n in names:
        m = med[n]
        print(f"{n:12} {m['eager']:9.2f} {m['compiled']:12.2f} {m['eager'] / m['compiled']:8.2f}"
              f" {m['compile_ms']:11.1f} {m['t_eager']:12.2f} {m['t_compiled']:14.2f}"
              f" {m['compiled'] / m['t_eager']:17.2f} {m['compiled'] / m['t_compiled']:19.2f}")


if __name__ == "__main__":
    main()
