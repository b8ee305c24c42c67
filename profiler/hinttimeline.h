#pragma once
// What the device rules read: a run's GPU work as one busy/idle timeline and
// its steps, plus the small helpers every device rule shares (evidence,
// severity, wording). Built per rule call from the run, O(n log n) in the
// GPU events. Every GPU of the run counts together: "idle" means no GPU of
// the run is busy, which is what a single-GPU trace means by it and keeps
// multi-rank imports from inventing idle time on one rank.

#include "profiler/hints.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace fusescope::profiler::hinting {

struct Interval {
    int64_t start = 0; // ns
    int64_t end = 0;
    int64_t length() const { return end - start; }
};

// Sorted by start, overlaps joined.
std::vector<Interval> mergeIntervals(std::vector<Interval> intervals);
// How much of `a` the merged, sorted `intervals` cover.
int64_t coveredBy(Interval a, const std::vector<Interval> &intervals);

class DeviceTimeline
{
public:
    DeviceTimeline(const Trace &trace, const Run &run);

    bool hasGpu() const { return !m_activity.empty(); }
    // Kernels, copies and sets on GPU stream tracks, by start.
    const std::vector<EventId> &activity() const { return m_activity; }
    // The union of the GPU work and of the profiler's own overhead events
    // (their time is the profiler's, not the program's, so it is never idle).
    const std::vector<Interval> &busy() const { return m_busy; }
    std::vector<Interval> idleIn(Interval window) const;
    int64_t busyIn(Interval window) const;
    // From the first GPU work to the end of the last.
    Interval span() const { return m_span; }

    // The run's Step events, by start.
    const std::vector<EventId> &steps() const { return m_steps; }
    // Where a step's device work begins: its first runtime call or GPU work,
    // whichever comes first; the step's end when it has neither.
    int64_t leadInEnd(const Event &step) const;
    // The time the hints measure shares against: the steps together, or the
    // GPU span when the run has no steps.
    int64_t baseNs() const;

private:
    std::vector<Interval> collect(const Trace &trace, const Run &run);

    const Run &m_run;
    std::vector<EventId> m_activity;
    std::vector<EventId> m_steps;
    std::vector<int64_t> m_runtimeStarts; // runtime calls on CPU threads, sorted
    std::vector<Interval> m_busy;
    Interval m_span;
};

// The context's device timeline, built on first use.
const DeviceTimeline &timelineOf(const HintContext &ctx);

// Evidence lists stop here: enough to click through, small enough to read.
constexpr size_t kMaxEvidence = 50;

// The `cap` heaviest events, heaviest first (ties: earlier id first).
std::vector<EventId> strongest(std::vector<std::pair<double, EventId>> weighted, size_t cap = kMaxEvidence);

// Critical from a quarter of the base time, Warning from a twentieth.
HintSeverity severityFor(double savingNs, int64_t baseNs);

// The fix in the words of the trace's framework ("pytorch", "nsys", else ours).
std::string inFramework(const std::string &framework, const char *pytorch, const char *nsys, const char *fusescope);

// "850 µs", "12.3 ms", "1.25 s".
std::string formatNs(double ns);
std::string formatPercent(double share); // 0.123 -> "12%"

// Whether `name` contains `word`, ignoring ASCII case.
bool containsNoCase(const std::string &name, const std::string &word);

// A message with numbers; long enough for any rule's sentence.
std::string formatText(const char *pattern, auto... values)
{
    char text[512];
    std::snprintf(text, sizeof text, pattern, values...);
    return text;
}

HintRule makeRule(const char *id, const char *title, const char *thresholds,
                  std::vector<Hint> (*check)(const HintContext &));

} // namespace fusescope::profiler::hinting

namespace fusescope::profiler {

// The device rules of hintrules_device.cpp that read single events rather
// than the timeline (hintrules_calls.cpp): pageable-memcpy, sync-in-step,
// low-occupancy.
HintRule pageableMemcpyRule();
HintRule syncInStepRule();
HintRule lowOccupancyRule();

} // namespace fusescope::profiler
