#pragma once
// Reads any trace file the CLI accepts into memory — Fusescope's own, or an
// imported PyTorch profiler / Kineto JSON or Nsight Systems export — with one
// error message that names the file and what is wrong.

#include "profiler/trace.h"

#include <QStringList>

namespace fusescope {

// Throws Error. Runs whose capture was cut short are returned, flagged
// incomplete (Run::summary.complete == false).
profiler::Trace readTraceFile(const QString &path);
// Several files are the per-rank traces of one run (Kineto JSON only): one
// trace with a process group per rank.
profiler::Trace readTraceFiles(const QStringList &paths);

} // namespace fusescope
