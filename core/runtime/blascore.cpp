#include "core/runtime/blascore.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

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

bool isAvx512Core(const std::string &name)
{
    for (const char *core : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
        if (strcasecmp(name.c_str(), core) == 0)
            return true;
    }
    return false;
}

// AMD family 19h with AVX-512 is Zen 4, which runs a 512-bit FMA as two
// 256-bit halves. OpenBLAS 0.3.21 gives it its Cooperlake (AVX-512) kernels;
// the Haswell (AVX2) ones measured faster there: sgemm 1024^3 on 2 threads
// 202 -> 214 GFLOP/s, compiled mlp 17.6 -> 16.3 ms, resnet18 (ONNX, batch 1)
// 26.6 -> 25.7 ms (docs/performance.md).
bool isZen4()
{
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx) || ebx != 0x68747541) // "Auth" of AuthenticAMD
        return false;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return false;
    const unsigned base = (eax >> 8) & 0xf, family = base == 0xf ? base + ((eax >> 20) & 0xff) : base;
    __builtin_cpu_init();
    return family == 0x19 && __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
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
    const std::string core = blasCoreName();
    if (isZen4() && isAvx512Core(core))
        return "Haswell";
    if (!isFallbackCore(core))
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
    const std::string core = std::getenv("OPENBLAS_CORETYPE") ? std::string() : blasCoreOverride();
    const bool setCore = !core.empty(), setTimeout = !std::getenv("OPENBLAS_THREAD_TIMEOUT");
    if (!setCore && !setTimeout)
        return;
    if (setCore)
        setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
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
