#pragma once

#include <string>

namespace fusescope {

// Facts about the machine that go next to every measured figure.
struct MachineInfo {
    std::string cpuModel;
    int logicalCores = 0;
    int threads = 0;   // the core's thread pool
    std::string blas;  // "OpenBLAS 0.3.21 ..., kernels SkylakeX, idle threads spin 2^16 cycles"
};

MachineInfo machineInfo();

// Median of `repeat` timed calls after one warm-up call, in milliseconds.
template <typename Fn>
double medianMilliseconds(int repeat, Fn &&fn);

} // namespace fusescope

#include <algorithm>
#include <chrono>
#include <vector>

template <typename Fn>
double fusescope::medianMilliseconds(int repeat, Fn &&fn)
{
    fn();
    std::vector<double> times;
    for (int i = 0; i < std::max(1, repeat); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}
