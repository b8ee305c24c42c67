#pragma once
// The event model every backend, importer, the trace store and the views
// share: compact POD records indexed by typed ids. Times are nanoseconds on
// the profiler's clock, relative to the run's origin.

#include <compare>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace fusescope::profiler {

// An index that cannot be mixed up with another kind of index.
template <typename Tag, typename Rep = uint32_t>
struct TypedId {
    static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();
    Rep value = kInvalid;

    constexpr TypedId() = default;
    constexpr explicit TypedId(Rep v) : value(v) {}
    constexpr bool valid() const { return value != kInvalid; }
    constexpr auto operator<=>(const TypedId &) const = default;
};

using StringId = TypedId<struct StringTag>;  // into the trace's interned strings
using TrackId = TypedId<struct TrackTag, uint16_t>;
using EventId = TypedId<struct EventTag>;    // into Run::events, stable in the file
using ArgsId = TypedId<struct ArgsTag>;      // into Run::args

enum class EventKind : uint8_t {
    Op,           // a framework op (aten.add), range
    UserRange,    // RecordScope / user annotation, range
    CompileStage, // one compiler stage, range
    Step,         // ProfilerStep#N, range
    Kernel,       // eager CPU kernel, BLAS call, fused compiled kernel, GPU kernel
    Memcpy,
    Memset,
    Runtime,      // CUDA runtime/driver call (imported or CUPTI)
    Instant,      // recompile, graph break, user marker
};
constexpr int kEventKindCount = 9;
const char *eventKindName(EventKind kind);

// One range, kernel, copy or instant: 40 bytes, so 10 M events fit in 400 MB.
struct Event {
    int64_t start = 0;    // ns since the run's origin
    int64_t duration = 0; // ns; 0 for instants
    StringId name;
    StringId detail;      // op: input shapes; kernel: graph-node origins "3,5,9"; instant: its text
    ArgsId args;          // kind-specific extras (device, stream, grid …), when any
    float flops = 0;      // estimated by the op registry's cost rule
    float bytes = 0;      // estimated bytes read + written
    TrackId track;
    EventKind kind = EventKind::Op;
    uint8_t depth = 0;    // nesting level on its track, 0 = outermost

    int64_t end() const { return start + duration; }
};
static_assert(sizeof(Event) == 40 && std::is_trivially_copyable_v<Event>);

enum class CopyKind : uint8_t { Unknown, HostToDevice, DeviceToHost, DeviceToDevice, HostToHost, PeerToPeer };
const char *copyKindName(CopyKind kind);

// What only some events carry; CPU-recorded events usually have none.
struct EventArgs {
    int64_t correlation = -1; // runtime call ↔ kernel, CUPTI / Kineto correlation id
    int64_t externalId = -1;  // framework op id (Kineto "External id")
    int32_t device = -1;
    int32_t stream = -1;
    int32_t grid[3] = {0, 0, 0};
    int32_t block[3] = {0, 0, 0};
    CopyKind copyKind = CopyKind::Unknown;
    bool pinned = false;      // memcpy from page-locked host memory
    StringId extra;           // any other arguments, as one JSON object
};

// One allocation (bytes > 0) or free (bytes < 0).
struct Allocation {
    int64_t time = 0;          // ns since the run's origin
    uint64_t address = 0;
    int64_t bytes = 0;
    int64_t allocatedAfter = 0; // bytes handed out to tensors after this event
    int64_t reservedAfter = 0;  // bytes held by the allocator after this event
    EventId op;                 // the op or kernel running when it happened, if any
    TrackId track;
    int16_t device = -1;        // -1 = CPU, otherwise the GPU index
};
static_assert(std::is_trivially_copyable_v<Allocation>);

enum class FlowKind : uint8_t { User, Launch, ForwardBackward };
const char *flowKindName(FlowKind kind);

// An arrow between two events: launch → kernel, producer → consumer.
struct Flow {
    uint64_t id = 0;
    EventId from;
    EventId to;
    FlowKind kind = FlowKind::User;
};

struct CounterSample {
    int64_t time = 0; // ns since the run's origin
    double value = 0;
    TrackId track;
};

enum class TrackKind : uint8_t { CpuThread, CompileStages, GpuStream, Counter };
const char *trackKindName(TrackKind kind);

struct Track {
    TrackId id;
    TrackKind kind = TrackKind::CpuThread;
    StringId name;
    int64_t pid = 0;    // process, or rank for multi-rank imports
    int64_t tid = 0;    // thread, or stream
    int32_t device = -1;
    int32_t sortIndex = 0;
};

} // namespace fusescope::profiler
