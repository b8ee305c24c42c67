// The convolutions of resnet18 (batch 4, or BATCH) one shape at a time through
// ops::conv2d, each beside a plain cblas_sgemm of the same GEMM size
// (what im2col, packing and the batch loop cost on top of BLAS), its stride-1
// 3x3 convolutions with Winograd weights transformed beforehand (as compiled
// code runs them; at BATCH and at 1), then 3-channel stems, the 1x1 and depthwise convolutions of
// MobileNet v2 (and v3-small's depthwise ones; batch 1), the 3x3/2 max pools of
// SqueezeNet, ResNet and ShuffleNet, RegNetX-400MF's grouped convolutions, the
// 1x1 convolutions of RegNetX-400MF and MobileNet v3-small with weights of
// their own per call, and SqueezeNet 1.1's convolutions as compiled code runs
// them. The PyTorch peer for the same shapes is tests/bench/peers/torch_conv.py.
//
// usage: bench_conv [REPEAT] [BATCH]
#include "benchutil.h"

#include "core/ops/conv.h"
#include "core/ops/registry.h"
#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cblas.h>

#include <cstdlib>
#include <span>
#include <utility>

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


struct DepthwiseShape {
    const char *name;
    int64_t c, hw, k, stride;
};

constexpr DepthwiseShape kDepthwise[] = {
    {"v2 32@112 3x3", 32, 112, 3, 1},   {"v2 96@112 3x3/2", 96, 112, 3, 2}, {"v2 144@56 3x3", 144, 56, 3, 1},
    {"v2 192@28 3x3", 192, 28, 3, 1},   {"v2 384@14 3x3", 384, 14, 3, 1},  {"v2 960@7 3x3", 960, 7, 3, 1},
    {"v3s 16@112 3x3/2", 16, 112, 3, 2}, {"v3s 96@28 5x5/2", 96, 28, 5, 2}, {"v3s 240@14 5x5", 240, 14, 5, 1},
    {"v3s 576@7 5x5", 576, 7, 5, 1},
};

void benchDepthwise(Generator &gen, int repeat)
{
    std::printf("\n%-20s %9s %9s\n", "depthwise (batch 1)", "conv ms", "GFLOP/s");
    for (const DepthwiseShape &s : kDepthwise) {
        const Tensor x = randn({1, s.c, s.hw, s.hw}, gen), w = randn({s.c, 1, s.k, s.k}, gen);
        const int64_t pad = (s.k - 1) / 2, out = (s.hw + 2 * pad - s.k) / s.stride + 1;
        double t = 1e30;
        for (int round = 0; round < 3; ++round)
            t = std::min(t, bench::medianSeconds(repeat, [&] {
                (void)ops::conv2d(x, w, std::nullopt, {s.stride}, {pad}, {1}, s.c);
            }));
        const double flops = 2.0 * double(s.c * out * out * s.k * s.k);
        std::printf("%-20s %9.4f %9.2f\n", s.name, t * 1e3, flops / t / 1e9);
    }
}

// The 3x3 stride-2 max pools of SqueezeNet 1.1 (ceil mode), ResNet and
// ShuffleNet v2 (batch 1), with the bytes read and written per second.
struct PoolShape {
    const char *name;
    int64_t c, hw, pad;
    bool ceil;
};

constexpr PoolShape kPools[] = {
    {"squeezenet 64@111", 64, 111, 0, true}, {"squeezenet 128@55", 128, 55, 0, true},
    {"squeezenet 256@27", 256, 27, 0, true}, {"resnet 64@112", 64, 112, 1, false},
    {"shufflenet 24@112", 24, 112, 1, false},
};

