// Text-level helpers of the Kineto importer (see kinetotext.h).

#include "profiler/kinetotext.h"

#include "profiler/kinetoimport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

namespace fusescope::profiler::kineto {

namespace {

// Eight digits to their value: neighbours pair up into 0-99, then the pairs
// into two halves of 0-9999 each, then those, by three multiplications.
uint64_t eightDigitsValue(uint64_t x)
{
    x -= 0x3030303030303030ull;
    x = x * 10 + (x >> 8);
    constexpr uint64_t kLowPairs = 0x000000ff000000ffull;
    return (((x & kLowPairs) * (100 + (1000000ull << 32))) + (((x >> 16) & kLowPairs) * (1 + (10000ull << 32))))
        >> 32;
}

// The value of `count` (at most 19) digits at p.
uint64_t digitsValue(const char *p, size_t count)
{
    uint64_t v = 0;
    for (; count >= 8; count -= 8, p += 8)
        v = v * 100'000'000 + eightDigitsValue(load8(p));
    for (; count; --count)
        v = v * 10 + uint64_t(*p++ - '0');
    return v;
}

} // namespace

// "0x7f3a…", "140…" or a JSON number.
bool parseAddress(std::string_view text, uint64_t &out)
{
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        const char *end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data() + 2, end, out, 16);
        return ec == std::errc() && p == end;
    }
    return parseInt(text, out);
}

// "[128, 1, 1]" → {128, 1, 1}.
bool parseDims(std::string_view text, int32_t (&dims)[3])
{
    const char *p = text.data();
    const char *end = p + text.size();
    for (int i = 0; i < 3; ++i) {
        while (p < end && (*p == '[' || *p == ',' || *p == ' '))
            ++p;
        auto [next, ec] = std::from_chars(p, end, dims[i]);
        if (ec != std::errc())
            return false;
        p = next;
    }
    while (p < end && *p == ' ')
        ++p;
    return p + 1 == end && *p == ']';
}

void appendJsonString(std::string &out, std::string_view s)
{
    out.push_back('"');
    // Keys and values rarely need an escape: the text goes in whole.
    const auto plain = [](char c) { return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20; };
    if (std::all_of(s.begin(), s.end(), plain)) {
        out.append(s);
        out.push_back('"');
        return;
    }
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out.push_back('\\');
        if (static_cast<unsigned char>(c) < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\u00";
            out.push_back(kHex[(c >> 4) & 0xf]);
            out.push_back(kHex[c & 0xf]);
            continue;
        }
        out.push_back(c);
    }
    out.push_back('"');
}

EventKind kindOf(std::string_view cat, std::string_view name)
{
    if (name.starts_with("ProfilerStep#"))
        return EventKind::Step;
    static const std::unordered_map<std::string_view, EventKind> kinds = {
        {"cpu_op", EventKind::Op}, {"Operator", EventKind::Op}, {"op", EventKind::Op},
        {"kernel", EventKind::Kernel}, {"Kernel", EventKind::Kernel},
        {"gpu_memcpy", EventKind::Memcpy}, {"Memcpy", EventKind::Memcpy}, {"memcpy", EventKind::Memcpy},
        {"gpu_memset", EventKind::Memset}, {"Memset", EventKind::Memset}, {"memset", EventKind::Memset},
        {"cuda_runtime", EventKind::Runtime}, {"Runtime", EventKind::Runtime}, {"runtime", EventKind::Runtime},
        {"cuda_driver", EventKind::Runtime}, {"cuda_sync", EventKind::Runtime},
        {"compile_stage", EventKind::CompileStage}, {"step", EventKind::Step}, {"instant", EventKind::Instant},
    };
    // user_annotation, gpu_user_annotation, python_function (Python frames are
    // not framework ops: as ops they would be counted into the op totals) and
    // any category not listed are user ranges.
    const auto it = kinds.find(cat);
    return it == kinds.end() ? EventKind::UserRange : it->second;
}

bool isGpuKind(EventKind kind)
{
    return kind == EventKind::Kernel || kind == EventKind::Memcpy || kind == EventKind::Memset;
}

// "Memcpy HtoD (Pageable -> Device)" and the like.
CopyKind copyKindOf(std::string_view name)
{
    static constexpr std::pair<std::string_view, CopyKind> kinds[] = {
        {"HtoD", CopyKind::HostToDevice}, {"DtoH", CopyKind::DeviceToHost}, {"DtoD", CopyKind::DeviceToDevice},
        {"HtoH", CopyKind::HostToHost}, {"PtoP", CopyKind::PeerToPeer}};
    for (const auto &[tag, kind] : kinds) {
        if (name.find(tag) != std::string_view::npos)
            return kind;
    }
    return CopyKind::Unknown;
}

FlowKind flowKindOf(std::string_view cat, std::string_view name)
{
    if (equals(cat, "ac2g") || (equals(cat, "async") && equals(name, "launch")) || equals(cat, "launch"))
        return FlowKind::Launch;
    return equals(cat, "fwdbwd") ? FlowKind::ForwardBackward : FlowKind::User;
}

namespace {

// Exponent forms are rare (no profiler writes them); they go through double.
// The caller has checked the text's grammar.
bool exponentMicrosToNs(std::string_view text, int64_t &ns)
{
    double us = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), us);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(us)
        || std::fabs(us) > 9.2e15)
        return false;
    ns = std::llround(us * 1000.0);
    return true;
}

// The first three fraction digits are the ns; a fourth of 5 or more rounds up.
int64_t fractionNs(const char *digits, size_t count)
{
    int64_t sub = 0;
    for (size_t i = 0; i < 3; ++i)
        sub = sub * 10 + (i < count ? digits[i] - '0' : 0);
    return sub + (count > 3 && digits[3] >= '5');
}

} // namespace

// One pass over the text, in JSON's number grammar: the time fields are the
// most frequent numbers of a trace.
const char *microsPrefixToNs(const char *p, const char *end, int64_t &ns)
{
    const char *const first = p;
    const bool negative = p != end && *p == '-';
    p += negative;
    const char *whole = p;
    p = skipDigits(p, end);
    const size_t count = size_t(p - whole);
    if (count == 0 || (*whole == '0' && count > 1))
        return nullptr;
    int64_t us = 0;
    if (count <= 18) // fits in int64_t unchecked
        us = int64_t(digitsValue(whole, count));
    else if (!parseInt(std::string_view(whole, count), us))
        return nullptr;
    int64_t sub = 0;
    if (p != end && *p == '.') {
        const char *fraction = ++p;
        p = skipDigits(p, end);
        if (p == fraction)
            return nullptr;
        sub = fractionNs(fraction, size_t(p - fraction));
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
        ++p;
        p += p != end && (*p == '+' || *p == '-');
        const char *const exponent = p;
        p = skipDigits(p, end);
        if (p == exponent)
            return nullptr;
        return exponentMicrosToNs(std::string_view(first, size_t(p - first)), ns) ? p : nullptr;
    }
    int64_t result = 0;
    if (__builtin_mul_overflow(us, int64_t(1000), &result) || __builtin_add_overflow(result, sub, &result))
        return nullptr;
    ns = negative ? -result : result;
    return p;
}

bool microsTextToNs(std::string_view text, int64_t &ns)
{
    const char *end = text.data() + text.size();
    int64_t value = 0;
    if (microsPrefixToNs(text.data(), end, value) != end)
        return false;
    ns = value;
    return true;
}

} // namespace fusescope::profiler::kineto
