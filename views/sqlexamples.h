#pragma once
// The SQL console's example queries, written against the `.fstrace` schema
// (profiler/tracestore.h, docs/trace-format.md). Events themselves are
// encoded in event_chunks, so the examples read what SQL can: runs, tracks,
// level-of-detail totals, memory, flows, counters and the compile stages.

#include <vector>

namespace fusescope {

struct SqlExample {
    const char *title;
    const char *sql;
};

const std::vector<SqlExample> &sqlExamples();

} // namespace fusescope