void benchPools(Generator &gen, int repeat)
{
    std::printf("\n%-20s %9s %9s\n", "max pool 3x3/2", "pool ms", "GB/s");
    for (const PoolShape &s : kPools) {
        const Tensor x = randn({1, s.c, s.hw, s.hw}, gen);
        const Tensor y = ops::maxPool2d(x, {3, 3}, {2, 2}, {s.pad, s.pad}, {1, 1}, s.ceil);
        double t = 1e30;
        for (int round = 0; round < 3; ++round)
            t = std::min(t, bench::medianSeconds(repeat, [&] {
                (void)ops::maxPool2d(x, {3, 3}, {2, 2}, {s.pad, s.pad}, {1, 1}, s.ceil);
            }));
        std::printf("%-20s %9.4f %9.2f\n", s.name, t * 1e3, double(x.nbytes() + y.nbytes()) / t / 1e9);
    }
}

// MobileNet v2's 1x1 convolutions (batch 1): short K or short N, where
// Stems on 3 input channels (MobileNet v2/v3, EfficientNet, RegNet, ShuffleNet,
// SqueezeNet's width): a column matrix 27 deep, through the 1x1 register
// blocks where the CPU has AVX-512.
constexpr ConvShape kStems[] = {
    {"stem 3>64 3x3/2", 3, 64, 224, 3, 2}, {"stem 3>32 3x3/2", 3, 32, 224, 3, 2},
    {"stem 3>24 3x3/2", 3, 24, 224, 3, 2}, {"stem 3>16 3x3/2", 3, 16, 224, 3, 2},
};

// BLAS runs far below its square-matrix rate.
constexpr ConvShape kPointwiseV2[] = {
    {"v2 1x1 32>16@112", 32, 16, 112, 1, 1},   {"v2 1x1 16>96@112", 16, 96, 112, 1, 1},
    {"v2 1x1 96>24@56", 96, 24, 56, 1, 1},     {"v2 1x1 24>144@56", 24, 144, 56, 1, 1},
    {"v2 1x1 144>32@28", 144, 32, 28, 1, 1},   {"v2 1x1 32>192@28", 32, 192, 28, 1, 1},
    {"v2 1x1 192>64@14", 192, 64, 14, 1, 1},   {"v2 1x1 64>384@14", 64, 384, 14, 1, 1},
    {"v2 1x1 384>64@14", 384, 64, 14, 1, 1},   {"v2 1x1 576>160@7", 576, 160, 7, 1, 1},
    {"v2 1x1 160>960@7", 160, 960, 7, 1, 1},   {"v2 1x1 960>160@7", 960, 160, 7, 1, 1},
    {"v2 1x1 320>1280@7", 320, 1280, 7, 1, 1},
};

// Best medians of `conv` and of one cblas_sgemm of the convolution's GEMM size
// (m x k by k x n), alternated so both see the same load.
template <typename Conv>
std::pair<double, double> convAndGemmSeconds(Generator &gen, int repeat, int64_t m, int64_t n, int64_t k, Conv &&conv)
{
    const Tensor a = randn({m, k}, gen), b = randn({k, n}, gen);
    Tensor c = Tensor::empty({m, n});
    auto gemm = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.f, a.data<float>(), int(k),
                    b.data<float>(), int(n), 0.f, c.data<float>(), int(n));
    };
    double tc = 1e30, tg = 1e30;
    for (int round = 0; round < 3; ++round) {
        tc = std::min(tc, bench::medianSeconds(repeat, conv));
        tg = std::min(tg, bench::medianSeconds(repeat, gemm));
    }
    return {tc, tg};
}

void benchConvs(Generator &gen, int repeat, int64_t batch, std::span<const ConvShape> shapes)
{
    for (const ConvShape &s : shapes) {
        const Tensor x = randn({batch, s.c, s.hw, s.hw}, gen), w = randn({s.o, s.c, s.k, s.k}, gen);
        const int64_t pad = (s.k - 1) / 2, out = (s.hw + 2 * pad - s.k) / s.stride + 1;
        const int64_t m = s.o, n = batch * out * out, k = s.c * s.k * s.k;
        const auto [tc, tg] = convAndGemmSeconds(gen, repeat, m, n, k, [&] {
            (void)ops::conv2d(x, w, std::nullopt, {s.stride}, {pad});
        });
        const double flops = 2.0 * double(m * n * k);
        std::printf("%-20s %9.3f %9.3f %9.1f %7.2f\n", s.name, tc * 1e3, tg * 1e3, flops / tc / 1e9, tc / tg);
    }
}

