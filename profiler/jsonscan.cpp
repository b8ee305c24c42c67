// The JSON reader's slower paths (see jsonscan.h): numbers, literals, nested
// values skipped, escapes, errors.

#include "profiler/jsonscan.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace fusescope::profiler::kineto {

namespace {

constexpr size_t kArenaBlock = size_t(64) << 10;

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The four hex digits after "\u" at p, or -1.
int32_t codeUnit(const char *p)
{
    int32_t unit = 0;
    for (int i = 0; i < 4; ++i) {
        const int digit = hexValue(p[i]);
        if (digit < 0)
            return -1;
        unit = unit * 16 + digit;
    }
    return unit;
}

bool isHighSurrogate(int32_t unit)
{
    return unit >= 0xd800 && unit <= 0xdbff;
}

bool isLowSurrogate(int32_t unit)
{
    return unit >= 0xdc00 && unit <= 0xdfff;
}

char *putUtf8(char *out, uint32_t code)
{
    if (code < 0x80) {
        *out++ = char(code);
    } else if (code < 0x800) {
        *out++ = char(0xc0 | (code >> 6));
        *out++ = char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        *out++ = char(0xe0 | (code >> 12));
        *out++ = char(0x80 | ((code >> 6) & 0x3f));
        *out++ = char(0x80 | (code & 0x3f));
    } else {
        *out++ = char(0xf0 | (code >> 18));
        *out++ = char(0x80 | ((code >> 12) & 0x3f));
        *out++ = char(0x80 | ((code >> 6) & 0x3f));
        *out++ = char(0x80 | (code & 0x3f));
    }
    return out;
}

// A byte's name in messages: printable ASCII as itself, others in hex.
std::string describe(char c)
{
    const auto u = static_cast<unsigned char>(c);
    if (u > 0x20 && u < 0x7f)
        return std::string("'") + c + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", u);
    return std::string("byte ") + hex;
}

// Whether a number token's value is beyond a double's range (it would be
// infinite), as nlohmann::json refuses such numbers; underflow to 0 is fine.
bool overflowsDouble(std::string_view token)
{
    double value = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc::result_out_of_range)
        return false;
    // Out of range either way: overflow when the first significant digit
    // stands left of the point once the exponent is applied.
    const size_t point = std::min(token.find_first_of(".eE"), token.size());
    const size_t firstDigit = token.find_first_of("123456789");
    const std::string_view exponent =
        token.find_first_of("eE") == std::string_view::npos ? "0" : token.substr(token.find_first_of("eE") + 1);
    const bool negativeExponent = exponent.starts_with('-');
    const std::string_view digits = exponent.substr(exponent.find_first_not_of("+-"));
    const long long shift = digits.size() > 9 ? 1'000'000'000 : std::stoll(std::string(digits));
    const long long place = firstDigit < point ? (long long)(point - firstDigit) : -(long long)(firstDigit - point - 1);
    return place + (negativeExponent ? -shift : shift) > 0;
}

} // namespace

char *StringArena::allocate(size_t bytes)
{
    if (bytes > m_left) {
        const size_t size = std::max(bytes, kArenaBlock);
        m_blocks.push_back(std::make_unique<char[]>(size));
        m_next = m_blocks.back().get();
        m_left = size;
    }
    char *out = m_next;
    m_next += bytes;
    m_left -= bytes;
    return out;
}

void JsonCursor::fail(const char *at, std::string what) const
{
    throw JsonError{at, std::move(what)};
}

void JsonCursor::failHere(const char *expected) const
{
    if (m_p >= m_end)
        fail(m_end, m_depth > 0 ? "invalid JSON: the file ends inside an array or object (is it cut short?)"
                                : "invalid JSON: the file ends before its value");
    fail(m_p, std::string("invalid JSON: expected ") + expected + ", found " + describe(*m_p));
}

// JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, then a byte
// that may follow a value. (skipDigits stops at the padding's NUL.)
std::string_view JsonCursor::numberInFull()
{
    const char *const first = m_p;
    const char *p = first + (*first == '-');
    const char *const whole = p;
    p = skipDigits(p, m_end);
    bool ok = p != whole && (*whole != '0' || p == whole + 1);
    bool mayOverflow = p - whole > 308;
    if (ok && *p == '.') {
        const char *fraction = ++p;
        p = skipDigits(p, m_end);
        ok = p != fraction;
    }
    if (ok && (*p == 'e' || *p == 'E')) {
        ++p;
        p += (*p == '+' || *p == '-');
        const char *exponent = p;
        p = skipDigits(p, m_end);
        ok = p != exponent;
        mayOverflow = true;
    }
    if (!ok || !endsValue(p))
        fail(first, p >= m_end ? "invalid JSON: the file ends inside a number (is it cut short?)" : "invalid JSON value");
    if (mayOverflow && overflowsDouble({first, size_t(p - first)}))
        fail(first, "invalid JSON value: the number is beyond a double's range");
    m_p = p;
    return {first, size_t(p - first)};
}

