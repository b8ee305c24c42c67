#pragma once
// The SQL console's `events` table: the events of the runs the window has
// loaded, served from memory by an SQLite virtual table. The file keeps
// events as encoded chunks, which SQL cannot read; this table is what makes
// "the kernels by total time" one query.

#include "profiler/trace.h"

#include <memory>
#include <vector>

struct sqlite3;

namespace fusescope {

struct SqlTableSchema;

// One loaded run: its id in the file (the `run` column) and the trace whose
// only run it is.
struct SqlEventRun {
    int64_t run = 0;
    std::shared_ptr<const profiler::Trace> trace;
};
using SqlEventRuns = std::vector<SqlEventRun>;

// Makes `events` readable on `db` for as long as the connection lives; the
// connection keeps `runs` alive. Returns an SQLite result code.
int registerEventsTable(sqlite3 *db, std::shared_ptr<const SqlEventRuns> runs);

// The table as the console's schema list shows it.
SqlTableSchema eventsTableSchema();

} // namespace fusescope
