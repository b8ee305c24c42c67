#include "profiler/hinttimeline.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace fusescope::profiler::hinting {

namespace {

bool isGpuWork(EventKind kind)
{
    return kind == EventKind::Kernel || kind == EventKind::Memcpy || kind == EventKind::Memset;
}

// Kineto writes CUPTI's own cost as "overhead" events ("CUPTI Overhead",
// "Activity Buffer Request"): a gap they fill is the profiler's, not the program's.
bool isProfilerOverhead(const std::string &name)
{
    return containsNoCase(name, "overhead") || containsNoCase(name, "activity buffer request");
}

} // namespace

std::vector<Interval> mergeIntervals(std::vector<Interval> intervals)
{
    auto byStart = [](Interval a, Interval b) { return a.start < b.start; };
    // Callers mostly pass a sorted list with a short unsorted tail: sort the tail, then merge the two.
    const auto tail = std::is_sorted_until(intervals.begin(), intervals.end(), byStart);
    std::sort(tail, intervals.end(), byStart);
    std::inplace_merge(intervals.begin(), tail, intervals.end(), byStart);
    std::vector<Interval> merged;
    for (const Interval &i : intervals) {
        if (!merged.empty() && i.start <= merged.back().end)
            merged.back().end = std::max(merged.back().end, i.end);
        else
            merged.push_back(i);
    }
    return merged;
}

int64_t coveredBy(Interval a, const std::vector<Interval> &intervals)
{
    auto it = std::partition_point(intervals.begin(), intervals.end(), [&](Interval b) { return b.end <= a.start; });
    int64_t total = 0;
    for (; it != intervals.end() && it->start < a.end; ++it)
        total += std::min(a.end, it->end) - std::max(a.start, it->start);
    return total;
}

const DeviceTimeline &timelineOf(const HintContext &ctx)
{
    if (!ctx.timeline)
        ctx.timeline = std::make_shared<const DeviceTimeline>(ctx.trace, ctx.run);
    return *ctx.timeline;
}

namespace {

// Ids by start, ties by id (as a stable sort would leave them), sorted on
// (start, id) pairs side by side: sorting the ids through the 40-byte events
// cost seconds on 10 M of them.
std::vector<EventId> sortedByStart(const Run &run, const std::vector<EventId> &ids)
{
    std::vector<std::pair<int64_t, uint32_t>> keyed(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
        keyed[i] = {run.event(ids[i]).start, ids[i].value};
    std::sort(keyed.begin(), keyed.end());
    std::vector<EventId> out(ids.size());
    for (size_t i = 0; i < keyed.size(); ++i)
        out[i] = EventId(keyed[i].second);
    return out;
}

} // namespace

DeviceTimeline::DeviceTimeline(const Trace &trace, const Run &run)
    : m_run(run)
{
    std::vector<Interval> overhead = collect(trace, run);
    m_activity = sortedByStart(run, m_activity);
    m_steps = sortedByStart(run, m_steps);
    std::sort(m_runtimeStarts.begin(), m_runtimeStarts.end());
    // The GPU work in start order is the busy list already sorted; the few
    // overhead ranges join it.
    std::vector<Interval> busy;
    busy.reserve(m_activity.size() + overhead.size());
    for (EventId id : m_activity)
        busy.push_back({run.event(id).start, run.event(id).end()});
    busy.insert(busy.end(), overhead.begin(), overhead.end());
    m_busy = mergeIntervals(std::move(busy));
}

// GPU work, steps and runtime calls into their lists; returns the profiler's overhead ranges.
std::vector<Interval> DeviceTimeline::collect(const Trace &trace, const Run &run)
{
    std::vector<Interval> overhead;
    // Names are few and events many: each name is tested once.
    std::vector<int8_t> isOverhead(trace.strings.size(), -1);
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        const Event &e = run.events[i];
        const bool onGpu = e.track.value < run.tracks.size() && run.tracks[e.track.value].kind == TrackKind::GpuStream;
        if (onGpu && isGpuWork(e.kind)) {
            m_activity.push_back(EventId(i));
            const bool first = m_activity.size() == 1;
            m_span = {first ? e.start : std::min(m_span.start, e.start), first ? e.end() : std::max(m_span.end, e.end())};
        } else if (e.kind == EventKind::Step) {
            m_steps.push_back(EventId(i));
        } else if (e.kind == EventKind::Runtime && !onGpu) {
            m_runtimeStarts.push_back(e.start);
        } else if (e.duration > 0 && e.name.value < isOverhead.size()) {
            int8_t &known = isOverhead[e.name.value];
            if (known < 0)
                known = isProfilerOverhead(trace.strings[e.name]) ? 1 : 0;
            if (known)
                overhead.push_back({e.start, e.end()});
        }
    }
    return overhead;
}

