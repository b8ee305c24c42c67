#pragma once
// Two recorded runs side by side: the eager and the compiled run of one file,
// or runs of two files. Per op, kernel and graph node, the time and calls of
// each side and the delta; totals and the overall speedup. Shared by the
// GUI's Compare view and its tests; plain C++ like the rest of the analysis.

#include "profiler/statistics.h"
#include "profiler/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusescope::profiler {

// One side of a comparison: a run of a trace and its statistics.
struct CompareSide {
    const Trace *trace = nullptr;
    const Run *run = nullptr;
    const RunStatistics *stats = nullptr;
    std::string label; // "run 0 'eager'"
};

// One op, kernel or graph node; `base` is the first side, `other` the second.
struct DeltaRow {
    std::string name;
    std::string detail;  // kernels: "GPU 0" or "CPU"; nodes: the captured op ("aten.linear")
    int nodeId = -1;     // nodes: the captured node's id (its origin), for selection in the graph
    bool inBase = false; // seen on that side at all
    bool inOther = false;
    double baseCalls = 0;
    double otherCalls = 0;
    double baseNs = 0;
    double otherNs = 0;

    double deltaNs() const { return otherNs - baseNs; }
    // base / other: above 1 the second side is faster; 0 when either side is missing.
    double speedup() const { return baseNs > 0 && otherNs > 0 ? baseNs / otherNs : 0.0; }
};

struct RunComparison {
    std::string baseLabel;
    std::string otherLabel;
    // Times and calls per step when both runs have steps but not as many;
    // otherwise totals over each run. `perStep` says which.
    bool perStep = false;
    int64_t baseSteps = 0;
    int64_t otherSteps = 0;
    // The median step time (the run's duration without steps), and base / other.
    double baseStepNs = 0;
    double otherStepNs = 0;
    double speedup = 0;
    double baseKernelNs = 0; // every kernel's self time, so nested kernels count once
    double otherKernelNs = 0;
    std::vector<DeltaRow> ops;     // by name
    std::vector<DeltaRow> kernels; // by name and device
    std::vector<DeltaRow> nodes;   // captured graph nodes, by origin
    // How the eager side's ops were matched to captured nodes, and what the
    // reader must know: "per step: run 0 has 3 steps, run 1 has 2".
    std::vector<std::string> notes;
};

// Ops and kernels match by name (and device); graph nodes through their
// origins when both runs carry compiled kernels of one captured graph, and an
// eager run's ops through their position in the captured graph when its
// outermost ops of each step replay the graph's calls in order. Rows are
// sorted by |delta|, largest first.
RunComparison compareRuns(const CompareSide &base, const CompareSide &other);

// The captured graph's call nodes (every capture segment, in order), as an
// eager run's outermost ops of one step would call them.
struct CapturedCall {
    int id = 0;
    std::string name;   // the node's name
    std::string target; // "aten.linear"
};
std::vector<CapturedCall> capturedCalls(const Run &run);

} // namespace fusescope::profiler
