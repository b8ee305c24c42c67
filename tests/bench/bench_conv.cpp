// The convolutions of resnet18 (batch 4) one shape at a time through
// ops::conv2d, each beside a plain cblas_sgemm of the same GEMM size
// (what im2col, packing and the batch loop cost on top of BLAS). The PyTorch
// peer for the same shapes is tests/bench/peers/torch_conv.py.
//
// usage: bench_conv [REPEAT]
#include "benchutil.h"

#include "core/ops/conv.h"
#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cblas.h>

#include <cstdlib>

using namespace fusescope;

namespace {

struct ConvShape {
    const char *name;
    int64_t c, o, hw, k, stride;
};

// Every distinct conv of resnet18 at 224x224 (the count is per forward).
constexpr ConvShape kShapes[] = {
    {"conv1 x1", 3, 64, 224, 7, 2},      {"layer1 3x3 x4", 64, 64, 56, 3, 1},
    {"layer2.0 3x3/2 x1", 64, 128, 56, 3, 2}, {"layer2 3x3 x3", 128, 128, 28, 3, 1},
    {"layer2 down 1x1/2", 64, 128, 56, 1, 2}, {"layer3.0 3x3/2 x1", 128, 256, 28, 3, 2},
    {"layer3 3x3 x3", 256, 256, 14, 3, 1},   {"layer3 down 1x1/2", 128, 256, 28, 1, 2},
    {"layer4.0 3x3/2 x1", 256, 512, 14, 3, 2}, {"layer4 3x3 x3", 512, 512, 7, 3, 1},
    {"layer4 down 1x1/2", 256, 512, 14, 1, 2},
};

constexpr int64_t kBatch = 4;

} // namespace

int main(int argc, char **argv)
{
    fixBlasCoreDetection(argv);
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 10;
    Generator gen(1);
    numThreads();
    std::printf("%-20s %9s %9s %9s %7s\n", "conv", "conv ms", "gemm ms", "GFLOP/s", "ratio");
    for (const ConvShape &s : kShapes) {
        const Tensor x = randn({kBatch, s.c, s.hw, s.hw}, gen), w = randn({s.o, s.c, s.k, s.k}, gen);
        const int64_t pad = (s.k - 1) / 2, out = (s.hw + 2 * pad - s.k) / s.stride + 1;
        const int64_t m = s.o, n = kBatch * out * out, k = s.c * s.k * s.k;
        const Tensor a = randn({m, k}, gen), b = randn({k, n}, gen);
        Tensor c = Tensor::empty({m, n});
        auto conv = [&] { (void)ops::conv2d(x, w, std::nullopt, {s.stride}, {pad}); };
        auto gemm = [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.f, a.data<float>(),
                        int(k), b.data<float>(), int(n), 0.f, c.data<float>(), int(n));
        };
        double tc = 1e30, tg = 1e30;
        for (int round = 0; round < 3; ++round) {
            tc = std::min(tc, bench::medianSeconds(repeat, conv));
            tg = std::min(tg, bench::medianSeconds(repeat, gemm));
        }
        const double flops = 2.0 * double(m * n * k);
        std::printf("%-20s %9.3f %9.3f %9.1f %7.2f\n", s.name, tc * 1e3, tg * 1e3, flops / tc / 1e9, tc / tg);
    }
    return 0;
}
