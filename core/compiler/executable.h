#pragma once
// A compiled graph ready to run: its kernels in schedule order, the memory
// plan, and per kernel either generated code or the interpreter, which runs
// the kernel's nodes one by one with the registry's eager kernels.

#include "core/compiler/memory_plan.h"
#include "core/compiler/schedule.h"
#include "core/runtime/observer.h"

#include <memory>

namespace fusescope::compiler {

// The plain-C interface between the runtime and generated code (no C++ ABI
// crosses the dlopen boundary). codegen writes the same declarations.
extern "C" {
struct FusescopeKernelAbi {
    void (*parallel_for)(int64_t begin, int64_t end, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                         void *ctx);
    // The part of kernel `index` that is not generated code: an extern op, a
    // GEMM's BLAS call, or the whole kernel in the interpreter.
    void (*run_kernel)(void *ctx, int64_t index);
    void (*kernel_begin)(void *ctx, int64_t index); // for observers
    void (*kernel_end)(void *ctx, int64_t index);
    void *ctx;
};
// operands: one data pointer per kernel operand (Kernel::inputs, then Kernel::outputs).
typedef void (*FusescopeKernelFn)(void *const *operands, const FusescopeKernelAbi *abi);
// The generated wrapper: every kernel in schedule order; operands[k] are kernel k's.
typedef void (*FusescopeCallFn)(void *const *const *operands, const FusescopeKernelAbi *abi);
}

class Executable
{
public:
    Executable(Graph graph, Schedule schedule, MemoryPlan plan);

    // Generated code for kernel `index`; kernels without it are interpreted.
    void setKernel(size_t index, FusescopeKernelFn fn);
    // The generated wrapper that calls the kernels in order (with generated code only).
    void setWrapper(FusescopeCallFn fn) { m_wrapper = fn; }
    bool hasCode(size_t index) const;
    // Keeps the loaded library alive as long as this executable.
    void holdLibrary(std::shared_ptr<void> library) { m_library = std::move(library); }

    TensorList run(const TensorList &inputs) const;

    const Graph &graph() const { return m_graph; }
    const Schedule &schedule() const { return m_schedule; }
    const MemoryPlan &plan() const { return m_plan; }

private:
    struct State;
    struct CallContext;
    void runKernel(size_t index, State &state) const;
    void interpret(const Kernel &k, State &state) const;
    void runCode(size_t index, State &state) const;
    void runAnchor(const Kernel &k, State &state) const;
    std::vector<void *> operandsOf(const Kernel &k, const State &state) const;
    static void runtimePart(void *ctx, int64_t index);
    static void kernelBegin(void *ctx, int64_t index);
    static void kernelEnd(void *ctx, int64_t index);

    Graph m_graph;
    Schedule m_schedule;
    MemoryPlan m_plan;
    std::vector<FusescopeKernelFn> m_code;
    FusescopeCallFn m_wrapper = nullptr;
    std::vector<Node *> m_placeholders; // found once, not on every call
    std::vector<const Node *> m_attrNodes;
    std::vector<std::vector<int>> m_origins; // per kernel, for the profiler
    std::vector<KernelEvent> m_events;
    std::shared_ptr<void> m_library;
};

} // namespace fusescope::compiler

namespace fusescope::compiler {
// Runs a graph node by node with the eager kernels, no schedule or plan: the
// reference every compiled result is checked against.
TensorList runGraph(const Graph &graph, const TensorList &inputs);
} // namespace fusescope::compiler
