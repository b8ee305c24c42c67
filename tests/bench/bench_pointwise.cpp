// A binary pointwise op on 16M f32 elements against the machine's STREAM
// triad bandwidth, measured side by side in this run (the target:
// >= 50% of triad). Also a few eager unary ops, for the per-op cost.
#include "benchutil.h"

#include "core/runtime/blascore.h"

#include "core/ops/functional.h"
#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cstdio>

using namespace fusescope;

namespace {

// STREAM triad with the core's own thread pool: a[i] = b[i] + s*c[i].
double triadGBs(const Tensor &a, const Tensor &b, const Tensor &c)
{
    float *pa = a.data<float>();
    const float *pb = b.data<float>(), *pc = c.data<float>();
    const int64_t n = a.numel();
    const double s = bench::medianSeconds(15, [&] {
        parallelFor(0, n, 1 << 16, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i)
                pa[i] = pb[i] + 3.0f * pc[i];
        });
    });
    return 3.0 * double(n) * 4 / s / 1e9;
}

} // namespace

int main(int, char **argv)
{
    fusescope::configureBlas(argv);
    const int64_t n = int64_t(1) << 24;
    Generator gen(0);
    const Tensor a = randn({n}, gen), b = randn({n}, gen), c = randn({n}, gen);
    const double triad = triadGBs(a, b, c);
    const double addS = bench::medianSeconds(15, [&] { ops::add(b, c); });
    const double addGBs = 3.0 * double(n) * 4 / addS / 1e9;
    std::printf("threads %d\n", numThreads());
    std::printf("stream_triad      %8.2f GB/s\n", triad);
    std::printf("aten.add f32 16M  %8.2f GB/s  (%.0f%% of triad)\n", addGBs, 100 * addGBs / triad);
    for (const char *op : {"aten.exp", "aten.gelu", "aten.sigmoid", "aten.tanh"}) {
        const double s = bench::medianSeconds(9, [&] { callOp1(op, {b}); });
        const double gbs = 2.0 * double(n) * 4 / s / 1e9;
        std::printf("%-17s %8.2f GB/s  (%.0f%% of triad)  %.2f ms\n", op, gbs, 100 * gbs / triad, s * 1e3);
    }
    return 0;
}
