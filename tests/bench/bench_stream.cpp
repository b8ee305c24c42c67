// STREAM-triad bandwidth (a[i] = b[i] + s*c[i]) of this machine: the yardstick
// that pointwise kernels, eager and compiled, are measured against.
#include "benchutil.h"

#include <cstdlib>
#include <memory>
#include <thread>

namespace {

struct AlignedFree {
    void operator()(float *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;

Buffer makeBuffer(size_t n, float value)
{
    Buffer b(static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))));
    for (size_t i = 0; i < n; ++i)
        b[i] = value;
    return b;
}

void triad(float *a, const float *b, const float *c, float s, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; ++i)
        a[i] = b[i] + s * c[i];
}

} // namespace

int main()
{
    constexpr size_t n = size_t(1) << 24; // 16M floats, 64 MiB per array: far past any cache
    Buffer a = makeBuffer(n, 0.f), b = makeBuffer(n, 1.f), c = makeBuffer(n, 2.f);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const double seconds = fusescope::bench::medianSeconds(15, [&] {
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(triad, a.get(), b.get(), c.get(), 3.f, n * t / threads, n * (t + 1) / threads);
        for (auto &th : pool)
            th.join();
    });
    const double bytes = 3.0 * n * sizeof(float);
    std::printf("stream_triad: %zu floats, %u threads, %.2f ms, %.2f GB/s\n", n, threads, seconds * 1e3,
                bytes / seconds / 1e9);
    return a[n / 2] == 7.f ? 0 : 1;
}
