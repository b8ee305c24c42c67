#pragma once
// The recorder's hot path: every thread appends fixed-layout records to its
// own chain of blocks; a drain thread decodes them into events. Recording a
// range costs two timestamp reads and four word stores — no lock, no
// allocation (a new 64 KiB block every few thousand events aside). When the
// profiler is off, a scope costs one relaxed load.

#include "profiler/clock.h"
#include "profiler/events.h"
#include "profiler/interner.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace fusescope::profiler {

namespace record {

enum class Type : uint8_t { Begin = 1, End, Instant, Allocation, Counter, FlowOut, FlowIn };

// End-record flag: the eager op's whole kernel, dropped when finer kernels
// (BLAS calls) were recorded inside it.
constexpr uint8_t kOpKernel = 1;

// Word 1 of every record; word 0 is the timestamp.
constexpr uint64_t header(Type type, EventKind kind, uint32_t payload, uint8_t flags, StringId name)
{
    return static_cast<uint64_t>(type) | static_cast<uint64_t>(kind) << 8 | static_cast<uint64_t>(payload) << 16 |
           static_cast<uint64_t>(flags) << 24 | static_cast<uint64_t>(name.value) << 32;
}

struct Block {
    static constexpr uint32_t kWords = 8192;
    std::atomic<uint32_t> used{0};      // published by the producer (release)
    std::atomic<Block *> next{nullptr}; // set after the last word of this block is published
    uint64_t words[kWords];
};

// One thread's records. The producer side is touched by its thread only; the
// consumer side by the drain only; they meet in Block::used and Block::next.
struct ThreadBuffer {
    // Producer and consumer fields on separate cache lines: the drain must
    // not steal the producer's line on every record it decodes.
    alignas(64) Block *tail = nullptr;
    uint32_t tailUsed = 0;
    alignas(64) Block *head = nullptr;
    uint32_t headConsumed = 0;
    std::atomic<uint64_t> dropped{0};
    int64_t tid = 0;
    uint32_t serial = 0; // order of registration, for track order
    char name[16] = {};  // the thread's name when it registered

    ThreadBuffer() = default;
    ~ThreadBuffer();
    ThreadBuffer(const ThreadBuffer &) = delete;
    ThreadBuffer &operator=(const ThreadBuffer &) = delete;

