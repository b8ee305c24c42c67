#pragma once

#include <string>
#include <utility>
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

// The medians of `repeat` timed calls of each function, the calls
// alternating (a, b, a, b, ...) after a warm-up of both: a ratio of the two
// then compares them under the same load. Timed one block after the other
// on a machine shared with another tenant, the same binary's speedup swung
// between runs by more than the change being measured.
template <typename A, typename B>
std::pair<double, double> alternatedMedianMilliseconds(int repeat, A &&a, B &&b);

} // namespace fusescope

#include <algorithm>
#include <chrono>

namespace fusescope::detail {

template <typename Fn>
double millisecondsOf(Fn &fn)
{
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <typename Fn>
void warmUp(Fn &fn)
{
    const auto warmStart = std::chrono::steady_clock::now();
    for (int i = 0; i < 100 && std::chrono::steady_clock::now() - warmStart < std::chrono::milliseconds(200); ++i)
        fn();
}

} // namespace fusescope::detail

template <typename Fn>
double fusescope::medianMilliseconds(int repeat, Fn &&fn, bool warmUp)
{
    if (warmUp)
        detail::warmUp(fn);
    std::vector<double> times;
    for (int i = 0; i < std::max(1, repeat); ++i)
        times.push_back(detail::millisecondsOf(fn));
    return medianOf(std::move(times));
}

template <typename A, typename B>
std::pair<double, double> fusescope::alternatedMedianMilliseconds(int repeat, A &&a, B &&b)
{
    detail::warmUp(a);
    detail::warmUp(b);
    std::vector<double> ta, tb;
    for (int i = 0; i < std::max(1, repeat); ++i) {
        ta.push_back(detail::millisecondsOf(a));
        tb.push_back(detail::millisecondsOf(b));
    }
    return {medianOf(std::move(ta)), medianOf(std::move(tb))};
}
