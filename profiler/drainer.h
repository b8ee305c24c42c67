#pragma once
// Decodes the threads' records into events, batch by batch: pairs begins
// with ends per thread, assigns tracks and depths, binds flows and
// allocations to the range they happened in, and numbers the events of a
// batch in (track, start) order so the store can chunk them.

#include "profiler/recorder.h"
#include "profiler/trace.h"

#include <unordered_map>
#include <vector>

namespace fusescope::profiler {

class Drainer
{
public:
    // Starts numbering events and tracks afresh; ranges still open belong to
    // the previous run and are dropped.
    void beginRun(int64_t originNs);
    // Decodes everything recorded so far; keep=false throws it away (warm-up).
    void collect(bool keep);
    // The events collected since the last batch, numbered and sorted.
    EventBatch takeBatch();

    uint64_t events() const { return m_nextEvent; }
    uint64_t dropped() const { return m_dropped; }

private:
    struct Open {
        int64_t start = 0;
        StringId name;
        EventKind kind = EventKind::Op;
        TrackId track;
        uint8_t depth = 0;
        int childKernels = 0;
        std::vector<uint64_t> flowsOut, flowsIn;
        std::vector<uint32_t> allocations; // indices into the current batch
    };
    struct Thread {
        std::vector<Open> stack;
        uint8_t threadDepth = 0;  // open ranges on the thread's track
        uint8_t compileDepth = 0; // open compile stages
        TrackId track;
    };
    struct FlowSide {
        uint32_t index = 0; // local in batch `batch` until final
        uint32_t batch = 0;
        bool set = false;
        bool final = false;
    };
    struct PendingFlow {
        FlowSide from, to;
    };

    void drain(record::ThreadBuffer &b);
    void decode(const uint64_t *p, Thread &t, const record::ThreadBuffer &b);
    void begin(const uint64_t *p, Thread &t, const record::ThreadBuffer &b);
    void end(const uint64_t *p, Thread &t);
    Open pop(Thread &t);
    void emitRange(Open &o, int64_t endNs, const uint64_t *p, Thread &t);
    void bindToRange(Open &o, uint32_t local);
    void handToParent(Open &o, Thread &t);
    void instant(const uint64_t *p, Thread &t, const record::ThreadBuffer &b);
    void allocation(const uint64_t *p, Thread &t, const record::ThreadBuffer &b);
    void counter(const uint64_t *p);
    void flowEnd(uint64_t id, bool out, uint32_t local);
    TrackId threadTrack(Thread &t, const record::ThreadBuffer &b);
    TrackId compileTrack();
    TrackId counterTrack(StringId name);
    TrackId addTrack(Track track);
    uint32_t push(const Event &e);
    void finalizeFlows(const std::vector<uint32_t> &finalOf, EventBatch &batch);

    int64_t m_origin = 0;
    clock::TickConverter m_clock;
    uint32_t m_batch = 0;
    uint32_t m_nextEvent = 0;
    uint64_t m_dropped = 0;
    size_t m_stringsSent = 0;
    std::unordered_map<const record::ThreadBuffer *, Thread> m_threads;
    std::unordered_map<uint64_t, PendingFlow> m_flows;
    std::unordered_map<uint32_t, TrackId> m_counterTracks;
    TrackId m_compileTrack;
    std::vector<Track> m_tracks;
    size_t m_tracksSent = 0;
    EventBatch m_pending;
};

} // namespace fusescope::profiler
