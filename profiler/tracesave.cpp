#include "profiler/tracesave.h"

#include "profiler/tracewriter.h"

#include <algorithm>
#include <filesystem>

namespace fusescope::profiler {
namespace {

// Events per batch at most: each batch is one transaction and one progress step.
constexpr size_t kBatchEvents = 65536;

bool inOrder(const Event &a, const Event &b)
{
    return a.track < b.track || (a.track == b.track && a.start <= b.start);
}

// The end of the batch that begins at `begin`. The writer cuts a batch into
// chunks that must be sorted by (track, start), and event ids must stay what
// flows and allocations refer to, so a batch ends where that order breaks
// (a recorded run's own batch boundaries).
size_t batchEnd(const std::vector<Event> &events, size_t begin)
{
    const size_t limit = std::min(events.size(), begin + kBatchEvents);
    size_t end = begin + 1;
    while (end < limit && inOrder(events[end - 1], events[end]))
        ++end;
    return end;
}

// What a run holds besides its events travels with its first batch.
EventBatch firstBatch(const Trace &trace, const Run &run, bool withStrings)
{
    EventBatch b;
    b.args = run.args;
    b.allocations = run.allocations;
    b.flows = run.flows;
    b.counters = run.counters;
    b.newTracks = run.tracks;
    if (withStrings) {
        b.newStrings.reserve(trace.strings.size());
        for (uint32_t id = 0; id < trace.strings.size(); ++id)
            b.newStrings.push_back(trace.strings[StringId(id)]);
    }
    return b;
}

// Reports the share of all events written, in steps of 1 % or more.
class Progress
{
public:
    Progress(const Trace &trace, const SaveControl &control)
        : m_report(control.progress)
    {
        for (const Run &run : trace.runs)
            m_total += run.events.size();
    }
    void advance(size_t events)
    {
        m_done += events;
        const double fraction = m_total ? double(m_done) / double(m_total) : 1.0;
        if (m_report && fraction - m_reported >= 0.01) {
            m_reported = fraction;
            m_report(fraction);
        }
    }

private:
    std::function<void(double)> m_report;
    size_t m_total = 0;
    size_t m_done = 0;
    double m_reported = 0;
};

bool cancelled(const SaveControl &control)
{
    return control.cancel && control.cancel->load(std::memory_order_relaxed);
}

// Writes the events of `run` batch by batch; false when cancelled.
bool writeEvents(TraceWriter &writer, EventBatch first, const Run &run, const SaveControl &control,
                 Progress &progress)
{
    size_t begin = 0;
    EventBatch batch = std::move(first);
    do {
        if (cancelled(control))
            return false;
        const size_t end = run.events.empty() ? 0 : batchEnd(run.events, begin);
        batch.firstEvent = static_cast<uint32_t>(begin);
        batch.events.assign(run.events.begin() + ptrdiff_t(begin), run.events.begin() + ptrdiff_t(end));
        writer.write(std::move(batch));
        progress.advance(end - begin);
        batch = EventBatch();
        begin = end;
    } while (begin < run.events.size());
    return true;
}

bool writeRuns(TraceWriter &writer, const Trace &trace, const SaveControl &control)
{
    Progress progress(trace, control);
    for (size_t i = 0; i < trace.runs.size(); ++i) {
        const Run &run = trace.runs[i];
        writer.beginRun(run.info);
        if (!writeEvents(writer, firstBatch(trace, run, i == 0), run, control, progress))
            return false;
        writer.endRun(run.summary);
        if (!run.stages.empty())
            writer.writeCompileStages(int(i), run.stages);
    }
    return true;
}

} // namespace

void saveTrace(const Trace &trace, const std::string &path)
{
    saveTrace(trace, path, SaveControl{});
}

bool saveTrace(const Trace &trace, const std::string &path, const SaveControl &control)
{
    bool complete = false;
    {
        TraceWriter writer(path, trace.meta);
        complete = writeRuns(writer, trace, control);
        writer.close();
    }
    if (!complete) {
        std::error_code ignored; // the file was ours and is unwanted; nothing to tell the user
        std::filesystem::remove(path, ignored);
    }
    return complete;
}

} // namespace fusescope::profiler
