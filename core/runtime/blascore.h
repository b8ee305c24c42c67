#pragma once

#include <string>

namespace fusescope {

// OpenBLAS picks its kernels once, when the library loads, from the CPU's
// model number; on CPUs newer than the library (or behind some hypervisors)
// it falls back to SSE3 "Prescott" kernels that run 3x slower than the AVX-512
// ones the CPU has. The choice can only be changed through OPENBLAS_CORETYPE
// before the process starts; so can how long its idle threads spin
// (OPENBLAS_THREAD_TIMEOUT).

// The core type this CPU should use when OpenBLAS fell back to a generic
// kernel set ("SkylakeX", "Haswell") or chose AVX-512 kernels for an AMD Zen 4
// ("Haswell", faster there), or empty when its own choice is fine.
std::string blasCoreOverride();
std::string blasCoreName();

// OPENBLAS_THREAD_TIMEOUT as the process started ("" when unset).
std::string blasThreadTimeout();

// Re-executes the program once with OPENBLAS_CORETYPE set when
// blasCoreOverride() says so and with OPENBLAS_THREAD_TIMEOUT set to a short
// spin; a variable the user set is kept. Returns (doing nothing) when both are
// already set, or when re-executing fails.
void configureBlas(char **argv);

} // namespace fusescope
