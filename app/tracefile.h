#pragma once
// Reads any trace file the CLI accepts into memory, with one error message
// that names the file and what is wrong.

#include "profiler/trace.h"

#include <QString>

namespace fusescope {

// Throws Error. Runs whose capture was cut short are returned, flagged
// incomplete (Run::summary.complete == false).
profiler::Trace readTraceFile(const QString &path);

} // namespace fusescope
