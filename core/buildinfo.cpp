#include "core/buildinfo.h"

#include "fusescope_config.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace fusescope {
namespace {

// Everything else is compiled for FUSESCOPE_CPU_BASELINE; this file is not
// (see core/CMakeLists.txt), so it can refuse to start on an older CPU with
// a sentence instead of an illegal-instruction crash. It runs as an early
// ELF constructor, before any static initializer built with those instructions.
__attribute__((constructor(101))) void checkCpuBaseline()
{
#if defined(__x86_64__)
    const char *baseline = FUSESCOPE_CPU_BASELINE;
    if (std::strncmp(baseline, "x86-64-v3", 9) != 0 && std::strncmp(baseline, "x86-64-v4", 9) != 0)
        return;
    __builtin_cpu_init();
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
        && __builtin_cpu_supports("bmi2");
    const bool v4 = !std::strncmp(baseline, "x86-64-v4", 9) ? __builtin_cpu_supports("avx512f") : true;
    if (v3 && v4)
        return;
    std::fprintf(stderr,
                 "fusescope: this build needs a CPU with %s (AVX2 and FMA); this CPU lacks them. "
                 "Rebuild with -DFUSESCOPE_CPU_BASELINE= for the compiler's default.\n",
                 baseline);
    _exit(1);
#endif
}

} // namespace

BuildFeatures buildFeatures()
{
    return {FUSESCOPE_HAVE_CUDA != 0, FUSESCOPE_HAVE_CUPTI != 0, FUSESCOPE_HAVE_NVRTC != 0, FUSESCOPE_HAVE_ONNX != 0};
}

std::string versionString()
{
    return FUSESCOPE_VERSION;
}

std::string featureLine()
{
    const BuildFeatures f = buildFeatures();
    auto onOff = [](bool b) { return b ? "on" : "off"; };
    return std::string("cuda=") + onOff(f.cuda) + " cupti=" + onOff(f.cupti) + " nvrtc=" + onOff(f.nvrtc)
        + " onnx=" + onOff(f.onnx);
}

} // namespace fusescope
