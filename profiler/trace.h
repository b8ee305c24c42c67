#pragma once
// A trace in memory: what the recorder produces, what the store reads back,
// and what statistics, exporters and views consume.

#include "core/compiler/compile.h"
#include "profiler/events.h"

#include <string>
#include <string_view>
#include <vector>

namespace fusescope::profiler {

// Interned strings of one trace; id = index. Id 0 is always "".
class StringTable
{
public:
    StringTable() { m_strings.emplace_back(); }
    const std::string &operator[](StringId id) const
    {
        return id.valid() && id.value < m_strings.size() ? m_strings[id.value] : m_strings[0];
    }
    size_t size() const { return m_strings.size(); }
    // Appends without deduplication: for readers that get ids from a file.
    void push(std::string s) { m_strings.push_back(std::move(s)); }
    StringId intern(std::string_view s);

private:
    size_t slotOf(std::string_view s, uint32_t hash) const;
    void index(uint32_t id);
    void growIndex();

    std::vector<std::string> m_strings;
    // Open addressing over ids, so a copied table's index stays right: each
    // slot is 0 (empty) or the string's 32-bit hash above its id. Interning
    // is most of an import's work per event (every args JSON is interned).
    std::vector<uint64_t> m_slots;
    size_t m_indexed = 0;
};

// The compile stages, code and fusion decisions a compiled run carries.
using CompileStages = std::vector<compiler::CompileStage>;

struct RunInfo {
    std::string name;        // "eager", "compiled", or what the user chose
    std::string model;       // zoo model, ONNX file, or the imported trace's source
    std::string mode;        // "eager" | "compiled" | "imported"
    int64_t originNs = 0;    // the profiler clock at the run's time 0
    int64_t wallStartUnixNs = 0;
    std::string options;     // "record_shapes=1 profile_memory=1 with_flops=1 schedule=0,1,3,1"
};

struct RunSummary {
    int64_t durationNs = 0;
    int64_t events = 0;
    int64_t steps = 0;
    int64_t droppedEvents = 0; // lost to a full buffer
    bool complete = true;      // false: the capture was cut short (crash, kill)
};

struct Run {
    RunInfo info;
    RunSummary summary;
    std::vector<Track> tracks;       // index = TrackId
    std::vector<Event> events;       // index = EventId; batch after batch, each sorted by (track, start)
    std::vector<EventArgs> args;     // index = ArgsId
    std::vector<Allocation> allocations; // in time order
    std::vector<Flow> flows;
    std::vector<CounterSample> counters;
    CompileStages stages;

    const Event &event(EventId id) const { return events[id.value]; }
};

// Facts about the machine and program that wrote the trace.
struct TraceMeta {
    int schemaVersion = 0;
    std::string producer;     // "fusescope 0.1.0"
    std::string host;
    std::string cpuModel;
    std::string gpu;          // "" when none
    std::string createdUtc;   // ISO 8601
    std::string commandLine;
};

struct Trace {
    TraceMeta meta;
    StringTable strings;
    std::vector<Run> runs;
};

// What a drain of the recorder hands on: events [firstEvent, firstEvent +
// events.size()) of the current run, plus what appeared since the last batch.
struct EventBatch {
    uint32_t firstEvent = 0;
    uint32_t firstArgs = 0;
    std::vector<Event> events;   // sorted by (track, start)
    std::vector<EventArgs> args;
    std::vector<Allocation> allocations;
    std::vector<Flow> flows;
    std::vector<CounterSample> counters;
    std::vector<Track> newTracks;
    // Strings with ids [firstString, firstString + newStrings.size()); a sink
    // appends those it does not have yet (ids are the same in every sink).
    uint32_t firstString = 0;
    std::vector<std::string> newStrings;
};

// Receives a recording as it happens: the trace store's writer, or an
// in-memory collector. Called from the recorder's drain thread.
class TraceSink
{
public:
    virtual ~TraceSink() = default;
    virtual void beginRun(const RunInfo &info) = 0;
    virtual void write(EventBatch &&batch) = 0;
    virtual void endRun(const RunSummary &summary) = 0;
};

// Keeps every run in memory (tests, `on_trace_ready` callbacks, the CLI's report).
class TraceCollector final : public TraceSink
{
public:
    void beginRun(const RunInfo &info) override;
    void write(EventBatch &&batch) override;
    void endRun(const RunSummary &summary) override;
    Trace &trace() { return m_trace; }

private:
    Trace m_trace;
};

} // namespace fusescope::profiler
