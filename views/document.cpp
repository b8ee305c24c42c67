#include "views/document.h"

namespace fusescope {

void setRecordedRun(Document &doc, std::shared_ptr<const profiler::Trace> trace, bool withHints)
{
    doc.trace = std::move(trace);
    doc.stats.reset();
    doc.hints.clear();
    if (!doc.trace || doc.trace->runs.empty())
        return;
    const profiler::Run &run = doc.trace->runs.front();
    auto stats = std::make_shared<profiler::RunStatistics>(profiler::computeStatistics(*doc.trace, run));
    if (withHints)
        doc.hints = profiler::computeHints(*doc.trace, run, *stats);
    doc.stats = std::move(stats);
}

} // namespace fusescope
