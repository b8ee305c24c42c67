#include "profiler/trace.h"

#include <algorithm>
#include <functional>

namespace fusescope::profiler {

namespace {

uint32_t hash32(std::string_view s)
{
    const size_t h = std::hash<std::string_view>{}(s);
    return uint32_t(h ^ (h >> 32));
}

} // namespace

StringId StringTable::intern(std::string_view s)
{
    if (s.empty())
        return StringId(0);
    if (m_slots.empty()) { // the first intern indexes what push() added
        for (uint32_t i = 1; i < m_strings.size(); ++i)
            index(i);
    }
    if ((m_indexed + 1) * 2 > m_slots.size())
        growIndex();
    const uint32_t h = hash32(s);
    const size_t slot = slotOf(s, h);
    if (m_slots[slot] != 0)
        return StringId(uint32_t(m_slots[slot]));
    const auto id = static_cast<uint32_t>(m_strings.size());
    m_strings.emplace_back(s);
    m_slots[slot] = uint64_t(h) << 32 | id;
    ++m_indexed;
    return StringId(id);
}

// The slot holding s, or the empty one where it would go.
size_t StringTable::slotOf(std::string_view s, uint32_t h) const
{
    const size_t mask = m_slots.size() - 1;
    size_t i = h & mask;
    while (m_slots[i] != 0 && !(uint32_t(m_slots[i] >> 32) == h && m_strings[uint32_t(m_slots[i])] == s))
        i = (i + 1) & mask;
    return i;
}

// Adds an id; an equal string already indexed keeps its id.
void StringTable::index(uint32_t id)
{
    if ((m_indexed + 1) * 2 > m_slots.size())
        growIndex();
    const uint32_t h = hash32(m_strings[id]);
    const size_t slot = slotOf(m_strings[id], h);
    if (m_slots[slot] == 0) {
        m_slots[slot] = uint64_t(h) << 32 | id;
        ++m_indexed;
    }
}

void StringTable::growIndex()
{
    std::vector<uint64_t> old(std::max<size_t>(64, m_slots.size() * 2));
    old.swap(m_slots);
    const size_t mask = m_slots.size() - 1;
    for (const uint64_t slot : old) {
        if (slot == 0)
            continue;
        size_t i = (slot >> 32) & mask;
        while (m_slots[i] != 0)
            i = (i + 1) & mask;
        m_slots[i] = slot;
    }
}

void TraceCollector::beginRun(const RunInfo &info)
{
    Run &run = m_trace.runs.emplace_back();
    run.info = info;
    run.summary.complete = false;
}

void TraceCollector::write(EventBatch &&batch)
{
    for (size_t i = 0; i < batch.newStrings.size(); ++i) {
        if (batch.firstString + i == m_trace.strings.size())
            m_trace.strings.push(std::move(batch.newStrings[i]));
    }
    Run &run = m_trace.runs.back();
    run.tracks.insert(run.tracks.end(), batch.newTracks.begin(), batch.newTracks.end());
    run.events.insert(run.events.end(), batch.events.begin(), batch.events.end());
    run.args.insert(run.args.end(), batch.args.begin(), batch.args.end());
    run.allocations.insert(run.allocations.end(), batch.allocations.begin(), batch.allocations.end());
    run.flows.insert(run.flows.end(), batch.flows.begin(), batch.flows.end());
    run.counters.insert(run.counters.end(), batch.counters.begin(), batch.counters.end());
}

void TraceCollector::endRun(const RunSummary &summary)
{
    m_trace.runs.back().summary = summary;
}

} // namespace fusescope::profiler
