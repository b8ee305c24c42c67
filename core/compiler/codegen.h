#pragma once
// The `codegen` stage: C++ source for every fused kernel. Shapes, strides
// and offsets are compile-time constants (a compiled variant is specialized
// on its inputs), inner loops run over unit or zero strides so the C++
// compiler vectorizes them, and the outer loop is split across the core's
// thread pool through the plain-C FusescopeKernelAbi.

#include "core/compiler/schedule.h"

#include <optional>

namespace fusescope::compiler {

struct GeneratedModule {
    std::string source;              // one translation unit: scalar maths, ABI, every kernel
    std::vector<std::string> symbols; // per kernel: its function name, or "" when it has no code
    std::string wrapper;             // the wrapper's source: every kernel, extern op and BLAS call in order
};

inline constexpr const char *kWrapperSymbol = "fusescope_call";

// Kernels of kind Pointwise and Reduction get a function; a Gemm kernel gets
// one for its epilogue (BLAS or the eager convolution writes the anchor's
// output first); Extern kernels run their eager op.
GeneratedModule generateModule(const Graph &graph, const Schedule &schedule, PassLog &log);

// The function of one kernel, or nothing when it has no code (a GEMM
// without epilogue, an extern op). `notes` gets a line for each thing the
// code leaves out because the kernel's values make it unneeded.
std::optional<std::string> generateKernel(const Kernel &kernel, std::vector<std::string> *notes = nullptr);

// The scalar maths that eager kernels and generated code share (core/ops/scalarmath.h).
const char *scalarMathSource();

} // namespace fusescope::compiler
