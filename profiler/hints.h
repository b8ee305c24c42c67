#pragma once
// The hints engine: rules over one run of a trace (and the compile stages the
// file holds) that answer "what do I change to go faster?". Every finding
// names its evidence (events, graph nodes), the threshold it crossed, an
// estimated saving, and a fix in the words of the trace's framework. Shared by
// `fusescope report` and the GUI's Hints view. Plain C++, no Qt.

#include "profiler/statistics.h"
#include "profiler/trace.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fusescope::profiler {

enum class HintSeverity { Info, Warning, Critical };
const char *hintSeverityName(HintSeverity severity); // "info", "warning", "critical"

struct Hint {
    std::string rule;  // the rule's id: "launch-bound", "unfused-pointwise" …
    HintSeverity severity = HintSeverity::Info;
    std::string message; // one sentence with the numbers: what was seen, against which threshold
    std::string fix;     // what to change, in the trace's framework's terms
    double savingUs = 0; // estimated, µs over the run
    std::vector<EventId> events; // evidence in the run
    std::vector<int> nodes;      // evidence in the captured graph (node ids), when the file has one
};

// What a rule reads: the trace, the run, its statistics (computed once for
// every rule), and the compile stages of the file's compiled run, if any (an
// eager run's hints may use the graph of the same model compiled in the same file).
namespace hinting {
class DeviceTimeline;
}

struct HintContext {
    const Trace &trace;
    const Run &run;
    const RunStatistics &stats;
    const CompileStages *stages = nullptr; // nullptr when the file holds none
    // "pytorch" for imported Kineto traces, "nsys" for Nsight exports, "fusescope" for our own.
    std::string framework;
    // The run's device timeline, built by the first rule that asks
    // (hinting::timelineOf) and shared by the rest: one pass over the events, not one per rule.
    mutable std::shared_ptr<const hinting::DeviceTimeline> timeline;
};

struct HintRule {
    std::string id;
    std::string title;
    std::string thresholds; // documented in words: "kernels < 10 µs, idle gaps > 50 % of the span"
    std::function<std::vector<Hint>(const HintContext &)> check;
};

// Every rule, in a fixed order (the ids are stable: tests and --json rely on them).
const std::vector<HintRule> &hintRules();

// Runs every rule on `run` and ranks the findings by estimated saving, largest first.
std::vector<Hint> computeHints(const Trace &trace, const Run &run, const RunStatistics &stats);

} // namespace fusescope::profiler