// The stride-1 3x3 convolutions as the compiler runs them when their weights
// are transformed at compile time (fusescope.conv2d_winograd), beside what
// aten.conv2d picks with its per-call transform, and the transform alone.
void benchPretransformed(Generator &gen, int repeat, int64_t batch)
{
    std::printf("\n%-20s %9s %9s %9s %7s %9s %7s  (batch %lld)\n", "3x3 stride 1", "conv2d", "F(2x2)", "transform",
                "ratio", "F(4x4)", "ratio", static_cast<long long>(batch));
    for (const ConvShape &s : kShapes) {
        if (s.k != 3 || s.stride != 1)
            continue;
        const Tensor x = randn({batch, s.c, s.hw, s.hw}, gen), w = randn({s.o, s.c, 3, 3}, gen);
        const Tensor u = callOp1("fusescope.winograd_weights", {w});
        const Tensor u4 = callOp1("fusescope.winograd_weights", {w, int64_t(4)});
        auto conv = [&] { (void)ops::conv2d(x, w, std::nullopt, {1}, {1}); };
        auto pre = [&] { (void)callOp1("fusescope.conv2d_winograd", {x, u, Value(), IntList{1, 1}}); };
        auto pre4 = [&] { (void)callOp1("fusescope.conv2d_winograd", {x, u4, Value(), IntList{1, 1}}); };
        auto transform = [&] { (void)callOp1("fusescope.winograd_weights", {w}); };
        double tc = 1e30, tp = 1e30, tt = 1e30, t4 = 1e30;
        for (int round = 0; round < 3; ++round) { // alternating, so all see the same load
            tc = std::min(tc, bench::medianSeconds(repeat, conv));
            tp = std::min(tp, bench::medianSeconds(repeat, pre));
            tt = std::min(tt, bench::medianSeconds(repeat, transform));
            t4 = std::min(t4, bench::medianSeconds(repeat, pre4));
        }
        std::printf("%-20s %9.3f %9.3f %9.3f %7.2f %9.3f %7.2f\n", s.name, tc * 1e3, tp * 1e3, tt * 1e3, tp / tc,
                    t4 * 1e3, t4 / tc);
    }
}

// RegNetX-400MF's grouped 3x3 convolutions (16 channels per group), batch 1,
// with how many times each runs per forward.
struct GroupedShape {
    const char *name;
    int64_t c, hw, stride, count;
};

constexpr GroupedShape kGrouped[] = {
    {"32@112/2 g2", 32, 112, 2, 1},   {"64@56/2 g4", 64, 56, 2, 1},     {"64@28 g4", 64, 28, 1, 1},
    {"160@28/2 g10", 160, 28, 2, 1}, {"160@14 g10", 160, 14, 1, 6},   {"400@14/2 g25", 400, 14, 2, 1},
    {"400@7 g25", 400, 7, 1, 11},
};

void benchGrouped(Generator &gen, int repeat)
{
    std::printf("\n%-20s %9s %9s %6s  (batch 1)\n", "grouped 3x3", "conv ms", "GFLOP/s", "count");
    double total = 0;
    for (const GroupedShape &s : kGrouped) {
        const Tensor x = randn({1, s.c, s.hw, s.hw}, gen), w = randn({s.c, 16, 3, 3}, gen), b = randn({s.c}, gen);
        auto conv = [&] { (void)ops::conv2d(x, w, b, {s.stride}, {1}, {1}, s.c / 16); };
        double t = 1e30;
        for (int round = 0; round < 3; ++round)
            t = std::min(t, bench::medianSeconds(repeat, conv));
        const int64_t out = (s.hw - 1) / s.stride + 1;
        total += t * double(s.count);
        std::printf("%-20s %9.3f %9.1f %6lld\n", s.name, t * 1e3, 2.0 * double(s.c * 16 * 9 * out * out) / t / 1e9,
                    static_cast<long long>(s.count));
    }
    std::printf("%-20s %9.3f\n", "per forward", total * 1e3);
}

