#pragma once
// Text-level helpers of the Kineto importer: numbers and times from their JSON
// text, scalar validation, and what categories, names and flow kinds mean.

#include "profiler/events.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace fusescope::profiler::kineto {

std::string_view trimRight(std::string_view s);

template <typename Int>
bool parseInt(std::string_view text, Int &out)
{
    const char *end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && p == end;
}

bool parseAddress(std::string_view text, uint64_t &out); // "0x7f3a…", "140…" or a JSON number
bool parseDims(std::string_view text, int32_t (&dims)[3]);  // "[128, 1, 1]" → {128, 1, 1}
void appendJsonString(std::string &out, std::string_view s);

// A JSON scalar token as the file wrote it: a string with valid escapes, a
// number in JSON's grammar, true, false or null.
bool validScalar(std::string_view s);

EventKind kindOf(std::string_view cat, std::string_view name);
bool isGpuKind(EventKind kind);
CopyKind copyKindOf(std::string_view name);
FlowKind flowKindOf(std::string_view cat, std::string_view name);

} // namespace fusescope::profiler::kineto
