#pragma once
// A strict JSON reader that walks a document once, front to back, checking
// every byte's grammar as it goes, and hands out the text of what it reads:
// keys and strings as views into the buffer (unescaped only when they have an
// escape), numbers as their tokens. It builds nothing and keeps no index, so
// reading a trace costs one pass over its bytes (simdjson's On Demand first
// indexed every structural character of the file, then walked the index).
//
// The buffer must be followed by at least kJsonPadding readable zero bytes:
// scans stop at the first NUL instead of checking the end at every byte.
// UTF-8 is not checked here; callers validate the whole buffer once.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fusescope::profiler::kineto {

inline constexpr size_t kJsonPadding = 64;

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

// What is wrong and where: `at` points into the buffer (its end when cut short).
struct JsonError {
    const char *at;
    std::string what;
};

enum class JsonType : uint8_t { Object, Array, String, Number, Literal, None };

// Unescaped strings, kept until the document is read (views of them are
// handed out). Blocks never move.
class StringArena
{
public:
    char *allocate(size_t bytes);

private:
    std::vector<std::unique_ptr<char[]>> m_blocks;
    size_t m_left = 0;
    char *m_next = nullptr;
};

class JsonCursor
{
public:
    JsonCursor(const char *begin, const char *end, StringArena &arena) : m_begin(begin), m_end(end), m_p(begin), m_arena(arena)
    {
    }

    const char *begin() const { return m_begin; }
    const char *end() const { return m_end; }
    // Where the next value starts (whitespace skipped).
    const char *position()
    {
        skipSpace();
        return m_p;
    }

    // The type of the next value, from its first byte; None for a byte that
    // starts no value (reading it then reports the error).
    JsonType type()
    {
        skipSpace();
        switch (*m_p) {
        case '{': return JsonType::Object;
        case '[': return JsonType::Array;
        case '"': return JsonType::String;
        case 't':
        case 'f':
        case 'n': return JsonType::Literal;
        default: return (*m_p == '-' || static_cast<unsigned char>(*m_p - '0') < 10) ? JsonType::Number : JsonType::None;
        }
    }

    // Calls onField(key) for each field; it must read (or skip) the value.
    template <typename OnField>
    void object(OnField &&onField)
    {
        unsigned slot = unsigned(m_depth + 1) % kFirstKeySlots; // by depth: events and their args start differently
        members('{', '}', "',' or '}' in an object", [&] { onField(key(slot)); });
    }

    // Calls onElement() for each element; it must read (or skip) it.
    template <typename OnElement>
    void array(OnElement &&onElement)
    {
        members('[', ']', "',' or ']' in an array", onElement);
    }

    // A string's characters: a view into the buffer when it has no escape,
    // else unescaped into the arena.
    std::string_view string()
    {
        skipSpace();
        if (*m_p != '"')
            failHere("a string");
        const char *const first = ++m_p;
        const char *stop = findStringStop(m_p);
        if (*stop == '"') {
            m_p = stop + 1;
            return {first, size_t(stop - first)};
        }
        return unescapeFrom(first, stop);
    }

    // A number's token, its grammar checked. Plain integers (ids, pids, most
    // args) take the short way.
    std::string_view number()
    {
        skipSpace();
        const char *const first = m_p;
        if (static_cast<unsigned char>(*first - '1') < 9) {
            const char *const p = skipDigits(first + 1, m_end);
            if (endsValue(p) && p - first <= 308) {
                m_p = p;
                return {first, size_t(p - first)};
            }
        }
        return numberInFull();
    }

    // A number that `parse(first, end)` reads itself (times, converted in one
    // pass), returning where it stopped, or null. False when it failed or
    // stopped where no value may end; the reader has not moved then, and
    // number() says what is wrong, if the grammar is.
    template <typename Parse>
    bool number(Parse &&parse)
    {
        skipSpace();
        const char *const stop = parse(m_p, m_end);
        if (!stop || !endsValue(stop))
            return false;
        m_p = stop;
        return true;
    }
    // Skips any value, checking it; returns its text.
    std::string_view skip();
    // The text read since `first` (a position()).
    std::string_view textFrom(const char *first) const { return {first, size_t(m_p - first)}; }
    // After the document's value: only whitespace may follow.
    bool atEnd()
    {
        skipSpace();
        return m_p == m_end;
    }