// RegNetX-400MF's 1x1 convolutions (batch 1) with how many run per forward,
// each of those with weights of its own as in the model, where a forward's
// 15 MiB of 400 x 400 weights do not stay in a core's L2 from one call to the
// next; beside one cblas_sgemm of the same size (weights reused).
struct PointwiseShape {
    const char *name;
    int64_t c, o, hw, count;
};

constexpr PointwiseShape kRegNetPointwise[] = {
    {"32>32@112", 32, 32, 112, 1},   {"32>32@56", 32, 32, 56, 1},     {"32>64@56", 32, 64, 56, 1},
    {"64>64@28", 64, 64, 28, 3},     {"64>160@28", 64, 160, 28, 1},  {"160>160@14", 160, 160, 14, 13},
    {"160>400@14", 160, 400, 14, 1}, {"400>400@7", 400, 400, 7, 23},
};

// MobileNet v3-small's 1x1 convolutions on images of 7x7 and more.
constexpr PointwiseShape kMobileNetV3Pointwise[] = {
    {"16>16@56", 16, 16, 56, 1},   {"16>72@56", 16, 72, 56, 1},    {"72>24@28", 72, 24, 28, 1},
    {"24>88@28", 24, 88, 28, 1},   {"88>24@28", 88, 24, 28, 1},    {"24>96@28", 24, 96, 28, 1},
    {"96>40@14", 96, 40, 14, 1},   {"40>240@14", 40, 240, 14, 2},  {"240>40@14", 240, 40, 14, 2},
    {"40>120@14", 40, 120, 14, 1}, {"120>48@14", 120, 48, 14, 1},  {"48>144@14", 48, 144, 14, 1},
    {"144>48@14", 144, 48, 14, 1}, {"48>288@14", 48, 288, 14, 1},  {"288>96@7", 288, 96, 7, 1},
    {"96>576@7", 96, 576, 7, 3},   {"576>96@7", 576, 96, 7, 2},
};

void benchPointwiseDistinct(Generator &gen, int repeat, const char *title, std::span<const PointwiseShape> shapes)
{
    std::printf("\n%-20s %9s %9s %9s %6s  (batch 1, distinct weights)\n", title, "conv ms", "gemm ms", "GFLOP/s",
                "count");
    double total = 0;
    for (const PointwiseShape &s : shapes) {
        const int64_t o = s.o;
        const Tensor x = randn({1, s.c, s.hw, s.hw}, gen);
        std::vector<Tensor> weights;
        for (int64_t i = 0; i < s.count; ++i)
            weights.push_back(randn({o, s.c, 1, 1}, gen));
        size_t next = 0;
        auto conv = [&] {
            (void)ops::conv2d(x, weights[next], std::nullopt);
            next = (next + 1) % weights.size();
        };
        const int64_t pixels = s.hw * s.hw;
        const auto [tc, tg] = convAndGemmSeconds(gen, repeat, o, pixels, s.c, conv);
        total += tc * double(s.count);
        std::printf("%-20s %9.3f %9.3f %9.1f %6lld\n", s.name, tc * 1e3, tg * 1e3,
                    2.0 * double(o * s.c * pixels) / tc / 1e9, static_cast<long long>(s.count));
    }
    std::printf("%-20s %9.3f\n", "per forward", total * 1e3);
}

// Every distinct convolution of SqueezeNet 1.1 at 224x224 (batch 1): the
// first 3x3/2 on 3 channels, the fire modules' squeeze 1x1, expand 1x1 and
// expand 3x3, the 1x1 classifier.
struct PaddedShape {
    const char *name;
    int64_t c, o, hw, k, stride, pad;
};

