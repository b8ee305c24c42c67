#pragma once
// Reads a `.fstrace` file (docs/trace-format.md), read-only: its runs, the
// whole trace into memory, or only what a view shows (the events of one
// track in a time range, a level-of-detail summary), without loading the rest.

#include "profiler/lod.h"
#include "profiler/trace.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fusescope::profiler {

struct SchemaVersion {
    int major = 0;
    int minor = 0;
};

struct RunListing {
    RunInfo info;
    // complete is false when the capture was cut short, its writer killed
    // before endRun() included; events and durationNs then say how far it got.
    RunSummary summary;
    std::map<std::string, std::string> values; // TraceWriter::setRunValue's
};

struct LoadControl {
    // Called from the loading thread with 0 … 1, whenever it moved by 1 % or more.
    std::function<void(double fraction)> progress;
    // Another thread sets it to stop the load.
    const std::atomic<bool> *cancel = nullptr;
};

class TraceReader
{
public:
    // Opens `path` read-only and checks that it is a trace this build reads.
    // Throws Error naming the file: missing, not SQLite, another program's
    // SQLite, corrupt, truncated, or written by a newer major schema version.
    explicit TraceReader(const std::string &path);
    ~TraceReader();
    TraceReader(const TraceReader &) = delete;
    TraceReader &operator=(const TraceReader &) = delete;

    // Every call below is safe from any thread (they take turns) and throws
    // Error naming the file when the file turns out to be corrupt.
    const std::string &path() const { return m_path; }
    const TraceMeta &meta() const;
    SchemaVersion schemaVersion() const;
    const std::vector<RunListing> &runs() const;
    // The interned strings, read on the first call.
    const StringTable &strings();

    // Everything; nothing when cancelled.
    std::optional<Trace> load(const LoadControl &control = {});
    // Appends run `run` to into.runs, with events in EventId order; fills
    // into.strings first when it holds only "". False when cancelled (then
    // nothing is appended).
    bool loadRun(int run, Trace &into, const LoadControl &control = {});

    std::vector<Track> tracks(int run);
    // The events of `track` that overlap [t0, t1] (start <= t1 and end >= t0,
    // so a range that began before t0 is found), by start time. Decodes only
    // the chunks that overlap. `ids`, when given, receives their EventIds.
    std::vector<Event> events(int run, TrackId track, int64_t t0, int64_t t1, std::vector<EventId> *ids = nullptr);
    EventArgs args(int run, ArgsId id);
    // A level-of-detail summary (lod.h); nothing where the level would
    // summarize little (draw the events instead). For a run whose writer never
    // finished, it is computed from the track's events once and kept.
    std::optional<LodLevel> lod(int run, TrackId track, int level);
    CompileStages compileStages(int run);

private:
    struct State;

    std::string m_path;
    mutable std::mutex m_mutex;
    std::unique_ptr<State> m_state;
};

} // namespace fusescope::profiler
