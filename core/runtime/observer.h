#pragma once

#include "core/tensor/device.h"

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

namespace fusescope {

struct OpDef;
class Tensor;

// Work estimate of one op call, from the op registry's cost rule.
struct OpCost {
    double flops = 0;
    double bytesRead = 0;
    double bytesWritten = 0;
};

struct OpEvent {
    const OpDef *op = nullptr;
    std::span<const Tensor> inputs; // tensor arguments, in schema order
    OpCost cost;
};

struct KernelEvent {
    std::string_view name;    // "aten.add:f32:contiguous", "cblas_sgemm", a fused kernel name
    std::span<const int> origins; // graph-node ids for compiled kernels, empty for eager ones
    OpCost cost;
    // The eager op's CPU kernel as a whole. Kernels it reports inside itself
    // (a BLAS call) are the finer truth, and a listener may prefer them.
    bool opKernel = false;
};

struct AllocationEvent {
    Device device;
    const void *address = nullptr;
    int64_t bytes = 0;          // positive for an allocation, negative for a free
    int64_t allocatedAfter = 0; // bytes handed out to tensors after this event
    int64_t reservedAfter = 0;  // bytes held by the caching allocator after this event
};

// What the core tells whoever listens (the profiler). core knows nothing of
// the listener; callbacks run on the thread that does the work and must be cheap.
class Observer
{
public:
    virtual ~Observer() = default;
    virtual void opBegin(const OpEvent &) {}
    virtual void opEnd(const OpEvent &) {}
    virtual void kernelBegin(const KernelEvent &) {}
    virtual void kernelEnd(const KernelEvent &) {}
    virtual void allocation(const AllocationEvent &) {}
    virtual void compileStageBegin(std::string_view /*stage*/) {}
    virtual void compileStageEnd(std::string_view /*stage*/) {}
    virtual void instant(std::string_view /*name*/, std::string_view /*detail*/) {}
};

namespace observers {

// One relaxed load: the whole cost of observation when nobody listens.
inline std::atomic<bool> g_active{false};
inline bool active()
{
    return g_active.load(std::memory_order_relaxed);
}

void add(Observer *observer);
void remove(Observer *observer);

// Fan-out helpers; call them only after active() returned true.
void opBegin(const OpEvent &e);
void opEnd(const OpEvent &e);
void kernelBegin(const KernelEvent &e);
void kernelEnd(const KernelEvent &e);
void allocation(const AllocationEvent &e);
void compileStageBegin(std::string_view stage);
void compileStageEnd(std::string_view stage);
void instant(std::string_view name, std::string_view detail);

} // namespace observers

// Reports a kernel's begin and end to observers for the lifetime of the scope.
class KernelScope
{
public:
    explicit KernelScope(const KernelEvent &event)
        : m_event(observers::active() ? &event : nullptr)
    {
        if (m_event)
            observers::kernelBegin(*m_event);
    }
    ~KernelScope()
    {
        if (m_event)
            observers::kernelEnd(*m_event);
    }
    KernelScope(const KernelScope &) = delete;
    KernelScope &operator=(const KernelScope &) = delete;

private:
    const KernelEvent *m_event;
};

} // namespace fusescope
