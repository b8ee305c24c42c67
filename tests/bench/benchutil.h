#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace fusescope::bench {

// Median wall time in seconds of `repeat` runs of fn, after one warm-up run.
// The median, not the mean, because the machine is shared and noisy.
template <typename Fn> double medianSeconds(int repeat, Fn &&fn)
{
    fn();
    std::vector<double> times;
    times.reserve(static_cast<size_t>(repeat));
    for (int i = 0; i < repeat; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + repeat / 2, times.end());
    return times[static_cast<size_t>(repeat / 2)];
}

} // namespace fusescope::bench
