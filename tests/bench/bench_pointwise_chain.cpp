// The six eager ops of the `pointwise` workload (y = gelu(x*w+b)*sigmoid(x)+x,
// x [4096,1024] f32) one at a time and as the chain, median ms each. The
// PyTorch peer for the same ops is tests/bench/peers/torch_pointwise_chain.py.
// ROWS changes x's rows, to see how the chain behaves once its tensors
// outgrow the caches.
//
// usage: bench_pointwise_chain [REPEAT] [ROWS]
#include "benchutil.h"

#include "core/ops/functional.h"
#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"

#include <cstdlib>

using namespace fusescope;

int main(int argc, char **argv)
{
    configureBlas(argv);
    const int repeat = argc > 1 ? std::atoi(argv[1]) : 30;
    const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 4096;
    Generator gen(1);
    numThreads();
    const Tensor x = randn({rows, 1024}, gen), w = randn({1024}, gen), b = randn({1024}, gen);
    const Tensor y = ops::mul(x, w), h = ops::gelu(y), s = ops::sigmoid(x);
    const auto report = [&](const char *name, auto fn) {
        std::printf("%-10s %.3f ms\n", name, bench::medianSeconds(repeat, fn) * 1e3);
    };
    report("mul_bcast", [&] { (void)ops::mul(x, w); });
    report("add_bcast", [&] { (void)ops::add(y, b); });
    report("gelu", [&] { (void)ops::gelu(y); });
    report("sigmoid", [&] { (void)ops::sigmoid(x); });
    report("mul", [&] { (void)ops::mul(h, s); });
    report("add", [&] { (void)ops::add(h, x); });
    report("total", [&] { (void)ops::add(ops::mul(ops::gelu(ops::add(ops::mul(x, w), b)), ops::sigmoid(x)), x); });
    return 0;
}
