"""PyTorch peer of tests/bench/bench_conv.cpp: the convolutions of resnet18
(batch 4, or --batch) one shape at a time, then the depthwise convolutions of MobileNet v2
and v3-small (batch 1), eager, 2 threads. Benchmark only.

usage: /opt/torchenv/bin/python torch_conv.py [--repeat N] [--batch B]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

SHAPES = [  # name, in, out, size, kernel, stride (as bench_conv.cpp)
    ("conv1 x1", 3, 64, 224, 7, 2), ("layer1 3x3 x4", 64, 64, 56, 3, 1),
    ("layer2.0 3x3/2 x1", 64, 128, 56, 3, 2), ("layer2 3x3 x3", 128, 128, 28, 3, 1),
    ("layer2 down 1x1/2", 64, 128, 56, 1, 2), ("layer3.0 3x3/2 x1", 128, 256, 28, 3, 2),
    ("layer3 3x3 x3", 256, 256, 14, 3, 1), ("layer3 down 1x1/2", 128, 256, 28, 1, 2),
    ("layer4.0 3x3/2 x1", 256, 512, 14, 3, 2), ("layer4 3x3 x3", 512, 512, 7, 3, 1),
    ("layer4 down 1x1/2", 256, 512, 14, 1, 2),
]

DEPTHWISE = [  # name, channels, size, kernel, stride (as bench_conv.cpp)
    ("v2 32@112 3x3", 32, 112, 3, 1), ("v2 96@112 3x3/2", 96, 112, 3, 2), ("v2 144@56 3x3", 144, 56, 3, 1),
    ("v2 192@28 3x3", 192, 28, 3, 1), ("v2 384@14 3x3", 384, 14, 3, 1), ("v2 960@7 3x3", 960, 7, 3, 1),
    ("v3s 16@112 3x3/2", 16, 112, 3, 2), ("v3s 96@28 5x5/2", 96, 28, 5, 2), ("v3s 240@14 5x5", 240, 14, 5, 1),
    ("v3s 576@7 5x5", 576, 7, 5, 1),
]


def median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--batch", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(2)
    print(f"{'conv':20} {'torch ms':>9}  (batch {args.batch})")
    with torch.no_grad():
        for name, c, o, hw, k, s in SHAPES:
            x, w = torch.randn(args.batch, c, hw, hw), torch.randn(o, c, k, k)
            best = min(median_ms(lambda: F.conv2d(x, w, None, s, (k - 1) // 2), args.repeat) for _ in range(3))
            print(f"{name:20} {best:9.3f}")
        print(f"\n{'depthwise (batch 1)':20} {'torch ms':>9}")
        for name, c, hw, k, s in DEPTHWISE:
            x, w = torch.randn(1, c, hw, hw), torch.randn(c, 1, k, k)
            best = min(median_ms(lambda: F.conv2d(x, w, None, s, (k - 1) // 2, 1, c), args.repeat) for _ in range(3))
            print(f"{name:20} {best:9.4f}")


if __name__ == "__main__":
    main()
