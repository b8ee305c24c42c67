#include "profiler/clock.h"

#include <chrono>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace fusescope::profiler::clock {

namespace {

// Invariant TSC: constant rate, does not stop in deep C-states (CPUID
// 0x80000007, EDX bit 8). Without it the hot path reads the clock itself.
bool detectInvariantTsc()
{
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d & (1u << 8)) != 0;
#else
    return false;
#endif
}

struct Anchor {
    uint64_t ticks = 0;
    int64_t ns = 0;
};

Anchor readAnchor()
{
    // Bracket the clock read with two tick reads so the pair is tight.
    const uint64_t t0 = ticks();
    const int64_t ns = nowNs();
    const uint64_t t1 = ticks();
    return {t0 + (t1 - t0) / 2, ns};
}

struct Calibration {
    std::mutex mutex;
    Anchor first;
    Anchor last;
    double nsPerTick = 1.0;

    Calibration()
    {
        if (!usesTsc())
            return;
        first = readAnchor();
        // A first rate from a short busy wait; recalibrate() refines it.
        const int64_t until = first.ns + 2'000'000;
        while (nowNs() < until) {
        }
        update();
    }

    void update()
    {
        const Anchor a = readAnchor();
        if (a.ticks <= first.ticks)
            return;
        last = a;
        nsPerTick = static_cast<double>(a.ns - first.ns) / static_cast<double>(a.ticks - first.ticks);
    }
};

Calibration &calibration()
{
    static Calibration c;
    return c;
}

} // namespace

#if defined(__x86_64__)
bool g_tsc = detectInvariantTsc();
#endif

bool usesTsc()
{
#if defined(__x86_64__)
    return g_tsc;
#else
    return false;
#endif
}

int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void recalibrate()
{
    if (!usesTsc())
        return;
    Calibration &c = calibration();
    std::lock_guard lock(c.mutex);
    c.update();
}

TickConverter converter()
{
    if (!usesTsc())
        return {};
    Calibration &c = calibration();
    std::lock_guard lock(c.mutex);
    return {c.last.ticks, c.last.ns, c.nsPerTick, false};
}

} // namespace fusescope::profiler::clock
