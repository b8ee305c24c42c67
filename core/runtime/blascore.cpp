#include "core/runtime/blascore.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

extern "C" char *openblas_get_corename(void);

namespace fusescope {
namespace {

constexpr const char *kGuard = "FUSESCOPE_BLAS_REEXEC";

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

void fixBlasCoreDetection(char **argv)
{
    if (std::getenv("OPENBLAS_CORETYPE") || std::getenv(kGuard))
        return;
    const std::string core = blasCoreOverride();
    if (core.empty())
        return;
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
    setenv(kGuard, "1", 1);
    execv("/proc/self/exe", argv);
    // Still here: run on with the slower kernels rather than fail.
    unsetenv("OPENBLAS_CORETYPE");
}

} // namespace fusescope
