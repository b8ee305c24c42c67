#pragma once
// Process-wide interned strings for the recorder: an id is stable for the
// life of the process, so every thread, drain and sink agrees on it. Id 0 is "".

#include "profiler/events.h"

#include <string>
#include <string_view>
#include <vector>

namespace fusescope::profiler::interner {

// Takes a lock: the recorder calls it through per-thread caches, not per event.
StringId intern(std::string_view s);
size_t size();
// Strings with ids [from, size()) at the time of the call.
std::vector<std::string> since(size_t from);

} // namespace fusescope::profiler::interner