// A key neither guess matched: read in full, then remembered as the slot's
// recent guess when its text up to the value fits one and the key has no
// escapes.
std::string_view JsonCursor::keyRead(unsigned &slot)
{
    const char *const start = m_p;
    skipSpace();
    if (*m_p != '"')
        failHere("a key (a string)");
    const std::string_view key = string();
    skipSpace();
    if (*m_p != ':')
        failHere("':' after a key");
    ++m_p;
    skipSpace();
    GuessSlot &guesses = m_guesses[slot];
    // The first slots guess first keys; the others are chosen by a hash of the key.
    unsigned hash = unsigned(key.size());
    for (const char c : key)
        hash = hash * 31 + static_cast<unsigned char>(c);
    slot = unsigned(kFirstKeySlots + hash % (kGuessSlots - kFirstKeySlots));
    const size_t size = size_t(m_p - start);
    const bool plain = key.data() > m_begin && key.data() < m_end;
    if (plain && size <= sizeof(KeyGuess::text)) {
        guesses.older = guesses.recent;
        KeyGuess &guess = guesses.recent = KeyGuess();
        std::memcpy(guess.text, start, size);
        guess.size = uint8_t(size);
        guess.mask = uint32_t((uint64_t(1) << size) - 1);
        guess.after = uint8_t(slot);
        guess.keyAt = uint8_t(key.data() - start);
        guess.keySize = uint8_t(key.size());
    }
    return key;
}

void JsonCursor::literal()
{
    const char *const first = m_p;
    const std::string_view word = *first == 't' ? "true" : (*first == 'f' ? "false" : "null");
    const char *p = first + word.size();
    // The padding's NUL stops the comparison at the end of the buffer.
    if (std::string_view(first, word.size()) != word || !endsValue(p))
        fail(first, "invalid JSON value");
    m_p = p;
}

std::string_view JsonCursor::skip()
{
    const JsonType t = type();
    const char *const first = m_p;
    switch (t) {
    case JsonType::Object:
    case JsonType::Array: skipNested(); break;
    case JsonType::String: stringEnd(findStringStop(m_p + 1)); break;
    case JsonType::Number: number(); break;
    case JsonType::Literal: literal(); break;
    case JsonType::None: failHere("a value");
    }
    return {first, size_t(m_p - first)};
}

void JsonCursor::skipNested()
{
    if (*m_p == '{')
        object([this](std::string_view) { skip(); });
    else
        array([this] { skip(); });
}

// From the first quote, backslash or control character of a string: checks
// the escapes to the closing quote, which m_p is left after.
const char *JsonCursor::stringEnd(const char *p)
{
    for (;;) {
        if (*p == '"') {
            m_p = p + 1;
            return p;
        }
        if (*p != '\\') {
            if (p >= m_end)
                fail(m_end, "invalid JSON: the file ends inside a string (is it cut short?)");
            fail(p, "invalid JSON: a control character (" + describe(*p) + ") in a string");
        }
        const char c = p[1];
        if (c == 'u') {
            const int32_t unit = codeUnit(p + 2);
            if (unit < 0)
                fail(p, "invalid JSON: a \\u escape without four hex digits");
            if (isLowSurrogate(unit))
                fail(p, "invalid JSON: a \\u escape of a lone low surrogate");
            p += 6;
            if (isHighSurrogate(unit)) {
                if (p[0] != '\\' || p[1] != 'u' || !isLowSurrogate(codeUnit(p + 2)))
                    fail(p - 6, "invalid JSON: a \\u escape of a high surrogate without its low one");
                p += 6;
            }
        } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
            p += 2;
        } else {
            fail(p, "invalid JSON: a bad escape in a string");
        }
        p = findStringStop(p);
    }
}

// The string from `first` (after its opening quote), whose escapes start at
// `stop`, unescaped into the arena; it is never longer than its text.
std::string_view JsonCursor::unescapeFrom(const char *first, const char *stop)
{
    const char *const close = stringEnd(stop);
    char *const out = m_arena.allocate(size_t(close - first));
    char *o = out;
    for (const char *p = first; p < close;) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        const char c = p[1];
        if (c != 'u') {
            static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
            *o++ = kTo[kFrom.find(c)];
            p += 2;
            continue;
        }
        uint32_t code = uint32_t(codeUnit(p + 2));
        p += 6;
        if (isHighSurrogate(int32_t(code))) {
            code = 0x10000 + ((code - 0xd800) << 10) + (uint32_t(codeUnit(p + 2)) - 0xdc00);
            p += 6;
        }
        o = putUtf8(o, code);
    }
    return {out, size_t(o - out)};
}

} // namespace fusescope::profiler::kineto
