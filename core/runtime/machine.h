#pragma once

#include <string>
#include <vector>

namespace fusescope {

// Facts about the machine that go next to every measured figure.
struct MachineInfo {
    std::string cpuModel;
    int logicalCores = 0;
    int threads = 0;   // the core's thread pool
    std::string blas;  // "OpenBLAS 0.3.21 ..., kernels SkylakeX, idle threads spin 2^16 cycles"
};

MachineInfo machineInfo();

// The median of `values` (0 when empty); the mean of the middle two for an even count.
double medianOf(std::vector<double> values);

// Median of `repeat` (at least one) timed calls, in milliseconds, after
// warm-up calls for at least 0.2 s unless `warmUp` is false: on the 2-core
// machines the first calls of a process run up to twice as slow for about
// 0.1 s (eager `encoder`: 12-14 ms, then 7).
template <typename Fn>
double medianMilliseconds(int repeat, Fn &&fn, bool warmUp = true);

} // namespace fusescope

#include <algorithm>
#include <chrono>
#include <vector>

template <typename Fn>
double fusescope::medianMilliseconds(int repeat, Fn &&fn, bool warmUp)
{
    const auto warmStart = std::chrono::steady_clock::now();
    for (int i = 0; warmUp && i < 100; ++i) {
        fn();
        if (std::chrono::steady_clock::now() - warmStart >= std::chrono::milliseconds(200))
            break;
    }
    std::vector<double> times;
    for (int i = 0; i < std::max(1, repeat); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return medianOf(std::move(times));
}
