#pragma once
// What the Memory view asks of one run's allocations beyond the statistics:
// the allocations live at a moment, the allocation-size histogram and the
// compiler's planned peak. Plain C++, so `fusescope report` can use it too.

#include "profiler/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusescope::profiler {

struct LiveAllocation {
    uint64_t address = 0;
    int64_t bytes = 0;
    int64_t allocTime = 0; // ns since the run's origin
    EventId op; // the op or kernel that made it; invalid when none was running
    std::string opName; // "" when op is invalid
};

// The allocations of `device` made at or before `timeNs` and not freed at or
// before it, largest first (equal sizes: the older first). A free is matched
// to the live allocation at its address on its device; a free with no match
// (the block was allocated before recording started) is ignored. O(n) over
// the allocations up to `timeNs`.
std::vector<LiveAllocation> liveAllocationsAt(const Trace &trace, const Run &run, int device, int64_t timeNs);

// Allocations of sizes [lowerBytes, 2 * lowerBytes); lowerBytes is a power of two.
struct SizeBucket {
    int64_t lowerBytes = 1;
    int64_t count = 0;
    int64_t totalBytes = 0;

    int64_t upperBytes() const { return lowerBytes * 2; } // exclusive
};

struct SizeHistogram {
    int device = -1;
    int64_t allocations = 0; // the sum of the buckets' counts
    // From the smallest to the largest bucket that holds an allocation, with
    // the empty ones between them, so bars stand at even steps of size.
    std::vector<SizeBucket> buckets;
};

// Every allocation (not free) of `device` in its power-of-two bucket. O(n).
SizeHistogram sizeHistogram(const Run &run, int device);

// The devices the run allocated on, ascending (the CPU, -1, first).
std::vector<int> allocationDevices(const Run &run);

// The plannedPeak of the last compile stage of `run` that has one; -1 when
// none does (an eager or imported run).
int64_t plannedPeak(const Run &run);

} // namespace fusescope::profiler
