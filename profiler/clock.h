#pragma once
// The one clock every backend shares: nanoseconds of CLOCK_MONOTONIC
// (std::chrono::steady_clock). The recorder's hot path reads raw ticks (the
// invariant TSC where the CPU has one: ~10 ns against ~22 ns for
// clock_gettime on a VM) and converts them to this clock when it drains.

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace fusescope::profiler::clock {

// Nanoseconds on the shared monotonic clock.
int64_t nowNs();

bool usesTsc();

// A raw timestamp for the hot path; convert with toNs().
inline uint64_t ticks()
{
#if defined(__x86_64__)
    extern bool g_tsc;
    if (g_tsc)
        return __rdtsc();
#endif
    return static_cast<uint64_t>(nowNs());
}

// Re-anchors the ticks → ns conversion; the recorder calls it on every drain,
// so the rate is measured over an ever longer span.
void recalibrate();

// ticks → ns as of the last recalibrate(); copy it once per drain.
struct TickConverter {
    uint64_t ticks = 0;
    int64_t ns = 0;
    double nsPerTick = 1.0;
    bool identity = true; // ticks already are ns

    int64_t toNs(uint64_t t) const
    {
        if (identity)
            return static_cast<int64_t>(t);
        return ns + static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(t - ticks)) * nsPerTick);
    }
};
TickConverter converter();

} // namespace fusescope::profiler::clock
