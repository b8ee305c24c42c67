#include "views/timelinemodel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

namespace fusescope {

using profiler::Event;
using profiler::EventId;
using profiler::TrackId;
using profiler::TrackKind;

namespace {

// CPU threads first: the reader follows the program, then what it launched.
int kindOrder(TrackKind kind)
{
    switch (kind) {
    case TrackKind::CpuThread: return 0;
    case TrackKind::CompileStages: return 1;
    case TrackKind::GpuStream: return 2;
    case TrackKind::Counter: return 3;
    }
    return 4;
}

bool displayBefore(const TimelineTrack &a, const TimelineTrack &b, const profiler::Run &run)
{
    auto key = [&](const TimelineTrack &t) {
        const bool real = t.id.valid();
        const profiler::Track *track = real ? &run.tracks[t.id.value] : nullptr;
        return std::make_tuple(t.pid, kindOrder(t.kind), track ? track->sortIndex : INT32_MAX,
                               track ? track->tid : INT64_MAX, real ? int(t.id.value) : INT32_MAX, t.name);
    };
    return key(a) < key(b);
}

std::string groupName(const TimelineGroup &group, const std::vector<TimelineTrack> &tracks,
                      const profiler::Run &run)
{
    int device = -1;
    bool allGpu = true;
    for (int t : group.tracks) {
        const TimelineTrack &track = tracks[size_t(t)];
        if (track.kind == TrackKind::Counter)
            continue;
        allGpu = allGpu && track.kind == TrackKind::GpuStream;
        if (track.id.valid())
            device = std::max(device, run.tracks[track.id.value].device);
    }
    if (allGpu && device >= 0)
        return "GPU " + std::to_string(device) + " (pid " + std::to_string(group.pid) + ")";
    return "process " + std::to_string(group.pid);
}

// The first index in [lo, hi) for which pred is false (pred true, then false).
template <typename Pred> size_t partitionPoint(size_t lo, size_t hi, Pred pred)
{
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (pred(mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// A lane while its track is indexed, before it is packed.
struct LaneBuild {
    int depth = 0;
    std::vector<EventId> ids;
    std::vector<int64_t> ends;
    int64_t lastEnd = INT64_MIN;
};

} // namespace

// ---- TimelineLaneEvents ----

TimelineLaneEvents::TimelineLaneEvents(std::span<const EventId> ids, std::span<const int64_t> ends)
{
    packIds(ids);
    packEnds(ends);
}

void TimelineLaneEvents::packIds(std::span<const EventId> ids)
{
    m_idBlocks.resize((ids.size() + kIdMask) >> kIdShift);
    m_ids.resize(ids.size());
    for (size_t b = 0; b < m_idBlocks.size(); ++b) {
        const auto from = ids.begin() + long(b << kIdShift), to = ids.begin() + long(std::min(ids.size(), (b + 1) << kIdShift));
        const auto [low, high] = std::minmax_element(from, to);
        IdBlock &block = m_idBlocks[b];
        if (high->value - low->value > UINT16_MAX) {
            block.wideAt = uint32_t(m_wideIds.size());
            for (auto it = from; it != to; ++it)
                m_wideIds.push_back(it->value);
            continue;
        }
        block.base = low->value;
        for (auto it = from; it != to; ++it)
            m_ids[size_t(it - ids.begin())] = uint16_t(it->value - block.base);
    }
    m_wideIds.shrink_to_fit();
}

// The coarsest blocks whose ends all fit 32 bits above their base.
void TimelineLaneEvents::packEnds(std::span<const int64_t> ends)
{
    for (int shift = kMaxEndShift; shift >= kMinEndShift; --shift)
        if (packEnds(ends, shift))
            return;
    m_endBases = {};
    m_ends = {};
    m_wideEnds.assign(ends.begin(), ends.end());
}

bool TimelineLaneEvents::packEnds(std::span<const int64_t> ends, int shift)
{
    const size_t block = size_t(1) << shift;
    m_endShift = shift;
    m_endBases.assign((ends.size() + block - 1) / block, 0);
    m_ends.resize(ends.size());
    for (size_t b = 0; b < m_endBases.size(); ++b) {
        const auto from = ends.begin() + long(b * block), to = ends.begin() + long(std::min(ends.size(), (b + 1) * block));
        const auto [low, high] = std::minmax_element(from, to);
        // Unsigned: a corrupt trace's extreme times must not overflow the spread.
        if (uint64_t(*high) - uint64_t(*low) > UINT32_MAX)
            return false;
        m_endBases[b] = *low;
        for (auto it = from; it != to; ++it)
            m_ends[size_t(it - ends.begin())] = uint32_t(uint64_t(*it) - uint64_t(*low));
    }
    return true;
}

// The first i in [from, last) for which before(i) is false (true, then
// false), galloping from `from`: a fold's jumps are short next to the lane,
// so the search stays in the cache lines it starts in.
template <typename Before>
size_t TimelineLaneEvents::gallop(size_t from, size_t last, Before before)
{
    if (from >= last || !before(from))
        return from;
    size_t lo = from, step = 1;
    while (lo + step < last && before(lo + step)) {
        lo += step;
        step *= 2;
    }
    return partitionPoint(lo + 1, std::min(last, lo + step + 1), before);
}

// The lane's packing is chosen once, outside the loop, so probes do not
// branch on it. Most jumps end in the block they start in: there the search
// compares the packed offsets themselves, as over a plain array (adding each
// probe's base measured 25-35 % slower folds). Forced inline into its two
// callers, both in this file: a call per fold jump measured 10-30 % slower.
[[gnu::always_inline]] inline size_t TimelineLaneEvents::firstEndAtOrAfter(size_t from, size_t last, int64_t t) const
{
    if (!m_wideEnds.empty())
        return gallop(from, last, [&](size_t i) { return m_wideEnds[i] < t; });
    if (from >= last)
        return last;
    const size_t block = from >> m_endShift, stop = std::min(last, (block + 1) << m_endShift);
    if (t <= m_endBases[block])
        return from;
    // Unsigned: t and the base may be far apart in a corrupt trace.
    const uint64_t offset = uint64_t(t) - uint64_t(m_endBases[block]);
    if (offset <= UINT32_MAX) {
        const uint32_t *ends = m_ends.data(), target = uint32_t(offset);
        const size_t k = gallop(from, stop, [&](size_t i) { return ends[i] < target; });
        if (k < stop || stop == last)
            return k;
    }
    return gallop(stop, last, [&](size_t i) { return narrowEndAt(i) < t; });
}

size_t TimelineLaneEvents::bytes() const
{
    return m_idBlocks.capacity() * sizeof(IdBlock) + m_ids.capacity() * sizeof(uint16_t) +
           m_wideIds.capacity() * sizeof(uint32_t) + m_endBases.capacity() * sizeof(int64_t) +
           m_ends.capacity() * sizeof(uint32_t) + m_wideEnds.capacity() * sizeof(int64_t);
}

// ---- TimelineModel ----

void TimelineModel::clear()
{
    m_trace.reset();
    m_run = nullptr;
    m_runIndex = -1;
    m_groups.clear();
    m_tracks.clear();
    m_lanes.clear();
    m_trackOfId.clear();
    m_begin = 0;
    m_end = 1;
}

void TimelineModel::setRun(std::shared_ptr<const profiler::Trace> trace, int run)
{
    clear();
    if (!trace || run < 0 || size_t(run) >= trace->runs.size())
        return;
    m_trace = std::move(trace);
    m_runIndex = run;
    m_run = &m_trace->runs[size_t(run)];
    buildTracks();
    buildGroups();
    buildLanes();
    addCounters();
    computeSpan();
}

void TimelineModel::buildTracks()
{
    for (const profiler::Track &t : m_run->tracks) {
        TimelineTrack track;
        track.id = t.id;
        track.kind = t.kind;
        track.name = m_trace->strings[t.name];
        track.pid = t.pid;
        m_tracks.push_back(std::move(track));
    }
    addMemoryCounters();
    std::stable_sort(m_tracks.begin(), m_tracks.end(),
                     [&](const TimelineTrack &a, const TimelineTrack &b) { return displayBefore(a, b, *m_run); });
    m_trackOfId.assign(m_run->tracks.size(), -1);
    for (size_t i = 0; i < m_tracks.size(); ++i)
        if (m_tracks[i].id.valid() && m_tracks[i].id.value < m_trackOfId.size())
            m_trackOfId[m_tracks[i].id.value] = int(i);
}

// The allocator's reserved bytes are only in the allocations, and so are the
// allocated bytes of a recording (an import has them as a counter track
// already, "memory allocated · GPU 0" or "GPU 0 memory allocated (bytes)"):
// one derived counter per (process, what, device) the run lacks.
void TimelineModel::addMemoryCounters()
{
    using Key = std::tuple<int64_t, std::string, std::string>;
    std::map<Key, std::vector<CounterPoint>> series;
    for (const profiler::Allocation &a : m_run->allocations) {
        const int64_t pid = a.track.valid() && a.track.value < m_run->tracks.size() ? m_run->tracks[a.track.value].pid : 0;
        const std::string device = a.device < 0 ? std::string("CPU") : "GPU " + std::to_string(a.device);
        series[{pid, "memory allocated", device}].push_back({a.time, double(a.allocatedAfter)});
        if (a.reservedAfter > 0)
            series[{pid, "memory reserved", device}].push_back({a.time, double(a.reservedAfter)});
    }
    for (auto &[key, points] : series) {
        const int64_t pid = std::get<0>(key);
        const std::string &what = std::get<1>(key), &device = std::get<2>(key);
        const bool recorded = std::any_of(m_tracks.begin(), m_tracks.end(), [&](const TimelineTrack &t) {
            return t.kind == TrackKind::Counter && t.pid == pid && t.name.find(what) != std::string::npos &&
                   t.name.find(device) != std::string::npos;
        });
        if (recorded)
            continue;
        TimelineTrack t;
        t.kind = TrackKind::Counter;
        t.pid = pid;
        t.name = what + " · " + device;
        t.counter = std::move(points);
        m_tracks.push_back(std::move(t));
    }
}

void TimelineModel::buildGroups()
{
    for (size_t i = 0; i < m_tracks.size(); ++i) {
        if (m_groups.empty() || m_groups.back().pid != m_tracks[i].pid)
            m_groups.push_back({m_tracks[i].pid, {}, {}});
        m_groups.back().tracks.push_back(int(i));
        m_tracks[i].group = int(m_groups.size()) - 1;
    }
    for (TimelineGroup &g : m_groups)
        g.name = groupName(g, m_tracks, *m_run);
}

// A counting sort by track keeps EventId order inside a track, which is
// already start order for a single batch; a track that spans batches is
// sorted only when its batches interleave.
void TimelineModel::buildLanes()
{
    const std::vector<Event> &events = m_run->events;
    std::vector<uint32_t> offset(m_run->tracks.size() + 1, 0);
    for (const Event &e : events)
        if (e.track.value < m_run->tracks.size())
            ++offset[e.track.value + 1];
    std::partial_sum(offset.begin(), offset.end(), offset.begin());
    std::vector<EventId> byTrack(offset.back());
    std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
    for (uint32_t i = 0; i < events.size(); ++i)
        if (events[i].track.value < m_run->tracks.size())
            byTrack[fill[events[i].track.value]++] = EventId(i);
    for (size_t t = 0; t < m_tracks.size(); ++t) {
        const TrackId id = m_tracks[t].id;
        if (!id.valid() || m_tracks[t].kind == TrackKind::Counter)
            continue;
        std::span<EventId> span(byTrack.data() + offset[id.value], byTrack.data() + offset[id.value + 1]);
        auto byStart = [&](EventId a, EventId b) { return events[a.value].start < events[b.value].start; };
        if (!std::is_sorted(span.begin(), span.end(), byStart))
            std::stable_sort(span.begin(), span.end(), byStart);
        addTrackLanes(int(t), span);
    }
}

// One lane per depth; an event that overlaps the previous one of its depth
// (a GPU stream with overlapping records, a depth clamped at 255) opens a
// further lane of that depth, so no lane ever holds two overlapping events.
void TimelineModel::addTrackLanes(int track, std::span<const EventId> events)
{
    std::vector<std::vector<int>> lanesOfDepth; // depth → indices into `local`
    std::vector<LaneBuild> local;
    for (EventId id : events) {
        const Event &e = event(id);
        if (lanesOfDepth.size() <= e.depth)
            lanesOfDepth.resize(e.depth + 1u);
        std::vector<int> &candidates = lanesOfDepth[e.depth];
        auto fits = std::find_if(candidates.begin(), candidates.end(), [&](int l) { return local[size_t(l)].lastEnd <= e.start; });
        int lane = fits != candidates.end() ? *fits : -1;
        if (lane < 0) {
            lane = int(local.size());
            candidates.push_back(lane);
            local.push_back({e.depth, {}, {}, INT64_MIN});
        }
        LaneBuild &l = local[size_t(lane)];
        l.ids.push_back(id);
        l.ends.push_back(e.end());
        l.lastEnd = std::max(l.lastEnd, e.end());
    }
    TimelineTrack &t = m_tracks[size_t(track)];
    t.firstLane = int(m_lanes.size());
    for (const std::vector<int> &depth : lanesOfDepth)
        for (int l : depth) {
            LaneBuild &built = local[size_t(l)];
            m_lanes.push_back({track, built.depth, TimelineLaneEvents(built.ids, built.ends)});
            built = {}; // the unpacked copy goes at once: the peak stays one lane's
        }
    t.laneCount = int(m_lanes.size()) - t.firstLane;
}

void TimelineModel::addCounters()
{
    for (const profiler::CounterSample &s : m_run->counters) {
        const int t = trackIndex(s.track);
        if (t >= 0)
            m_tracks[size_t(t)].counter.push_back({s.time, s.value});
    }
    for (TimelineTrack &t : m_tracks) {
        std::stable_sort(t.counter.begin(), t.counter.end(),
                         [](const CounterPoint &a, const CounterPoint &b) { return a.time < b.time; });
        for (const CounterPoint &p : t.counter)
            t.counterMax = std::max(t.counterMax, p.value);
    }
}

void TimelineModel::computeSpan()
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Event &e : m_run->events) {
        lo = std::min(lo, e.start);
        hi = std::max(hi, e.end());
    }
    for (const TimelineTrack &t : m_tracks)
        if (!t.counter.empty()) {
            lo = std::min(lo, t.counter.front().time);
            hi = std::max(hi, t.counter.back().time);
        }
    m_begin = lo == INT64_MAX ? 0 : lo;
    m_end = std::max(m_begin + 1, hi == INT64_MIN ? m_begin + 1 : hi);
}

size_t TimelineModel::indexBytes() const
{
    size_t bytes = m_lanes.capacity() * sizeof(TimelineLane);
    for (const TimelineLane &l : m_lanes)
        bytes += l.events.bytes();
    return bytes;
}

int TimelineModel::trackIndex(TrackId id) const
{
    return id.valid() && id.value < m_trackOfId.size() ? m_trackOfId[id.value] : -1;
}

int TimelineModel::laneOf(EventId id) const
{
    if (!m_run || id.value >= m_run->events.size())
        return -1;
    const Event &e = event(id);
    const int t = trackIndex(e.track);
    if (t < 0)
        return -1;
    const TimelineTrack &track = m_tracks[size_t(t)];
    for (int l = track.firstLane; l < track.firstLane + track.laneCount; ++l) {
        const TimelineLane &lane = m_lanes[size_t(l)];
        if (lane.depth != e.depth)
            continue;
        const size_t n = lane.events.size();
        size_t i = partitionPoint(0, n, [&](size_t k) { return startAt(lane, k) < e.start; });
        for (; i < n && startAt(lane, i) == e.start; ++i)
            if (lane.events[i] == id)
                return l;
    }
    return -1;
}

std::pair<size_t, size_t> TimelineModel::visibleRange(int lane, int64_t t0, int64_t t1) const
{
    const TimelineLane &l = m_lanes[size_t(lane)];
    // Ends are sorted as starts are, because a lane's events never overlap;
    // and an event after one that ends past t1 starts past t1, so the ends
    // answer both questions and only the boundary event's start is looked up.
    const size_t n = l.events.size(), first = l.events.firstEndAtOrAfter(0, n, t0);
    const size_t past = t1 == INT64_MAX ? n : l.events.firstEndAtOrAfter(first, n, t1 + 1);
    return {first, past < n && startAt(l, past) <= t1 ? past + 1 : past};
}

void TimelineModel::drawItems(int lane, int64_t t0, int64_t t1, double nsPerPixel, std::vector<TimelineDrawItem> &out,
                              double foldPixels) const
{
    const TimelineLane &l = m_lanes[size_t(lane)];
    auto [i, last] = visibleRange(lane, t0, t1);
    const int64_t minNs = std::max<int64_t>(1, int64_t(std::ceil(foldPixels * nsPerPixel)));
    while (i < last) {
        const EventId id = l.events[i];
        const Event &e = event(id);
        if (e.duration >= minNs) {
            out.push_back({e.start, e.end(), 1, id});
            ++i;
        } else {
            i = foldRun(l, i, last, minNs, out);
        }
    }
}

// Gathers the narrow events from `first` on that would share pixels, jumping
// over each stretch that ends within minNs of the run's end with one binary
// search, so the cost is the run's width in pixels, not its events.
size_t TimelineModel::foldRun(const TimelineLane &lane, size_t first, size_t last, int64_t minNs,
                              std::vector<TimelineDrawItem> &out) const
{
    TimelineDrawItem item{startAt(lane, first), endAt(lane, first), 1, lane.events[first]};
    auto consider = [&](size_t k) {
        item.end = std::max(item.end, endAt(lane, k));
        const EventId id = lane.events[k];
        if (event(id).duration > event(item.event).duration)
            item.event = id;
    };
    size_t j = first + 1;
    while (j < last) {
        const size_t k = lane.events.firstEndAtOrAfter(j, last, item.end + minNs);
        if (k > j) {
            consider(k - 1);
            j = k;
        }
        if (j == last)
            break;
        const Event &next = event(lane.events[j]);
        // The jump moved the run's end: the gap is measured from there.
        if (next.duration >= minNs || next.start >= item.end + minNs)
            break;
        consider(j++);
    }
    item.count = uint32_t(j - first);
    out.push_back(item);
    return j;
}

void TimelineModel::counterSteps(int track, int64_t t0, int64_t t1, double nsPerPixel, std::vector<CounterStep> &out) const
{
    const std::vector<CounterPoint> &points = m_tracks[size_t(track)].counter;
    auto byTime = [](const CounterPoint &p, int64_t t) { return p.time < t; };
    auto it = std::upper_bound(points.begin(), points.end(), t0, [](int64_t t, const CounterPoint &p) { return t < p.time; });
    if (it != points.begin())
        --it;
    const int64_t column = std::max<int64_t>(1, int64_t(nsPerPixel));
    while (it != points.end() && it->time <= t1) {
        auto next = std::lower_bound(it + 1, points.end(), it->time + column, byTime);
        CounterStep step{it->time, it->value, it->value, (next - 1)->value};
        for (auto p = it; p != next; ++p) {
            step.min = std::min(step.min, p->value);
            step.max = std::max(step.max, p->value);
        }
        out.push_back(step);
        it = next;
    }
}

// ---- ruler ----

TimeTicks timeTicks(int64_t t0, int64_t t1, double pixels, double minSpacing)
{
    TimeTicks ticks;
    const double nsPerPixel = double(std::max<int64_t>(1, t1 - t0)) / std::max(1.0, pixels);
    const double wanted = nsPerPixel * minSpacing;
    int64_t step = 1;
    for (int64_t decade = 1; decade <= INT64_MAX / 10; decade *= 10) {
        step = decade * 5;
        if (decade >= wanted) { step = decade; break; }
        if (decade * 2 >= wanted) { step = decade * 2; break; }
        if (decade * 5 >= wanted) break;
    }
    ticks.stepNs = step;
    ticks.firstNs = t0 >= 0 ? (t0 + step - 1) / step * step : -(-t0 / step * step);
    static constexpr std::pair<int64_t, const char *> kUnits[] = {
        {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "µs"}, {1, "ns"}};
    for (const auto &[unitNs, unit] : kUnits)
        if (unitNs <= step * 2) {
            ticks.unitNs = unitNs;
            ticks.unit = unit;
            break;
        }
    ticks.decimals = step < ticks.unitNs ? 1 : 0;
    return ticks;
}

std::string formatTick(int64_t ns, const TimeTicks &ticks)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f %s", ticks.decimals, double(ns) / double(ticks.unitNs), ticks.unit);
    return text;
}

std::string formatDuration(int64_t ns)
{
    static constexpr std::pair<double, const char *> kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}};
    const double magnitude = std::abs(double(ns));
    char text[64];
    for (const auto &[unitNs, unit] : kUnits)
        if (magnitude >= unitNs) {
            const double v = double(ns) / unitNs;
            const int decimals = std::abs(v) >= 100 ? 1 : std::abs(v) >= 10 ? 2 : 3;
            std::snprintf(text, sizeof text, "%.*f %s", decimals, v, unit);
            return text;
        }
    std::snprintf(text, sizeof text, "%lld ns", static_cast<long long>(ns));
    return text;
}

} // namespace fusescope
