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
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fusescope {

// Events narrower than this many pixels are folded with their neighbours.
inline constexpr double kTimelineFoldPixels = 3.0;

// A lane's event ids in start order with their ends side by side (the fold's
// searches walk the ends instead of chasing ids into the 40-byte events),
// packed so that 10 M events fit in the 48 bytes an event the GUI may keep:
// about 6.3 bytes an event instead of 12.
//  - ends: a 32-bit offset an event from a 64-bit base per block of up to
//    4096 (fewer where a lane is sparse), so the bases stay in L1 and a
//    search inside a block compares the offsets alone, as over a plain array
//    (blocks of 64 measured 25-35 % slower folds, 55-90 % with a per-probe
//    branch for blocks kept whole). A lane too sparse even for blocks of 64
//    (64 events over 4.3 s) keeps its ends whole;
//  - ids: per block of 64 a 32-bit base, per event a 16-bit offset; a block
//    whose ids spread too far (it spans a recorder batch) keeps them whole.
class TimelineLaneEvents
{
public:
    TimelineLaneEvents() = default;
    // ends[i] is the end of ids[i]; both as long; ends sorted.
    TimelineLaneEvents(std::span<const profiler::EventId> ids, std::span<const int64_t> ends);

    size_t size() const { return m_ids.size(); }
    bool empty() const { return m_ids.empty(); }
    profiler::EventId operator[](size_t i) const
    {
        const IdBlock &b = m_idBlocks[i >> kIdShift];
        return profiler::EventId(b.wideAt == kNarrow ? b.base + m_ids[i] : m_wideIds[b.wideAt + (i & kIdMask)]);
    }
    int64_t endAt(size_t i) const { return m_wideEnds.empty() ? narrowEndAt(i) : m_wideEnds[i]; }
    // Bytes held (capacity), for benchmarks.
    size_t bytes() const;

    class Iterator
    {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = profiler::EventId;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = profiler::EventId;
        Iterator() = default;
        Iterator(const TimelineLaneEvents *events, size_t i) : m_events(events), m_i(i) {}
        profiler::EventId operator*() const { return (*m_events)[m_i]; }
        Iterator &operator++() { ++m_i; return *this; }
        Iterator operator++(int) { Iterator before = *this; ++m_i; return before; }
        bool operator==(const Iterator &other) const { return m_i == other.m_i; }
    private:
        const TimelineLaneEvents *m_events = nullptr;
        size_t m_i = 0;
    };
    Iterator begin() const { return {this, 0}; }
    Iterator end() const { return {this, size()}; }
    // The ids unpacked (tests, and callers that want a plain vector).
    operator std::vector<profiler::EventId>() const { return std::vector<profiler::EventId>(begin(), end()); }

private:
    friend class TimelineModel; // its searches, defined inline in its file
    // The first i in [from, last) whose end is at or after t, else last.
    size_t firstEndAtOrAfter(size_t from, size_t last, int64_t t) const;

    static constexpr int kIdShift = 6;
    static constexpr size_t kIdMask = (size_t(1) << kIdShift) - 1;
    static constexpr uint32_t kNarrow = UINT32_MAX;
    static constexpr int kMaxEndShift = 12, kMinEndShift = 6;
    struct IdBlock {
        uint32_t base = 0;
        uint32_t wideAt = kNarrow; // else the block's first index into m_wideIds
    };
    int64_t narrowEndAt(size_t i) const { return m_endBases[i >> m_endShift] + int64_t(m_ends[i]); }
    template <typename Before> static size_t gallop(size_t from, size_t last, Before before);
    void packIds(std::span<const profiler::EventId> ids);
    void packEnds(std::span<const int64_t> ends);
    bool packEnds(std::span<const int64_t> ends, int shift);

    std::vector<IdBlock> m_idBlocks;
    std::vector<uint16_t> m_ids; // narrow blocks: id - base
    std::vector<uint32_t> m_wideIds;
    int m_endShift = kMaxEndShift;
    std::vector<int64_t> m_endBases; // per block of 2^m_endShift: its least end
    std::vector<uint32_t> m_ends;    // end - its block's base
    std::vector<int64_t> m_wideEnds; // instead of the above, for a lane too sparse for them
};

// One lane: events of one track at one depth that never overlap, by start
// time — so their ends are sorted too, and both can be binary-searched.
struct TimelineLane {
    int track = 0;  // index into TimelineModel::tracks()
    int depth = 0;
    TimelineLaneEvents events;
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
    // Bytes the lanes' per-event index holds (capacity), for benchmarks.
    size_t indexBytes() const;

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
    static int64_t endAt(const TimelineLane &lane, size_t i) { return lane.events.endAt(i); }

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
