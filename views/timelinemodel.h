#pragma once
// What the timeline draws, without Qt: one run's tracks in display order,
// their lanes (one per nesting depth), and per frame the draw items of a lane
// for a time window. Level of detail as in Tracy: the visible range of a lane
// is found by binary search, and a run of neighbours narrower than a few
// pixels becomes one folded item, found by jumping (binary search again)
// instead of walking it — so a frame costs about (lanes × pixels / 3 × log n),
// whatever the number of events.

#include "profiler/trace.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fusescope {

// Events narrower than this many pixels are folded with their neighbours.
inline constexpr double kTimelineFoldPixels = 3.0;

// One lane: events of one track at one depth that never overlap, by start
// time — so their ends are sorted too, and both can be binary-searched.
struct TimelineLane {
    int track = 0;  // index into TimelineModel::tracks()
    int depth = 0;
    std::vector<profiler::EventId> events;
    // events' ends, side by side: the fold's searches then walk 8 bytes an
    // event in one array instead of chasing ids into the 40-byte events.
    std::vector<int64_t> ends;
};

struct CounterPoint {
    int64_t time = 0;
    double value = 0;
};

struct TimelineTrack {
    profiler::TrackId id;   // invalid for a series derived from the allocations
    profiler::TrackKind kind = profiler::TrackKind::CpuThread;
    std::string name;
    int64_t pid = 0;
    int group = 0;          // index into TimelineModel::groups()
    int firstLane = 0;
    int laneCount = 0;
    std::vector<CounterPoint> counter; // counter tracks: samples by time
    double counterMax = 0;
};

// The tracks of one process (or rank), in display order.
struct TimelineGroup {
    int64_t pid = 0;
    std::string name;
    std::vector<int> tracks;
};

// What one lane draws in one frame: one event, or a folded run of events.
struct TimelineDrawItem {
    int64_t start = 0;
    int64_t end = 0;
    uint32_t count = 1;        // > 1: a folded run of this many events
    profiler::EventId event;   // the event; for a fold, the longest event it looked at (names and colours it)
    bool folded() const { return count > 1; }
};

// One counter sample point of a frame: the samples that share a pixel column,
// as their range and the value in effect after them.
struct CounterStep {
    int64_t time = 0;
    double min = 0;
    double max = 0;
    double last = 0;
};

class TimelineModel
{
public:
    // Builds the per-track indices of run `run` (O(n), plus a sort only for
    // tracks whose batches came out of order). The trace stays shared, unchanged.
    void setRun(std::shared_ptr<const profiler::Trace> trace, int run);
    void clear();

    const profiler::Trace *trace() const { return m_trace.get(); }
    const profiler::Run *run() const { return m_run; }
    int runIndex() const { return m_runIndex; }
    const profiler::Event &event(profiler::EventId id) const { return m_run->events[id.value]; }
    const std::string &name(profiler::EventId id) const { return m_trace->strings[event(id).name]; }

    const std::vector<TimelineGroup> &groups() const { return m_groups; }
    const std::vector<TimelineTrack> &tracks() const { return m_tracks; }
    const std::vector<TimelineLane> &lanes() const { return m_lanes; }
    int64_t begin() const { return m_begin; }
    int64_t end() const { return m_end; }

    // Indices [first, last) into lane's events of those overlapping [t0, t1]
    // (start <= t1 and end >= t0), by two binary searches.
    std::pair<size_t, size_t> visibleRange(int lane, int64_t t0, int64_t t1) const;
    // Appends to `out` what lane draws for [t0, t1] at nsPerPixel: events at
    // least foldPixels wide as themselves, every run of narrower neighbours
    // as one item. Every event of visibleRange lands in exactly one item.
    void drawItems(int lane, int64_t t0, int64_t t1, double nsPerPixel, std::vector<TimelineDrawItem> &out,
                   double foldPixels = kTimelineFoldPixels) const;
    // Appends the counter's steps for [t0, t1], one per pixel column at most,
    // starting with the value in effect at t0.
    void counterSteps(int track, int64_t t0, int64_t t1, double nsPerPixel, std::vector<CounterStep> &out) const;

    // The lane that holds `id`, or -1.
    int laneOf(profiler::EventId id) const;
    // The display index of a run track, or -1.
    int trackIndex(profiler::TrackId id) const;

private:
    void buildTracks();
    void buildGroups();
    void buildLanes();
    void addTrackLanes(int track, std::span<const profiler::EventId> events);
    void addCounters();
    void addMemoryCounters();
    void computeSpan();
    size_t foldRun(const TimelineLane &lane, size_t first, size_t last, int64_t minNs,
                   std::vector<TimelineDrawItem> &out) const;
    int64_t startAt(const TimelineLane &lane, size_t i) const { return event(lane.events[i]).start; }
    int64_t endAt(const TimelineLane &lane, size_t i) const { return lane.ends[i]; }
    static size_t firstEndingAtOrAfter(const TimelineLane &lane, size_t from, size_t last, int64_t t);

    std::shared_ptr<const profiler::Trace> m_trace;
    const profiler::Run *m_run = nullptr;
    int m_runIndex = -1;
    std::vector<TimelineGroup> m_groups;
    std::vector<TimelineTrack> m_tracks;
    std::vector<TimelineLane> m_lanes;
    std::vector<int> m_trackOfId; // TrackId → display index
    int64_t m_begin = 0;
    int64_t m_end = 1;
};

// Ruler ticks for [t0, t1] over `pixels`: a step of 1, 2 or 5 × 10^k ns at
// least minSpacing pixels wide, labelled in the unit (ns, µs, ms, s) that
// keeps its numbers short.
struct TimeTicks {
    int64_t stepNs = 1;
    int64_t firstNs = 0; // the first multiple of stepNs at or after t0
    int64_t unitNs = 1;
    const char *unit = "ns";
    int decimals = 0;
};
TimeTicks timeTicks(int64_t t0, int64_t t1, double pixels, double minSpacing = 90);
std::string formatTick(int64_t ns, const TimeTicks &ticks);
// A duration or time in the largest unit that keeps it at or above 1, 3 significant digits.
std::string formatDuration(int64_t ns);

} // namespace fusescope
