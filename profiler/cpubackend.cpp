#include "profiler/cpubackend.h"
#include "profiler/recorder.h"

#include "core/ops/registry.h"
#include "core/tensor/tensor.h"

#include <array>
#include <string>
#include <unordered_map>

namespace fusescope::profiler {

namespace {

// Names reach the backend as string_views into storage that lives as long as
// the op or executable; a per-thread cache keyed by that address (checked
// against a copy of the text, in case the storage was reused) keeps the
// interner's lock off the hot path.
class NameCache
{
public:
    StringId get(std::string_view s)
    {
        Slot &slot = m_slots[(reinterpret_cast<uintptr_t>(s.data()) >> 3) % m_slots.size()];
        if (slot.data != s.data() || slot.text != s) {
            slot.data = s.data();
            slot.text.assign(s);
            slot.id = interner::intern(s);
        }
        return slot.id;
    }

private:
    struct Slot {
        const char *data = nullptr;
        std::string text;
        StringId id;
    };
    std::array<Slot, 512> m_slots;
};

thread_local NameCache t_names;

// Texts built per event (shapes, origins) are looked up by content, per thread.
class TextCache
{
public:
    StringId get(const std::string &text)
    {
        if (auto it = m_ids.find(text); it != m_ids.end())
            return it->second;
        return m_ids[text] = interner::intern(text);
    }

private:
    std::unordered_map<std::string, StringId> m_ids;
};

thread_local TextCache t_texts;
thread_local std::string t_scratch;

void appendShape(std::string &out, const Tensor &t)
{
    out += '[';
    for (int64_t d = 0; d < t.dim(); ++d) {
        if (d)
            out += ',';
        out += std::to_string(t.size(d));
    }
    out += "] ";
    out += dtypeName(t.dtype());
}

StringId shapesOf(std::span<const Tensor> inputs)
{
    t_scratch.clear();
    for (const Tensor &t : inputs) {
        if (!t_scratch.empty())
            t_scratch += ", ";
        appendShape(t_scratch, t);
    }
    return t_texts.get(t_scratch);
}

StringId originsOf(std::span<const int> origins)
{
    if (origins.empty())
        return StringId(0);
    t_scratch.clear();
    for (int id : origins) {
        if (!t_scratch.empty())
            t_scratch += ',';
        t_scratch += std::to_string(id);
    }
    return t_texts.get(t_scratch);
}

double bytesOf(const OpCost &c)
{
    return c.bytesRead + c.bytesWritten;
}

} // namespace

void CpuBackend::opBegin(const OpEvent &e)
{
    if (record::on())
        record::begin(EventKind::Op, t_names.get(e.op->name()));
}

void CpuBackend::opEnd(const OpEvent &e)
{
    if (!record::on())
        return;
    const StringId shapes = m_options.recordShapes ? shapesOf(e.inputs) : StringId(0);
    record::endWith(t_names.get(e.op->name()), shapes, m_options.withFlops ? e.cost.flops : 0, bytesOf(e.cost));
}

void CpuBackend::kernelBegin(const KernelEvent &e)
{
    if (record::on())
        record::begin(EventKind::Kernel, t_names.get(e.name));
}

void CpuBackend::kernelEnd(const KernelEvent &e)
{
    if (!record::on())
        return;
    record::endWith(t_names.get(e.name), originsOf(e.origins), m_options.withFlops ? e.cost.flops : 0,
                    bytesOf(e.cost), e.opKernel ? record::kOpKernel : 0);
}

void CpuBackend::allocation(const AllocationEvent &e)
{
    if (m_options.profileMemory && record::on())
        record::allocation(e.address, e.bytes, e.allocatedAfter, e.reservedAfter, e.device.type == DeviceType::CPU ? -1 : e.device.index);
}

void CpuBackend::compileStageBegin(std::string_view stage)
{
    if (record::on())
        record::begin(EventKind::CompileStage, interner::intern(stage));
}

void CpuBackend::compileStageEnd(std::string_view stage)
{
    if (record::on())
        record::end(interner::intern(stage));
}

void CpuBackend::instant(std::string_view name, std::string_view detail)
{
    recordInstant(name, detail);
}

} // namespace fusescope::profiler
