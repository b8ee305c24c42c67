#pragma once
// Writes a trace as Chrome trace-event JSON in object form, which Perfetto
// and chrome://tracing open:
//   - one process per run (pid = run index + 1, named after the run) unless
//     the run's tracks carry their own pid (imports keep the source's ranks);
//   - one thread per track (tid = the track's tid; a tid two tracks of one
//     process share is replaced, so no two tracks merge);
//   - "X" slices for ranges, kernels, copies and runtime calls, "i" for
//     instants, "s"/"f" pairs for flows, "C" counters for memory (allocated
//     and reserved per device) and counter tracks, "M" for names and order.
// Times are µs with three decimals (exact ns) relative to each run's origin,
// so the runs of a file line up at 0 side by side.

#include "profiler/trace.h"

#include <iosfwd>
#include <string>

namespace fusescope::profiler {

// Streams the document to `out` event by event. Strings are escaped and
// invalid UTF-8 is replaced by U+FFFD, so the output is always valid JSON.
void exportChromeTrace(const Trace &trace, std::ostream &out);

// Throws Error naming the file when it cannot be created or written.
void exportChromeTrace(const Trace &trace, const std::string &path);

} // namespace fusescope::profiler
