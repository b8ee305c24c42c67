#pragma once
// The rules behind hints.h, grouped by what they read. hints.cpp lists them;
// each group lives in its own file.

#include "profiler/hints.h"

namespace fusescope::profiler {

// Device timeline: launch-bound, pageable-memcpy, sync-in-step, gpu-idle,
// input-stall, low-occupancy (hintrules_device.cpp).
std::vector<HintRule> deviceHintRules();
// Graph and compiler: unfused-pointwise, missed-fusion, layout, precision,
// memory, recompiles (hintrules_graph.cpp).
std::vector<HintRule> graphHintRules();

} // namespace fusescope::profiler
