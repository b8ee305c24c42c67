// The attention kernel (aten.scaled_dot_product_attention) against the same
// attention as the ops it stands for (matmul, scale, mask, softmax, matmul),
// side by side in one run, at the shapes of the `encoder` and `llama_block`
// workloads: heads read as views of the packed projection, as those models
// give them.
//
// usage: bench_attention [REPEAT]
#include "benchutil.h"

#include "core/ops/functional.h"
#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace fusescope;

namespace {

struct Case {
    const char *name;
    int64_t batch, heads, len, dim;
    bool causal;
};

// q, k, v [batch, heads, len, dim] as views of one [batch, len, 3 * heads * dim] projection.
std::vector<Tensor> heads(const Case &c, Generator &gen)
{
    const Tensor packed = randn({c.batch, c.len, 3, c.heads, c.dim}, gen);
    std::vector<Tensor> qkv;
    for (int64_t i = 0; i < 3; ++i)
        qkv.push_back(ops::permute(packed.select(2, i), {0, 2, 1, 3}));
    return qkv;
}

Tensor decomposed(const Case &c, const std::vector<Tensor> &qkv, const Tensor &hidden)
{
    Tensor scores = ops::mul(ops::matmul(qkv[0], ops::transpose(qkv[1], -2, -1)), 1.0 / std::sqrt(double(c.dim)));
    if (c.causal)
        scores = ops::where(hidden, -std::numeric_limits<double>::infinity(), scores);
    return ops::matmul(ops::softmax(scores, -1), qkv[2]);
}

} // namespace

int main(int argc, char **argv)
{
    configureBlas(argv);
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 50;
    numThreads();
    Generator gen(1);
    for (const Case &c : {Case{"encoder", 8, 4, 128, 64, false}, Case{"llama_block", 2, 8, 256, 64, true}}) {
        const std::vector<Tensor> qkv = heads(c, gen);
        const Tensor hidden = ops::triu(ones({c.len, c.len}, DType::Bool), 1);
        const Tensor y = ops::scaledDotProductAttention(qkv[0], qkv[1], qkv[2], std::nullopt, c.causal);
        const std::vector<double> got = y.toDoubleVector(), want = decomposed(c, qkv, hidden).toDoubleVector();
        double diff = 0;
        for (size_t i = 0; i < got.size(); ++i)
            diff = std::max(diff, std::abs(got[i] - want[i]));
        // Alternating rounds, best median of each: load on a shared machine hits both alike.
        double fused = 1e30, parts = 1e30;
        for (int round = 0; round < 3; ++round) {
            fused = std::min(fused, bench::medianSeconds(repeat, [&] {
                (void)ops::scaledDotProductAttention(qkv[0], qkv[1], qkv[2], std::nullopt, c.causal);
            }));
            parts = std::min(parts, bench::medianSeconds(repeat, [&] { (void)decomposed(c, qkv, hidden); }));
        }
        const double flops = 4.0 * double(c.batch * c.heads * c.len * c.len * c.dim) / (c.causal ? 2 : 1);
        std::printf("%-12s [%lld,%lld,%lld,%lld]%s  kernel %.3f ms (%.0f GFLOP/s)  decomposed %.3f ms  ratio %.2f  "
                    "max|diff| %.2e\n",
                    c.name, static_cast<long long>(c.batch), static_cast<long long>(c.heads),
                    static_cast<long long>(c.len), static_cast<long long>(c.dim), c.causal ? " causal" : "",
                    fused * 1e3, flops / fused * 1e-9, parts * 1e3, parts / fused, diff);
    }
    return 0;
}
