#include "core/runtime/blascore.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

extern "C" char *openblas_get_corename(void);

namespace fusescope {
namespace {

constexpr const char *kGuard = "FUSESCOPE_BLAS_REEXEC";

// log2 of the cycles an idle OpenBLAS thread spins (sched_yield) before it
// sleeps: 2^16, about 30 us, like the pool's own polling. OpenBLAS's default,
// 2^28 (about 0.1 s), kept its thread spinning on the second core after
// every threaded GEMM, taking it from the pool's workers: compiled `encoder`
// ran 10.4 ms instead of 8.6, resnet18 28 ms instead of 24 (docs/performance.md).
constexpr const char *kThreadTimeout = "16";

bool isFallbackCore(const std::string &name)
{
    for (const char *generic : {"Prescott", "Katmai", "Core2", "Penryn", "Dunnington", "Generic", "Unknown"}) {
        if (strcasecmp(name.c_str(), generic) == 0)
            return true;
    }
    return false;
}

} // namespace

std::string blasCoreName()
{
    const char *name = openblas_get_corename();
    return name ? name : "";
}

std::string blasCoreOverride()
{
#if defined(__x86_64__)
    if (!isFallbackCore(blasCoreName()))
        return {};
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return {};
}

std::string blasThreadTimeout()
{
    const char *v = std::getenv("OPENBLAS_THREAD_TIMEOUT");
    return v ? v : "";
}

void configureBlas(char **argv)
{
    if (std::getenv(kGuard))
        return;
    const bool setCore = !std::getenv("OPENBLAS_CORETYPE") && !blasCoreOverride().empty();
    const bool setTimeout = !std::getenv("OPENBLAS_THREAD_TIMEOUT");
    if (!setCore && !setTimeout)
        return;
    if (setCore)
        setenv("OPENBLAS_CORETYPE", blasCoreOverride().c_str(), 1);
    if (setTimeout)
        setenv("OPENBLAS_THREAD_TIMEOUT", kThreadTimeout, 1);
    setenv(kGuard, "1", 1);
    execv("/proc/self/exe", argv);
    // Still here: run on with OpenBLAS's own choices rather than fail.
    if (setCore)
        unsetenv("OPENBLAS_CORETYPE");
    if (setTimeout)
        unsetenv("OPENBLAS_THREAD_TIMEOUT");
}

} // namespace fusescope
