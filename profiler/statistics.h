#pragma once
// Statistics over one recorded run: per op, user range, kernel, copy kind,
// graph node and device memory. Shared by `fusescope report`, the GUI's
// Statistics view and the hints. Runs in O(n log n) over the events; nothing
// here keeps per-event state beyond the sort of each track's ranges.

#include "profiler/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusescope::profiler {

// Time and cost of a group of events (the same name, kind or device).
struct TimeStats {
    int64_t calls = 0;
    int64_t totalNs = 0;
    int64_t minNs = 0;
    int64_t maxNs = 0;
    double flops = 0; // summed estimates
    double bytes = 0;

    void add(const Event &event);
    double avgNs() const { return calls ? double(totalNs) / double(calls) : 0.0; }
};

// An op or a user range, by name.
struct RangeStats {
    std::string name;
    TimeStats time;
    // Total time minus the durations of the direct children of kind Op or
    // UserRange (same track, one level deeper, inside the parent's interval).
    // Kernels and runtime calls inside an op stay in its self time: they are
    // the op's own work.
    int64_t selfNs = 0;
    double percent = 0; // time.totalNs as a share of RunStatistics::opTimeNs; 0 for user ranges
};

// A kernel, by name and device: the same kernel on two GPUs is two rows.
struct KernelStats {
    std::string name;
    int32_t device = -1; // -1 = CPU
    TimeStats time;
    // Total time minus the kernels recorded inside it (a compiled GEMM kernel
    // holds its BLAS call), so the self times of a run add up without overlap.
    int64_t selfNs = 0;

    double gflopsPerSecond() const { return time.totalNs ? time.flops / double(time.totalNs) : 0.0; }
    double gigabytesPerSecond() const { return time.totalNs ? time.bytes / double(time.totalNs) : 0.0; }
};

// Copies or sets: how many, how many bytes (the events' estimates), how long.
struct TransferStats {
    int64_t calls = 0;
    double bytes = 0;
    int64_t totalNs = 0;

    void add(const Event &event);
    double gigabytesPerSecond() const { return totalNs ? bytes / double(totalNs) : 0.0; }
};

struct CopyStats {
    CopyKind kind = CopyKind::Unknown;
    TransferStats transfer;
};

// The time of compiled kernels, attributed to the captured graph's nodes.
// Rule: a kernel's detail lists the captured node ids it computes ("3,5,9");
// its duration, flops and bytes are split evenly among them, since the fused
// code does not say which node took how long. Each listed node counts the
// launch once. Kernels whose detail is empty or not such a list are left out.
struct NodeStats {
    int id = 0;
    std::string name;     // the node's name in the capture stage's graph, or "node 3"
    int64_t kernels = 0;  // kernel launches that computed this node
    double timeNs = 0;
    double flops = 0;
    double bytes = 0;
};

struct MemorySample {
    int64_t time = 0;
    int64_t allocated = 0;
    int64_t reserved = 0;
};

// One device's allocator, from the allocations' totals after each event.
struct MemoryStats {
    int device = -1; // -1 = CPU
    int64_t peakAllocated = 0;
    int64_t peakAllocatedTime = 0; // the first time the peak was reached
    int64_t peakReserved = 0;
    int64_t peakReservedTime = 0;
    std::vector<MemorySample> timeline; // one sample per allocation or free, in the run's order
};

struct RunStatistics {
    // Summed over tracks: the time inside outermost ops (ops with no op above
    // them), so nested ops are not counted twice. The base of RangeStats::percent.
    int64_t opTimeNs = 0;
    std::vector<RangeStats> ops;        // by total time, descending
    std::vector<RangeStats> userRanges; // by total time, descending
    TimeStats steps;                    // every Step event together
    std::vector<KernelStats> kernels;   // by total time, descending
    std::vector<CopyStats> copies;      // memcpys per copy kind, in CopyKind order; kinds never seen are absent
    TransferStats memsets;
    std::vector<NodeStats> nodes;       // by time, descending
    std::vector<MemoryStats> memory;    // per device, CPU first
    // What could not be read (a capture graph that is not valid JSON, kernel
    // details that are not origin lists), so partial numbers are not shown as complete.
    std::vector<std::string> warnings;
};

// A compiled kernel's detail, "3,5,9", as the captured node ids it computes;
// nothing when the text is not such a list.
std::optional<std::vector<int>> parseOrigins(std::string_view text);

// The event's extras, or null when it has none (or its ArgsId is out of range).
const EventArgs *argsOf(const Run &run, const Event &event);

// `trace` provides the strings; `run` is one of its runs.
RunStatistics computeStatistics(const Trace &trace, const Run &run);

} // namespace fusescope::profiler