    [[noreturn]] void fail(const char *at, std::string what) const;

private:
    static bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
    // Whether a scalar may end where p is.
    bool endsValue(const char *p) const { return isSpace(*p) || *p == ',' || *p == '}' || *p == ']' || p == m_end; }

    void skipSpace()
    {
        while (isSpace(*m_p))
            ++m_p;
    }

    // Past the closing bracket of the array or object being read.
    void leave()
    {
        ++m_p;
        --m_depth;
    }

    void enter(char open)
    {
        skipSpace();
        if (*m_p != open)
            failHere(open == '{' ? "an object" : "an array");
        if (++m_depth > kMaxDepth)
            fail(m_p, "invalid JSON: arrays and objects nested more than 1000 deep");
        ++m_p;
    }

    // The first '"', '\\' or control character (NUL ends the buffer) from p.
    static const char *findStringStop(const char *p)
    {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1f);
        for (;; p += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
            const __m128i hits = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                                              _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
            if (const int mask = _mm_movemask_epi8(hits))
                return p + __builtin_ctz(unsigned(mask));
        }
#else
        while (*p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20)
            ++p;
        return p;
#endif
    }

    // An object's or an array's members, comma-separated, each read by
    // onMember (which skips the whitespace before it), then the bracket.
    template <typename OnMember>
    void members(char open, char close, const char *expected, OnMember &&onMember)
    {
        enter(open);
        skipSpace();
        if (*m_p == close)
            return leave();
        for (;;) {
            onMember();
            skipSpace();
            if (*m_p == ',') {
                ++m_p;
                continue;
            }
            if (*m_p != close)
                failHere(expected);
            return leave();
        }
    }

    // ---- keys, guessed ----
    // Every byte's position in a document depends on the bytes before it, so
    // reading is a chain of latencies: finding a key's closing quote waits on
    // a load, compares and a bit scan (about 16 cycles), and skipping
    // whitespace adds a step a byte. The keys of a trace's events repeat in
    // the same order and layout, so each key is guessed from the key before
    // it, as the bytes from the comma to its value (`\n    "ts": `): a guess
    // that matches moves the reader by a constant, which the core runs ahead
    // on while the comparison is still being checked. A slot keeps the last
    // two keys that followed its key (a trace's events come in kinds whose
    // fields differ after the first).
    struct KeyGuess {
        char text[32] = {}; // whitespace, `"key":`, whitespace
        uint32_t mask = 1;  // the bytes of text to compare; never matches at first (text[0] is NUL)
        uint8_t size = 0;   // bytes of text
        uint8_t after = 0;  // the slot guessing the key that follows this one
        uint8_t keyAt = 0;  // where the key's characters start in text
        uint8_t keySize = 0;
    };
    struct GuessSlot {
        KeyGuess recent, older;
    };
    static constexpr size_t kGuessSlots = 248;
    static constexpr size_t kFirstKeySlots = 8; // slots for objects' first keys, by depth

    // The key from m_p (whitespace may come first) and the ':' after it, read
    // up to the value; slot becomes the one for the next key.
    std::string_view key(unsigned &slot)
    {
        const GuessSlot &guesses = m_guesses[slot];
        if (matches(guesses.recent))
            return guessed(guesses.recent, slot);
        if (matches(guesses.older))
            return guessed(guesses.older, slot);
        return keyRead(slot);
    }

    std::string_view guessed(const KeyGuess &guess, unsigned &slot)
    {
        const std::string_view key(m_p + guess.keyAt, guess.keySize);
        m_p += guess.size;
        slot = guess.after;
        return key;
    }

    bool matches(const KeyGuess &guess) const
    {
#if defined(__AVX2__)
        // Padding makes 32 bytes readable from any position up to the end.
        const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(m_p));
        const __m256i text = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(guess.text));
        const auto equal = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(bytes, text)));
        return (equal & guess.mask) == guess.mask;
#else
        return guess.size != 0 && std::memcmp(m_p, guess.text, guess.size) == 0;
#endif
    }

    std::string_view keyRead(unsigned &slot);
    const char *stringEnd(const char *p);
    std::string_view unescapeFrom(const char *first, const char *stop);
    std::string_view numberInFull();
    void literal();
    void skipNested();
    [[noreturn]] void failHere(const char *expected) const;

    static constexpr int kMaxDepth = 1000;
    const char *const m_begin;
    const char *const m_end;
    const char *m_p;
    int m_depth = 0;
    StringArena &m_arena;
    GuessSlot m_guesses[kGuessSlots];
};

} // namespace fusescope::profiler::kineto
