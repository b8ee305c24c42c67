#pragma once
// The range statistics of a timeline selection: per event name, how many
// events overlap [t0, t1] and how much of the range they cover, each clipped
// to the range. Qt-free, so the CLI or a test can ask the same question.

#include "views/timelinemodel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusescope {

struct RangeStatRow {
    std::string name;
    profiler::EventKind kind = profiler::EventKind::Op; // of the first event seen with this name
    int64_t count = 0;
    int64_t totalNs = 0;  // clipped to the range; nested events each count their own time
    double percent = 0;   // totalNs / (t1 - t0) × 100
};

// Events overlap the range when they share time with it (an instant: when it
// lies inside it). Rows by totalNs, longest first, then by name. `tracks`,
// when not empty, limits the statistics to those display tracks.
std::vector<RangeStatRow> timelineRangeStats(const TimelineModel &model, int64_t t0, int64_t t1,
                                             const std::vector<int> &tracks = {});

} // namespace fusescope
