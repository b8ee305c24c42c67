"""PyTorch peer of tests/bench/bench_pointwise_chain.cpp: the six eager ops of
the `pointwise` workload (y = gelu(x*w+b)*sigmoid(x)+x, x [4096,1024] f32) one
at a time and as the chain, median ms each, eager, 2 threads. Benchmark only.

usage: /opt/torchenv/bin/python torch_pointwise_chain.py [REPEAT]
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def median_ms(repeat, fn):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4096, 1024, generator=gen)
    w = torch.randn(1024, generator=gen)
    b = torch.randn(1024, generator=gen)
    y = x * w
    h = F.gelu(y)
    s = torch.sigmoid(x)
    cases = [
        ("mul_bcast", lambda: x * w),
        ("add_bcast", lambda: y + b),
        ("gelu", lambda: F.gelu(y)),
        ("sigmoid", lambda: torch.sigmoid(x)),
        ("mul", lambda: h * s),
        ("add", lambda: h + x),
        ("total", lambda: F.gelu(x * w + b) * torch.sigmoid(x) + x),
    ]
    with torch.no_grad():
        for name, fn in cases:
            print(f"{name:<10} {median_ms(repeat, fn):.3f} ms")


if __name__ == "__main__":
    main()
