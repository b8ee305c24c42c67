// f32 GEMM 1024^3 through ops::mm against cblas_sgemm called directly, side
// by side in one run: what the op layer costs on top of BLAS.
#include "benchutil.h"

#include "core/runtime/blascore.h"

#include "core/ops/functional.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cblas.h>

using namespace fusescope;

int main(int, char **argv)
{
    fusescope::configureBlas(argv);
    constexpr int64_t n = 1024;
    Generator gen(1);
    const Tensor a = randn({n, n}, gen), b = randn({n, n}, gen);
    Tensor c = Tensor::empty({n, n});
    numThreads(); // BLAS gets the pool's thread count in both runs
    auto blas = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data<float>(), n, b.data<float>(), n,
                    0.f, c.data<float>(), n);
    };
    auto op = [&] { c = ops::mm(a, b); };
    // Alternating rounds, best median of each: load on a shared machine
    // then hits both sides alike.
    double direct = 1e30, viaOp = 1e30;
    for (int round = 0; round < 3; ++round) {
        direct = std::min(direct, bench::medianSeconds(5, blas));
        viaOp = std::min(viaOp, bench::medianSeconds(5, op));
    }
    const double flops = 2.0 * n * n * n;
    std::printf("gemm_f32_1024: cblas_sgemm %.1f GFLOP/s, ops::mm %.1f GFLOP/s, ratio %.3f (%d threads)\n",
                flops / direct / 1e9, flops / viaOp / 1e9, direct / viaOp, numThreads());
    return 0;
}
