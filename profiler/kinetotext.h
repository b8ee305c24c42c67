#pragma once
// Text-level helpers of the Kineto importer: numbers and times from their JSON
// text, scalar validation, and what categories, names and flow kinds mean.

#include "profiler/events.h"

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

// ---- digit runs eight bytes at a time: times and ids are 16-19 digits ----

inline bool isDigit(char c)
{
    return static_cast<unsigned char>(c - '0') < 10;
}

inline uint64_t load8(const char *p)
{
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x; // little-endian: the first character is the lowest byte
}

// The bytes of x that are not ASCII digits, as set bits. A byte is a digit
// when its high nibble is 3 and stays 3 after adding 6 (so it is at most '9').
// A carry out of a byte over 0xf9 disturbs only the bytes after that
// non-digit, so the lowest set byte is always the first non-digit.
inline uint64_t nonDigitBytes(uint64_t x)
{
    constexpr uint64_t kHigh = 0xf0f0f0f0f0f0f0f0ull, kThrees = 0x3030303030303030ull, kSixes = 0x0606060606060606ull;
    return ((x & kHigh) ^ kThrees) | (((x + kSixes) & kHigh) ^ kThrees);
}

// Past the run of digits that starts at p.
inline const char *skipDigits(const char *p, const char *end)
{
    for (; end - p >= 8; p += 8) {
        if (const uint64_t other = nonDigitBytes(load8(p)))
            return p + (__builtin_ctzll(other) >> 3);
    }
    while (p != end && isDigit(*p))
        ++p;
    return p;
}

EventKind kindOf(std::string_view cat, std::string_view name);
bool isGpuKind(EventKind kind);
CopyKind copyKindOf(std::string_view name);
FlowKind flowKindOf(std::string_view cat, std::string_view name);

} // namespace fusescope::profiler::kineto
