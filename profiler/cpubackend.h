#pragma once
// The CPU backend: listens to the core's observer and turns every op, kernel,
// allocation, compile stage and instant into records on the calling thread.

#include "core/runtime/observer.h"

namespace fusescope::profiler {

struct CpuBackendOptions {
    bool recordShapes = false;  // input shapes and dtypes of every op
    bool profileMemory = false; // allocations and frees
    bool withFlops = false;     // flops of ops and kernels (bytes are always kept)
};

class CpuBackend final : public Observer
{
public:
    explicit CpuBackend(CpuBackendOptions options) : m_options(options) {}

    void opBegin(const OpEvent &e) override;
    void opEnd(const OpEvent &e) override;
    void kernelBegin(const KernelEvent &e) override;
    void kernelEnd(const KernelEvent &e) override;
    void allocation(const AllocationEvent &e) override;
    void compileStageBegin(std::string_view stage) override;
    void compileStageEnd(std::string_view stage) override;
    void instant(std::string_view name, std::string_view detail) override;

private:
    CpuBackendOptions m_options;
};

} // namespace fusescope::profiler