std::vector<Interval> DeviceTimeline::idleIn(Interval window) const
{
    std::vector<Interval> gaps;
    auto it = std::partition_point(m_busy.begin(), m_busy.end(), [&](Interval b) { return b.end <= window.start; });
    int64_t cursor = window.start;
    for (; it != m_busy.end() && it->start < window.end; ++it) {
        if (it->start > cursor)
            gaps.push_back({cursor, it->start});
        cursor = std::max(cursor, it->end);
    }
    if (cursor < window.end)
        gaps.push_back({cursor, window.end});
    return gaps;
}

int64_t DeviceTimeline::busyIn(Interval window) const
{
    int64_t idle = 0;
    for (const Interval &gap : idleIn(window))
        idle += gap.length();
    return std::max<int64_t>(0, window.length() - idle);
}

int64_t DeviceTimeline::leadInEnd(const Event &step) const
{
    int64_t first = step.end();
    auto runtime = std::lower_bound(m_runtimeStarts.begin(), m_runtimeStarts.end(), step.start);
    if (runtime != m_runtimeStarts.end())
        first = std::min(first, *runtime);
    auto work = std::partition_point(m_activity.begin(), m_activity.end(),
                                     [&](EventId id) { return m_run.event(id).start < step.start; });
    if (work != m_activity.end())
        first = std::min(first, m_run.event(*work).start);
    return std::max(first, step.start);
}

int64_t DeviceTimeline::baseNs() const
{
    int64_t steps = 0;
    for (EventId id : m_steps)
        steps += m_run.event(id).duration;
    return m_steps.empty() ? m_span.length() : steps;
}

std::vector<EventId> strongest(std::vector<std::pair<double, EventId>> weighted, size_t cap)
{
    std::stable_sort(weighted.begin(), weighted.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<EventId> ids;
    for (size_t i = 0; i < weighted.size() && i < cap; ++i)
        ids.push_back(weighted[i].second);
    return ids;
}

HintSeverity severityFor(double savingNs, int64_t baseNs)
{
    const double share = baseNs > 0 ? savingNs / double(baseNs) : 0.0;
    return share >= 0.25 ? HintSeverity::Critical : share >= 0.05 ? HintSeverity::Warning : HintSeverity::Info;
}

std::string inFramework(const std::string &framework, const char *pytorch, const char *nsys, const char *fusescope)
{
    return framework == "pytorch" ? pytorch : framework == "nsys" ? nsys : fusescope;
}

std::string formatNs(double ns)
{
    char text[32];
    if (ns >= 1e9)
        std::snprintf(text, sizeof text, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        std::snprintf(text, sizeof text, "%.1f ms", ns / 1e6);
    else
        std::snprintf(text, sizeof text, "%.0f µs", ns / 1e3);
    return text;
}

std::string formatPercent(double share)
{
    char text[16];
    std::snprintf(text, sizeof text, "%.0f%%", share * 100.0);
    return text;
}

HintRule makeRule(const char *id, const char *title, const char *thresholds,
                  std::vector<Hint> (*check)(const HintContext &))
{
    return HintRule{id, title, thresholds, check};
}

bool containsNoCase(const std::string &name, const std::string &word)
{
    auto lower = [](unsigned char c) { return char(std::tolower(c)); };
    return std::search(name.begin(), name.end(), word.begin(), word.end(),
                       [&](char a, char b) { return lower(a) == lower(b); })
        != name.end();
}

} // namespace fusescope::profiler::hinting
