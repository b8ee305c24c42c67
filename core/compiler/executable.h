#pragma once
// A compiled graph ready to run: its kernels in schedule order, the memory
// plan, and per kernel either generated code or the interpreter, which runs
// the kernel's nodes one by one with the registry's eager kernels.

#include "core/compiler/memory_plan.h"
#include "core/compiler/schedule.h"

#include <memory>

namespace fusescope::compiler {

// The plain-C interface between the runtime and generated code (no C++ ABI
// crosses the dlopen boundary). codegen writes the same declarations.
extern "C" {
struct FusescopeKernelAbi {
    void (*parallel_for)(int64_t begin, int64_t end, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                         void *ctx);
};
// operands: one data pointer per kernel operand (Kernel::inputs, then Kernel::outputs).
typedef void (*FusescopeKernelFn)(void *const *operands, const FusescopeKernelAbi *abi);
}

class Executable
{
public:
    Executable(Graph graph, Schedule schedule, MemoryPlan plan);

    // Generated code for kernel `index`; kernels without it are interpreted.
    void setKernel(size_t index, FusescopeKernelFn fn);
    bool hasCode(size_t index) const;
    // Keeps the loaded library alive as long as this executable.
    void holdLibrary(std::shared_ptr<void> library) { m_library = std::move(library); }

    TensorList run(const TensorList &inputs) const;

    const Graph &graph() const { return m_graph; }
    const Schedule &schedule() const { return m_schedule; }
    const MemoryPlan &plan() const { return m_plan; }

private:
    struct State;
    void runKernel(size_t index, State &state) const;
    void interpret(const Kernel &k, State &state) const;
    void runCode(size_t index, State &state) const;
    void runAnchor(const Kernel &k, State &state) const;

    Graph m_graph;
    Schedule m_schedule;
    MemoryPlan m_plan;
    std::vector<FusescopeKernelFn> m_code;
    std::vector<std::vector<int>> m_origins; // per kernel, for the profiler
    std::shared_ptr<void> m_library;
};

} // namespace fusescope::compiler

namespace fusescope::compiler {
// Runs a graph node by node with the eager kernels, no schedule or plan: the
// reference every compiled result is checked against.
TensorList runGraph(const Graph &graph, const TensorList &inputs);
} // namespace fusescope::compiler
