#pragma once
// Writes a trace held in memory (an imported Kineto or Nsight trace, a
// collected recording) into a `.fstrace` file, so the tools that read the
// store (the SQL console, the sqlite3 shell) see it like a recorded one.

#include "profiler/trace.h"

#include <atomic>
#include <functional>
#include <string>

namespace fusescope::profiler {

struct SaveControl {
    // Called from the saving thread with 0 … 1, whenever it moved by 1 % or more.
    std::function<void(double fraction)> progress;
    // Another thread sets it to stop the save.
    const std::atomic<bool> *cancel = nullptr;
};

// Every run of `trace` with its events (ids kept), args, allocations, flows,
// counters, tracks and compile stages, and the trace's strings; replaces a
// file at `path`. Throws Error naming the file.
void saveTrace(const Trace &trace, const std::string &path);
// The same; false when cancelled, and then no file is left at `path`.
bool saveTrace(const Trace &trace, const std::string &path, const SaveControl &control);

} // namespace fusescope::profiler
