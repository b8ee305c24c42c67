#pragma once
// Text-level helpers of the Kineto importer: numbers and times from their JSON
// text, scalar validation, and what categories, names and flow kinds mean.

#include "profiler/events.h"
#include "profiler/jsonscan.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fusescope::profiler::kineto {

// Without the whitespace at its end (thread names are written with some).
inline std::string_view trimRight(std::string_view s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// Equality with a literal whose length the compiler knows, so the comparison
// is inlined (string_view's operator== calls memcmp, a third of the key tests).
template <size_t N>
inline bool equals(std::string_view s, const char (&literal)[N])
{
    return s.size() == N - 1 && __builtin_memcmp(s.data(), literal, N - 1) == 0;
}

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


EventKind kindOf(std::string_view cat, std::string_view name);
bool isGpuKind(EventKind kind);
CopyKind copyKindOf(std::string_view name);
FlowKind flowKindOf(std::string_view cat, std::string_view name);

} // namespace fusescope::profiler::kineto