    // Links a new block after the tail; false (and a drop counted) past the memory cap.
    bool grow(uint32_t n);
};

extern std::atomic<bool> g_recording;
extern std::atomic<uint32_t> g_generation;
extern constinit thread_local ThreadBuffer *t_buffer;
extern constinit thread_local uint32_t t_generation;
ThreadBuffer *attachThread(); // registers the calling thread with the current session

inline bool on()
{
    return g_recording.load(std::memory_order_relaxed);
}

inline ThreadBuffer *buffer()
{
    if (t_generation != g_generation.load(std::memory_order_relaxed)) [[unlikely]]
        return attachThread();
    return t_buffer;
}

// Writes one record of 2 + payload words; false when it was dropped. The
// buffer's fields are read once into locals: the record's stores could alias
// them, and reloading them would cost more than the stores.
template <typename Fill>
inline bool write(uint64_t head, uint32_t payload, Fill &&fill)
{
    ThreadBuffer *b = buffer();
    if (!b) [[unlikely]]
        return false;
    const uint32_t n = 2 + payload;
    Block *block = b->tail;
    uint32_t used = b->tailUsed;
    if (used + n > Block::kWords) [[unlikely]] {
        if (!b->grow(n))
            return false;
        block = b->tail;
        used = 0;
    }
    uint64_t *p = block->words + used;
    p[0] = clock::ticks();
    p[1] = head;
    fill(p + 2);
    used += n;
    b->tailUsed = used;
    block->used.store(used, std::memory_order_release);
    return true;
}

inline uint64_t doubleBits(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}

inline bool begin(EventKind kind, StringId name)
{
    return write(header(Type::Begin, kind, 0, 0, name), 0, [](uint64_t *) {});
}

// An end names its range, so an end whose begin was not recorded (the
// profiler started in between) cannot close the wrong range.
inline void end(StringId name)
{
    write(header(Type::End, EventKind::Op, 0, 0, name), 0, [](uint64_t *) {});
}

inline void endWith(StringId name, StringId detail, double flops, double bytes, uint8_t flags = 0)
{
    write(header(Type::End, EventKind::Op, 3, flags, name), 3, [&](uint64_t *q) {
        q[0] = detail.valid() ? detail.value : 0;
        q[1] = doubleBits(flops);
        q[2] = doubleBits(bytes);
    });
}

inline void instant(StringId name, StringId detail)
{
    write(header(Type::Instant, EventKind::Instant, 1, 0, name), 1, [&](uint64_t *q) { q[0] = detail.value; });
}

inline void counter(StringId name, double value)
{
    write(header(Type::Counter, EventKind::Instant, 1, 0, name), 1, [&](uint64_t *q) { q[0] = doubleBits(value); });
}

inline void allocation(const void *address, int64_t bytes, int64_t allocatedAfter, int64_t reservedAfter, int device)
{
    write(header(Type::Allocation, EventKind::Instant, 5, 0, StringId(0)), 5, [&](uint64_t *q) {
        q[0] = reinterpret_cast<uintptr_t>(address);
        q[1] = static_cast<uint64_t>(bytes);
        q[2] = static_cast<uint64_t>(allocatedAfter);
        q[3] = static_cast<uint64_t>(reservedAfter);
        q[4] = static_cast<uint64_t>(static_cast<int64_t>(device));
    });
}

// Flow endpoints bind to the range open on this thread when they are recorded.
inline void flow(Type type, uint64_t id)
{
    write(header(type, EventKind::Instant, 1, 0, StringId(0)), 1, [&](uint64_t *q) { q[0] = id; });
}

} // namespace record

// A user range, like torch.profiler.record_function: recorded when the
// profiler is on, one relaxed load when it is off.
class RecordScope
{
public:
    explicit RecordScope(StringId name, EventKind kind = EventKind::UserRange)
        : m_name(name), m_on(record::on() && record::begin(kind, name))
    {
    }
    // Interns the name under a lock; prefer the StringId form (or
    // FUSESCOPE_RECORD_SCOPE) where it runs often.
    explicit RecordScope(std::string_view name)
        : RecordScope(record::on() ? interner::intern(name) : StringId(0))
    {
    }
    ~RecordScope()
    {
        if (m_on)
            record::end(m_name);
    }
    RecordScope(const RecordScope &) = delete;
    RecordScope &operator=(const RecordScope &) = delete;

private:
    StringId m_name;
    bool m_on;
};

// An instant marker on the calling thread's track.
inline void recordInstant(std::string_view name, std::string_view detail = {})
{
    if (record::on())
        record::instant(interner::intern(name), interner::intern(detail));
}

// A sample of a named counter track.
inline void recordCounter(std::string_view name, double value)
{
    if (record::on())
        record::counter(interner::intern(name), value);
}

// A flow arrow from the range open here to the range open where flowIn(id) is called.
inline void flowOut(uint64_t id)
{
    if (record::on())
        record::flow(record::Type::FlowOut, id);
}
inline void flowIn(uint64_t id)
{
    if (record::on())
        record::flow(record::Type::FlowIn, id);
}

} // namespace fusescope::profiler

#define FUSESCOPE_CONCAT_INNER(a, b) a##b
#define FUSESCOPE_CONCAT(a, b) FUSESCOPE_CONCAT_INNER(a, b)
// A user range whose name is interned once per call site.
#define FUSESCOPE_RECORD_SCOPE(name)                                                                                   \
    static const ::fusescope::profiler::StringId FUSESCOPE_CONCAT(fsRecordId, __LINE__) =                            \
        ::fusescope::profiler::interner::intern(name);                                                                 \
    const ::fusescope::profiler::RecordScope FUSESCOPE_CONCAT(fsRecordScope, __LINE__)(                               \
        FUSESCOPE_CONCAT(fsRecordId, __LINE__))
