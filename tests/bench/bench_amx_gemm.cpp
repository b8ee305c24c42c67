// The linear layers of the standard workloads (DESIGN.md) as compiled mode
// runs them where the CPU has AMX tiles: amx::gemm on a weight packed once
// against cblas_sgemm on the f32 weight (x @ w^T, as aten.linear), alternated
// rounds, best median of each, and both products' largest error against a
// double-precision reference on a sample of rows.
//
// usage: bench_amx_gemm [REPEAT]
#include "benchutil.h"

#include "core/ops/amx_gemm.h"
#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cblas.h>

#include <cmath>
#include <cstdlib>

using namespace fusescope;

namespace {

struct Shape3 {
    const char *layer;
    int64_t m, k, n;
};

// Largest |c - x @ w^T| over every 16th row, in double.
double maxError(const float *x, const float *w, const float *c, int64_t m, int64_t k, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < m; i += 16) {
        for (int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (int64_t l = 0; l < k; ++l)
                ref += double(x[i * k + l]) * double(w[j * k + l]);
            worst = std::max(worst, std::abs(double(c[i * n + j]) - ref));
        }
    }
    return worst;
}

} // namespace

int main(int argc, char **argv)
{
    configureBlas(argv);
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 20;
    numThreads();
    if (!amx::available()) {
        std::printf("no AMX tiles on this CPU (or FUSESCOPE_NO_AMX is set): nothing to compare\n");
        return 0;
    }
    const Shape3 shapes[] = {
        {"mlp fc1", 256, 512, 2048},       {"mlp fc2", 256, 2048, 2048},     {"mlp fc3", 256, 2048, 512},
        {"encoder qkv", 1024, 256, 768},   {"encoder out", 1024, 256, 256},  {"encoder ffn1", 1024, 256, 1024},
        {"encoder ffn2", 1024, 1024, 256}, {"llama q/k/v/o", 512, 512, 512}, {"llama gate/up", 512, 512, 1376},
        {"llama down", 512, 1376, 512},
    };
    std::printf("%-16s %18s %10s %10s %7s %12s %12s\n", "layer", "m x k x n", "BLAS GF/s", "AMX GF/s", "ratio",
                "BLAS err", "AMX err");
    Generator gen(1);
    for (const Shape3 &s : shapes) {
        const Tensor x = randn({s.m, s.k}, gen), w = randn({s.n, s.k}, gen);
        Tensor blasOut = Tensor::empty({s.m, s.n}), amxOut = Tensor::empty({s.m, s.n});
        // A tensor's storage: 64-byte aligned, as the compiler's packed weights are (tile rows then
        // start on cache lines; a std::vector's buffer need not).
        const Tensor packedTensor = Tensor::empty({amx::packedElements(s.k, s.n)}, DType::BF16);
        uint16_t *packed = packedTensor.data<uint16_t>();
        amx::packRight(w.data<float>(), s.k, s.n, 1, s.k, packed); // b = w^T: b[i, j] = w[j, i]
        auto blas = [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(s.m), int(s.n), int(s.k), 1.f, x.data<float>(),
                        int(s.k), w.data<float>(), int(s.k), 0.f, blasOut.data<float>(), int(s.n));
        };
        auto tiles = [&] {
            if (!amx::gemm(x.data<float>(), s.m, s.k, s.k, packed, s.n, amxOut.data<float>(), s.n))
                std::abort();
        };
        double tb = 1e30, ta = 1e30;
        for (int round = 0; round < 3; ++round) {
            tb = std::min(tb, bench::medianSeconds(repeat, blas));
            ta = std::min(ta, bench::medianSeconds(repeat, tiles));
        }
        const double flops = 2.0 * double(s.m) * double(s.k) * double(s.n);
        char dims[64];
        std::snprintf(dims, sizeof dims, "%lld x %lld x %lld", (long long)s.m, (long long)s.k, (long long)s.n);
        std::printf("%-16s %18s %10.1f %10.1f %7.2f %12.3g %12.3g\n", s.layer, dims, flops / tb / 1e9, flops / ta / 1e9,
                    tb / ta, maxError(x.data<float>(), w.data<float>(), blasOut.data<float>(), s.m, s.k, s.n),
                    maxError(x.data<float>(), w.data<float>(), amxOut.data<float>(), s.m, s.k, s.n));
    }
    return 0;
}
