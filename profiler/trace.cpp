#include "profiler/trace.h"

namespace fusescope::profiler {

StringId StringTable::intern(std::string_view s)
{
    if (s.empty())
        return StringId(0);
    if (m_index.empty()) {
        for (uint32_t i = 1; i < m_strings.size(); ++i)
            m_index.emplace(m_strings[i], i);
    }
    if (auto it = m_index.find(s); it != m_index.end())
        return StringId(it->second);
    const auto id = static_cast<uint32_t>(m_strings.size());
    m_strings.emplace_back(s);
    m_index.emplace(m_strings.back(), id);
    return StringId(id);
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