constexpr PaddedShape kSqueezeNet[] = {
    {"conv1 3x3/2", 3, 64, 224, 3, 2, 0},   {"fire2 squeeze", 64, 16, 55, 1, 1, 0},
    {"fire2 e1x1", 16, 64, 55, 1, 1, 0},    {"fire2 e3x3", 16, 64, 55, 3, 1, 1},
    {"fire3 squeeze", 128, 16, 55, 1, 1, 0}, {"fire4 squeeze", 128, 32, 27, 1, 1, 0},
    {"fire4 e1x1", 32, 128, 27, 1, 1, 0},   {"fire4 e3x3", 32, 128, 27, 3, 1, 1},
    {"fire5 squeeze", 256, 32, 27, 1, 1, 0}, {"fire6 squeeze", 256, 48, 13, 1, 1, 0},
    {"fire6 e1x1", 48, 192, 13, 1, 1, 0},   {"fire6 e3x3", 48, 192, 13, 3, 1, 1},
    {"fire7 squeeze", 384, 48, 13, 1, 1, 0}, {"fire8 squeeze", 384, 64, 13, 1, 1, 0},
    {"fire8 e1x1", 64, 256, 13, 1, 1, 0},   {"fire8 e3x3", 64, 256, 13, 3, 1, 1},
    {"fire9 squeeze", 512, 64, 13, 1, 1, 0}, {"classifier", 512, 1000, 13, 1, 1, 0},
};

// Each as compiled code runs it (Winograd on weights transformed
// beforehand where the compiler splits the convolution, else aten.conv2d),
// beside one cblas_sgemm of the convolution's GEMM size.
void benchCompiledConvs(Generator &gen, int repeat, std::span<const PaddedShape> shapes)
{
    std::printf("\n%-20s %9s %9s %9s %7s %5s  (batch 1, as compiled)\n", "conv", "conv ms", "gemm ms", "GFLOP/s",
                "ratio", "tile");
    double total = 0;
    for (const PaddedShape &s : shapes) {
        const Tensor x = randn({1, s.c, s.hw, s.hw}, gen), w = randn({s.o, s.c, s.k, s.k}, gen);
        const int64_t out = (s.hw + 2 * s.pad - s.k) / s.stride + 1;
        const int64_t m = s.o, n = out * out, k = s.c * s.k * s.k;
        const Args args{x, w, Value(), IntList{s.stride}, IntList{s.pad}, IntList{1}, int64_t(1)};
        const int tile = ops::conv2dWinogradTile(args, true);
        const Tensor u = tile ? callOp1("fusescope.winograd_weights", {w, int64_t(tile)}) : Tensor();
        const auto [tc, tg] = convAndGemmSeconds(gen, repeat, m, n, k, [&] {
            if (tile)
                (void)callOp1("fusescope.conv2d_winograd", {x, u, Value(), IntList{s.pad, s.pad}});
            else
                (void)ops::conv2d(x, w, std::nullopt, {s.stride}, {s.pad});
        });
        total += tc;
        std::printf("%-20s %9.3f %9.3f %9.1f %7.2f %5d\n", s.name, tc * 1e3, tg * 1e3, 2.0 * double(m * n * k) / tc / 1e9,
                    tc / tg, tile);
    }
    std::printf("%-20s %9.3f\n", "sum", total * 1e3);
}

} // namespace

int main(int argc, char **argv)
{
    configureBlas(argv);
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 10;
    const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 4;
    Generator gen(1);
    numThreads();
    std::printf("%-20s %9s %9s %9s %7s  (batch %lld)\n", "conv", "conv ms", "gemm ms", "GFLOP/s", "ratio",
                static_cast<long long>(batch));
    benchConvs(gen, repeat, batch, kShapes);
    benchPretransformed(gen, repeat, batch);
    benchPretransformed(gen, repeat, 1);
    std::printf("\n%-20s %9s %9s %9s %7s  (batch 1)\n", "conv", "conv ms", "gemm ms", "GFLOP/s", "ratio");
    benchConvs(gen, repeat, 1, kStems);
    benchConvs(gen, repeat, 1, kPointwiseV2);
    benchDepthwise(gen, repeat);
    benchPools(gen, repeat);
    benchGrouped(gen, repeat);
    benchPointwiseDistinct(gen, repeat, "RegNet 1x1", kRegNetPointwise);
    benchPointwiseDistinct(gen, repeat, "MobileNet v3s 1x1", kMobileNetV3Pointwise);
    benchCompiledConvs(gen, repeat, kSqueezeNet);
    return 0;
}
